package travel.controller;

import travel.entity.*;
import travel.service.TravelService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.*;

import java.util.ArrayList;

import static org.springframework.http.ResponseEntity.ok;

/**
 * Trips of high-speed (G) and bullet (D) trains, and the trip search with seats left.
 */
@RestController
@RequestMapping("/api/v1/travelservice")
public class TravelController {

    private static final Logger LOGGER = LoggerFactory.getLogger(TravelController.class);

    @Autowired
    private TravelService travelService;

    @GetMapping(path = "/welcome")
    public String home(@RequestHeader HttpHeaders headers) {
        return "Welcome to [ Travel Service ] !";
    }

    @GetMapping(value = "/train_types/{tripId}")
    public HttpEntity getTrainTypeByTripId(@PathVariable String tripId, @RequestHeader HttpHeaders headers) {
        return ok(travelService.getTrainTypeByTripId(tripId, headers));
    }

    @GetMapping(value = "/routes/{tripId}")
    public HttpEntity getRouteByTripId(@PathVariable String tripId, @RequestHeader HttpHeaders headers) {
        return ok(travelService.getRouteByTripId(tripId, headers));
    }

    @PostMapping(value = "/trips/routes")
    public HttpEntity getTripsByRouteId(@RequestBody ArrayList<String> routeIds, @RequestHeader HttpHeaders headers) {
        return ok(travelService.getTripByRoute(routeIds, headers));
    }

    @CrossOrigin(origins = "*")
    @PostMapping(value = "/trips")
    public HttpEntity<?> createTrip(@RequestBody TravelInfo routeIds, @RequestHeader HttpHeaders headers) {
        LOGGER.info("[createTrip] {}", routeIds.getTripId());
        return new ResponseEntity<>(travelService.create(routeIds, headers), HttpStatus.CREATED);
    }

    /** Search: trips between two stations on a date, with prices and seats left. */
    @CrossOrigin(origins = "*")
    @PostMapping(value = "/trips/left")
    public HttpEntity queryInfo(@RequestBody TripInfo info, @RequestHeader HttpHeaders headers) {
        if (info.getStartingPlace() == null || info.getStartingPlace().length() == 0
                || info.getEndPlace() == null || info.getEndPlace().length() == 0
                || info.getDepartureTime() == null) {
            LOGGER.info("[queryInfo] incomplete query");
            return ok(new ArrayList<TripResponse>());
        }
        LOGGER.info("[queryInfo] {} -> {} on {}", info.getStartingPlace(), info.getEndPlace(), info.getDepartureTime());
        return ok(travelService.query(info, headers));
    }

    @CrossOrigin(origins = "*")
    @PostMapping(value = "/trip_detail")
    public HttpEntity getTripAllDetailInfo(@RequestBody TripAllDetailInfo gtdi, @RequestHeader HttpHeaders headers) {
        return ok(travelService.getTripAllDetailInfo(gtdi, headers));
    }

    @CrossOrigin(origins = "*")
    @GetMapping(value = "/admin_trip")
    public HttpEntity adminQueryAll(@RequestHeader HttpHeaders headers) {
        return ok(travelService.adminQueryAll(headers));
    }
}
