package rebook.controller;

import rebook.entity.RebookInfo;
import rebook.service.RebookService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.web.bind.annotation.*;

import static org.springframework.http.ResponseEntity.ok;

/**
 * Changing a paid ticket to another trip or date. When the new ticket is dearer the
 * first call answers status 2 and the UI pays the difference via /rebook/difference.
 */
@RestController
@RequestMapping("/api/v1/rebookservice")
public class RebookController {

    private static final Logger LOGGER = LoggerFactory.getLogger(RebookController.class);

    @Autowired
    private RebookService service;

    @GetMapping(path = "/welcome")
    public String home() {
        return "Welcome to [ Rebook Service ] !";
    }

    @CrossOrigin(origins = "*")
    @PostMapping(value = "/rebook/difference")
    public HttpEntity payDifference(@RequestBody RebookInfo info, @RequestHeader HttpHeaders headers) {
        LOGGER.info("[payDifference] order {} -> trip {} on {}", info.getOrderId(), info.getTripId(), info.getDate());
        return ok(service.payDifference(info, headers));
    }

    @CrossOrigin(origins = "*")
    @PostMapping(value = "/rebook")
    public HttpEntity rebook(@RequestBody RebookInfo info, @RequestHeader HttpHeaders headers) {
        LOGGER.info("[rebook] order {} -> trip {} on {} class {}", info.getOrderId(), info.getTripId(),
                info.getDate(), info.getSeatType());
        return ok(service.rebook(info, headers));
    }
}
