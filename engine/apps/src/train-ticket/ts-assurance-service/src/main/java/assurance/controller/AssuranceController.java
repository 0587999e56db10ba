package assurance.controller;

import assurance.service.AssuranceService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.web.bind.annotation.*;

import static org.springframework.http.ResponseEntity.ok;

/**
 * Travel assurance (insurance) sold with a ticket. One assurance per order.
 */
@RestController
@RequestMapping("/api/v1/assuranceservice")
public class AssuranceController {

    private static final Logger LOGGER = LoggerFactory.getLogger(AssuranceController.class);

    @Autowired
    private AssuranceService assuranceService;

    @GetMapping(path = "/welcome")
    public String home(@RequestHeader HttpHeaders headers) {
        return "Welcome to [ Assurance Service ] !";
    }

    /** The booking page lists the types and their prices. */
    @CrossOrigin(origins = "*")
    @GetMapping(path = "/assurances/types")
    public HttpEntity getAllAssuranceType(@RequestHeader HttpHeaders headers) {
        return ok(assuranceService.getAllAssuranceTypes(headers));
    }

    /** Called by the preserve services after the order exists. */
    @CrossOrigin(origins = "*")
    @GetMapping(path = "/assurances/{typeIndex}/{orderId}")
    public HttpEntity createNewAssurance(@PathVariable int typeIndex, @PathVariable String orderId,
                                         @RequestHeader HttpHeaders headers) {
        LOGGER.info("[createNewAssurance] type {} for order {}", typeIndex, orderId);
        return ok(assuranceService.create(typeIndex, orderId, headers));
    }

    @CrossOrigin(origins = "*")
    @GetMapping(path = "/assurance/orderid/{orderId}")
    public HttpEntity findAssuranceByOrderId(@PathVariable String orderId, @RequestHeader HttpHeaders headers) {
        return ok(assuranceService.findAssuranceByOrderId(orderId, headers));
    }
}
