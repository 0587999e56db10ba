package travelplan.controller;

import travelplan.entity.TransferTravelInfo;
import travelplan.entity.TripInfo;
import travelplan.service.TravelPlanService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.web.bind.annotation.*;

import static org.springframework.http.ResponseEntity.ok;

/**
 * The "advanced search" page: cheapest, quickest and fewest-stops plans with seats left,
 * and two-leg journeys through a transfer station.
 */
@RestController
@RequestMapping("/api/v1/travelplanservice")
public class TravelPlanController {

    private static final Logger LOGGER = LoggerFactory.getLogger(TravelPlanController.class);

    @Autowired
    private TravelPlanService travelPlanService;

    @GetMapping(path = "/welcome")
    public String home() {
        return "Welcome to [ TravelPlan Service ] !";
    }

    @PostMapping(value = "/travelPlan/transferResult")
    public HttpEntity getTransferResult(@RequestBody TransferTravelInfo info, @RequestHeader HttpHeaders headers) {
        LOGGER.info("[getTransferResult] {} -> {} -> {}", info.getFromStationName(), info.getViaStationName(),
                info.getToStationName());
        return ok(travelPlanService.getTransferSearch(info, headers));
    }

    @PostMapping(value = "/travelPlan/cheapest")
    public HttpEntity getByCheapest(@RequestBody TripInfo queryInfo, @RequestHeader HttpHeaders headers) {
        return ok(travelPlanService.getCheapest(queryInfo, headers));
    }

    @PostMapping(value = "/travelPlan/quickest")
    public HttpEntity getByQuickest(@RequestBody TripInfo queryInfo, @RequestHeader HttpHeaders headers) {
        return ok(travelPlanService.getQuickest(queryInfo, headers));
    }

    @PostMapping(value = "/travelPlan/minStation")
    public HttpEntity getByMinStation(@RequestBody TripInfo queryInfo, @RequestHeader HttpHeaders headers) {
        return ok(travelPlanService.getMinStation(queryInfo, headers));
    }
}
