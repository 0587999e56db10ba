package preserveOther.controller;

import preserveOther.entity.OrderTicketsInfo;
import preserveOther.service.PreserveOtherService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.web.bind.annotation.*;

import static org.springframework.http.ResponseEntity.ok;

/**
 * Booking of an ordinary-train (Z/T/K) ticket: seats or sleeper berths.
 */
@RestController
@RequestMapping("/api/v1/preserveotherservice")
public class PreserveOtherController {

    private static final Logger LOGGER = LoggerFactory.getLogger(PreserveOtherController.class);

    @Autowired
    private PreserveOtherService preserveService;

    @GetMapping(path = "/welcome")
    public String home() {
        return "Welcome to [ PreserveOther Service ] !";
    }

    @CrossOrigin(origins = "*")
    @PostMapping(value = "/preserveOther")
    public HttpEntity preserve(@RequestBody OrderTicketsInfo oti, @RequestHeader HttpHeaders headers) {
        LOGGER.info("[preserve] account {} trip {} on {} class {}", oti.getAccountId(), oti.getTripId(),
                oti.getDate(), oti.getSeatType());
        return ok(preserveService.preserve(oti, headers));
    }
}
