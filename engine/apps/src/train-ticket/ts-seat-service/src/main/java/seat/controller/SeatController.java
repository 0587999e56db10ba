package seat.controller;

import seat.entity.Seat;
import seat.service.SeatService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.web.bind.annotation.*;

import static org.springframework.http.ResponseEntity.ok;

/**
 * Seat inventory of a trip on a date, for one class and one leg (start to destination
 * station). Not exposed through the UI gateway; travel, travel2, travel-plan, preserve,
 * preserve-other and rebook call it.
 */
@RestController
@RequestMapping("/api/v1/seatservice")
public class SeatController {

    private static final Logger LOGGER = LoggerFactory.getLogger(SeatController.class);

    @Autowired
    private SeatService seatService;

    @GetMapping(path = "/welcome")
    public String home() {
        return "Welcome to [ Seat Service ] !";
    }

    /** Allocates a seat number for a new ticket. */
    @CrossOrigin(origins = "*")
    @PostMapping(value = "/seats")
    public HttpEntity create(@RequestBody Seat seatRequest, @RequestHeader HttpHeaders headers) {
        LOGGER.info("[create] {} on {} class {} {} -> {}", seatRequest.getTrainNumber(), seatRequest.getTravelDate(),
                seatRequest.getSeatType(), seatRequest.getStartStation(), seatRequest.getDestStation());
        return ok(seatService.distributeSeat(seatRequest, headers));
    }

    /** Counts the seats still free for a leg. */
    @CrossOrigin(origins = "*")
    @PostMapping(value = "/seats/left_tickets")
    public HttpEntity getLeftTicketOfInterval(@RequestBody Seat seatRequest, @RequestHeader HttpHeaders headers) {
        return ok(seatService.getLeftTicketOfInterval(seatRequest, headers));
    }
}
