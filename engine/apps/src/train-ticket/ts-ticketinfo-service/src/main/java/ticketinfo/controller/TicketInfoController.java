package ticketinfo.controller;

import ticketinfo.entity.Travel;
import ticketinfo.service.TicketInfoService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.web.bind.annotation.*;

import edu.fudan.common.util.Response;

import static org.springframework.http.ResponseEntity.ok;

/**
 * Ticket information for the travel services: a facade over ts-basic-service.
 */
@RestController
@RequestMapping("/api/v1/ticketinfoservice")
public class TicketInfoController {

    private static final Logger LOGGER = LoggerFactory.getLogger(TicketInfoController.class);

    /** Station names in the data set are short ("Shang Hai", "Su Zhou"). */
    private static final int MAX_STATION_NAME = 64;

    @Autowired
    private TicketInfoService service;

    @GetMapping(path = "/welcome")
    public String home() {
        return "Welcome to [ TicketInfo Service ] !";
    }

    @PostMapping(value = "/ticketinfo")
    public HttpEntity queryForTravel(@RequestBody Travel info, @RequestHeader HttpHeaders headers) {
        LOGGER.debug("[queryForTravel] trip {} {} -> {}", info.getTrip() == null ? null : info.getTrip().getTripId(),
                info.getStartingPlace(), info.getEndPlace());
        return ok(service.queryForTravel(info, headers));
    }

    @GetMapping(value = "/ticketinfo/{name}")
    public HttpEntity queryForStationId(@PathVariable String name, @RequestHeader HttpHeaders headers) {
        LOGGER.info("[queryForStationId] {}", name);
        if (name.length() > MAX_STATION_NAME) {
            return ok(new Response<>(0, "Station name too long", null));
        }
        return ok(service.queryForStationId(name, headers));
    }
}
