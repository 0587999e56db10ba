package preserve.controller;

import preserve.entity.OrderTicketsInfo;
import preserve.service.PreserveService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.web.bind.annotation.*;

import java.util.UUID;
import java.util.regex.Pattern;

import edu.fudan.common.util.Response;

import static org.springframework.http.ResponseEntity.ok;

/**
 * Booking of a high-speed (G/D) ticket, with optional assurance, food and consignment.
 */
@RestController
@RequestMapping("/api/v1/preserveservice")
public class PreserveController {

    private static final Logger LOGGER = LoggerFactory.getLogger(PreserveController.class);

    /** This service books G/D trips only; the UI sends the others elsewhere. */
    private static final Pattern TRIP_ID = Pattern.compile("^[GD][0-9]{1,4}$");

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
        String problem = checkRequest(oti);
        if (problem != null) {
            LOGGER.warn("[preserve] rejected: {}", problem);
            return ok(new Response<>(0, problem, null));
        }
        return ok(preserveService.preserve(oti, headers));
    }

    /** Rejects malformed bookings before any downstream call is made. */
    static String checkRequest(OrderTicketsInfo oti) {
        try {
            UUID.fromString(oti.getAccountId());
            UUID.fromString(oti.getContactsId());
        } catch (IllegalArgumentException | NullPointerException e) {
            return "Malformed account or contacts id";
        }
        if (oti.getTripId() == null || !TRIP_ID.matcher(oti.getTripId()).matches()) {
            return "Trip " + oti.getTripId() + " is not a G/D trip";
        }
        if (oti.getFrom() == null || oti.getTo() == null || oti.getFrom().equals(oti.getTo())) {
            return "Start and destination must be two different stations";
        }
        if (oti.getDate() == null) {
            return "Travel date is required";
        }
        return null;
    }
}
