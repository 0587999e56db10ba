package basic.controller;

import basic.entity.Travel;
import basic.service.BasicService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.web.bind.annotation.*;

import static org.springframework.http.ResponseEntity.ok;

/**
 * Basic travel facts for one trip between two stations: do both stations exist, what
 * train type runs, on which route, and what a seat costs in each class.
 */
@RestController
@RequestMapping("/api/v1/basicservice")
public class BasicController {

    private static final Logger LOGGER = LoggerFactory.getLogger(BasicController.class);

    @Autowired
    private BasicService service;

    @GetMapping(path = "/welcome")
    public String home(@RequestHeader HttpHeaders headers) {
        return "Welcome to [ Basic Service ] !";
    }

    @CrossOrigin(origins = "*")
    @PostMapping(value = "/basic/travel")
    public HttpEntity queryForTravel(@RequestBody Travel info, @RequestHeader HttpHeaders headers) {
        LOGGER.info("[queryForTravel] trip {} from {} to {} on {}", info.getTrip().getTripId(),
                info.getStartingPlace(), info.getEndPlace(), info.getDepartureTime());
        return ok(service.queryForTravel(info, headers));
    }

    @CrossOrigin(origins = "*")
    @GetMapping(value = "/basic/{stationName}")
    public HttpEntity queryForStationId(@PathVariable String stationName, @RequestHeader HttpHeaders headers) {
        LOGGER.info("[queryForStationId] {}", stationName);
        return ok(service.queryForStationId(stationName, headers));
    }
}
