package preserveOther.controller;

import preserveOther.entity.OrderTicketsInfo;
import preserveOther.service.PreserveOtherService;
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
 * Booking of an ordinary-train (Z/T/K) ticket: seats or sleeper berths.
 */
@RestController
@RequestMapping("/api/v1/preserveotherservice")
public class PreserveOtherController {

    private static final Logger LOGGER = LoggerFactory.getLogger(PreserveOtherController.class);

    /** This service books Z/T/K trips only; the UI sends the others elsewhere. */
    private static final Pattern TRIP_ID = Pattern.compile("^[ZTK][0-9]{1,4}$");

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
            return "Trip " + oti.getTripId() + " is not a Z/T/K trip";
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
