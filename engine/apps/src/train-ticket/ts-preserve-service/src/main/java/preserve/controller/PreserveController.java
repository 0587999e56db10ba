package preserve.controller;

import preserve.entity.OrderTicketsInfo;
import preserve.service.PreserveService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.web.bind.annotation.*;

import static org.springframework.http.ResponseEntity.ok;

/**
 * Booking of a high-speed (G/D) ticket, with optional assurance, food and consignment.
 */
@RestController
@RequestMapping("/api/v1/preserveservice")
public class PreserveController {

    private static final Logger LOGGER = LoggerFactory.getLogger(PreserveController.class);

    @Autowired
    private PreserveService preserveService;

    @GetMapping(path = "/welcome")
    public String home() {
        return "Welcome to [ Preserve Service ] !";
    }

    @CrossOrigin(origins = "*")
    @PostMapping(value = "/preserve")
    public HttpEntity preserve(@RequestBody OrderTicketsInfo oti, @RequestHeader HttpHeaders headers) {
        LOGGER.info("[preserve] account {} trip {} {} -> {} on {} seat type {}", oti.getAccountId(),
                oti.getTripId(), oti.getFrom(), oti.getTo(), oti.getDate(), oti.getSeatType());
        return ok(preserveService.preserve(oti, headers));
    }
}
