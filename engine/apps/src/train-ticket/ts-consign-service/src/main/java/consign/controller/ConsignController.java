package consign.controller;

import consign.entity.Consign;
import consign.service.ConsignService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.web.bind.annotation.*;

import java.util.UUID;

import static org.springframework.http.ResponseEntity.ok;

/**
 * Luggage consignments attached to an order.
 */
@RestController
@RequestMapping("/api/v1/consignservice")
public class ConsignController {

    private static final Logger LOGGER = LoggerFactory.getLogger(ConsignController.class);

    @Autowired
    private ConsignService service;

    @GetMapping(path = "/welcome")
    public String home(@RequestHeader HttpHeaders headers) {
        return "Welcome to [ Consign Service ] !";
    }

    @PostMapping(value = "/consigns")
    public HttpEntity insertConsign(@RequestBody Consign request, @RequestHeader HttpHeaders headers) {
        LOGGER.info("[insertConsign] order {} weight {} kg", request.getOrderId(), request.getWeight());
        return ok(service.insertConsignRecord(request, headers));
    }

    @PutMapping(value = "/consigns")
    public HttpEntity updateConsign(@RequestBody Consign request, @RequestHeader HttpHeaders headers) {
        LOGGER.info("[updateConsign] consign {} weight {} kg", request.getId(), request.getWeight());
        return ok(service.updateConsignRecord(request, headers));
    }

    @GetMapping(value = "/consigns/account/{id}")
    public HttpEntity findByAccountId(@PathVariable String id, @RequestHeader HttpHeaders headers) {
        return ok(service.queryByAccountId(UUID.fromString(id), headers));
    }

    @GetMapping(value = "/consigns/order/{id}")
    public HttpEntity findByOrderId(@PathVariable String id, @RequestHeader HttpHeaders headers) {
        return ok(service.queryByOrderId(UUID.fromString(id), headers));
    }
}
