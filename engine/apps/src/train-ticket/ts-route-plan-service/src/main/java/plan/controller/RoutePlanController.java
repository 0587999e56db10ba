package plan.controller;

import plan.entity.RoutePlanInfo;
import plan.service.RoutePlanService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.web.bind.annotation.*;

import static org.springframework.http.ResponseEntity.ok;

/**
 * Ranks direct trips between two stations across both travel services: cheapest,
 * quickest, or fewest stops.
 */
@RestController
@RequestMapping("/api/v1/routeplanservice")
public class RoutePlanController {

    private static final Logger LOGGER = LoggerFactory.getLogger(RoutePlanController.class);

    @Autowired
    private RoutePlanService routePlanService;

    @GetMapping(path = "/welcome")
    public String home() {
        return "Welcome to [ RoutePlan Service ] !";
    }

    @PostMapping(value = "/routePlan/cheapestRoute")
    public HttpEntity getCheapestRoutes(@RequestBody RoutePlanInfo info, @RequestHeader HttpHeaders headers) {
        LOGGER.info("[getCheapestRoutes] {} -> {} on {}", info.getFormStationName(), info.getToStationName(),
                info.getTravelDate());
        return ok(routePlanService.searchCheapestResult(info, headers));
    }

    @PostMapping(value = "/routePlan/quickestRoute")
    public HttpEntity getQuickestRoutes(@RequestBody RoutePlanInfo info, @RequestHeader HttpHeaders headers) {
        LOGGER.info("[getQuickestRoutes] {} -> {} on {}", info.getFormStationName(), info.getToStationName(),
                info.getTravelDate());
        return ok(routePlanService.searchQuickestResult(info, headers));
    }

    @PostMapping(value = "/routePlan/minStopStations")
    public HttpEntity getMinStopStations(@RequestBody RoutePlanInfo info, @RequestHeader HttpHeaders headers) {
        LOGGER.info("[getMinStopStations] {} -> {}", info.getFormStationName(), info.getToStationName());
        return ok(routePlanService.searchMinStopStations(info, headers));
    }
}
