package foodmap.controller;

import foodmap.service.FoodMapService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.web.bind.annotation.*;

import java.util.List;

import static org.springframework.http.ResponseEntity.ok;

/**
 * Catalogue of food: menus served on board each trip, and food stores in each station.
 * Only ts-food-service calls it.
 */
@RestController
@RequestMapping("/api/v1/foodmapservice")
public class FoodMapController {

    private static final Logger LOGGER = LoggerFactory.getLogger(FoodMapController.class);

    @Autowired
    private FoodMapService foodMapService;

    @GetMapping(path = "/welcome")
    public String home() {
        return "Welcome to [ Food Map Service ] !";
    }

    @CrossOrigin(origins = "*")
    @GetMapping("/foodstores")
    public HttpEntity getAllFoodStores(@RequestHeader HttpHeaders headers) {
        return ok(foodMapService.listFoodStores(headers));
    }

    @CrossOrigin(origins = "*")
    @PostMapping("/foodstores")
    public HttpEntity getFoodStoresByStationIds(@RequestBody List<String> stationIdList,
                                                @RequestHeader HttpHeaders headers) {
        LOGGER.info("[getFoodStoresByStationIds] {} stations", stationIdList.size());
        return ok(foodMapService.getFoodStoresByStationIds(stationIdList));
    }

    @CrossOrigin(origins = "*")
    @GetMapping("/trainfoods/{tripId}")
    public HttpEntity getTrainFoodOfTrip(@PathVariable String tripId, @RequestHeader HttpHeaders headers) {
        return ok(foodMapService.listTrainFoodByTripId(tripId, headers));
    }
}
