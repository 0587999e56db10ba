package admintravel.controller;

import admintravel.entity.TravelInfo;
import admintravel.service.AdminTravelService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.security.access.prepost.PreAuthorize;
import org.springframework.web.bind.annotation.*;

import static org.springframework.http.ResponseEntity.ok;

/**
 * Admin view over trips (scheduled runs of a train type on a route). G/D trips are kept
 * by ts-travel-service, Z/T/K trips by ts-travel2-service.
 */
@RestController
@RequestMapping("/api/v1/admintravelservice")
@PreAuthorize("hasRole('ADMIN')")
public class AdminTravelController {

    private static final Logger LOGGER = LoggerFactory.getLogger(AdminTravelController.class);

    @Autowired
    private AdminTravelService adminTravelService;

    @GetMapping(path = "/welcome")
    public String home(@RequestHeader HttpHeaders headers) {
        return "Welcome to [ AdminTravel Service ] !";
    }

    @CrossOrigin(origins = "*")
    @GetMapping(path = "/admintravel")
    public HttpEntity getAllTravels(@RequestHeader HttpHeaders headers) {
        LOGGER.info("[getAllTravels] trips of both travel services");
        return ok(adminTravelService.getAllTravels(headers));
    }

    @CrossOrigin(origins = "*")
    @PostMapping(path = "/admintravel")
    public HttpEntity addTravel(@RequestBody TravelInfo request, @RequestHeader HttpHeaders headers) {
        LOGGER.info("[addTravel] trip {} route {} train type {}", request.getTripId(),
                request.getRouteId(), request.getTrainTypeId());
        return ok(adminTravelService.addTravel(request, headers));
    }
}
