package route.controller;

import route.entity.RouteInfo;
import route.service.RouteService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.web.bind.annotation.*;

import static org.springframework.http.ResponseEntity.ok;

/**
 * Railway routes: the ordered station ids of a line and the cumulative distance (km)
 * of each station from the first one.
 */
@RestController
@RequestMapping("/api/v1/routeservice")
public class RouteController {

    private static final Logger LOGGER = LoggerFactory.getLogger(RouteController.class);

    @Autowired
    private RouteService routeService;

    @GetMapping(path = "/welcome")
    public String home() {
        return "Welcome to [ Route Service ] !";
    }

    @PostMapping(path = "/routes")
    public HttpEntity createAndModifyRoute(@RequestBody RouteInfo createRouteInfo, @RequestHeader HttpHeaders headers) {
        LOGGER.info("[createAndModifyRoute] {} -> {}", createRouteInfo.getStartStation(), createRouteInfo.getEndStation());
        return ok(routeService.createAndModify(createRouteInfo, headers));
    }

    @DeleteMapping(path = "/routes/{routeId}")
    public HttpEntity deleteRoute(@PathVariable String routeId, @RequestHeader HttpHeaders headers) {
        return ok(routeService.deleteRoute(routeId, headers));
    }

    @GetMapping(path = "/routes/{routeId}")
    public HttpEntity queryById(@PathVariable String routeId, @RequestHeader HttpHeaders headers) {
        return ok(routeService.getRouteById(routeId, headers));
    }

    @GetMapping(path = "/routes")
    public HttpEntity queryAll(@RequestHeader HttpHeaders headers) {
        return ok(routeService.getAllRoutes(headers));
    }

    @GetMapping(path = "/routes/{startId}/{terminalId}")
    public HttpEntity queryByStartAndTerminal(@PathVariable String startId, @PathVariable String terminalId,
                                              @RequestHeader HttpHeaders headers) {
        return ok(routeService.getRouteByStartAndTerminal(startId, terminalId, headers));
    }
}
