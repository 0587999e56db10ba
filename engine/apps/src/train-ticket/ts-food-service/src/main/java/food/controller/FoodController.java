package food.controller;

import food.entity.FoodOrder;
import food.service.FoodService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.web.bind.annotation.*;

import static org.springframework.http.ResponseEntity.ok;

/**
 * Food for a journey: the menu (train food plus station stores along the way) and the
 * food order attached to a ticket order.
 */
@RestController
@RequestMapping("/api/v1/foodservice")
public class FoodController {

    private static final Logger LOGGER = LoggerFactory.getLogger(FoodController.class);

    @Autowired
    private FoodService foodService;

    @GetMapping(path = "/welcome")
    public String home() {
        return "Welcome to [ Food Service ] !";
    }

    @CrossOrigin(origins = "*")
    @PostMapping(path = "/orders")
    public HttpEntity createFoodOrder(@RequestBody FoodOrder addFoodOrder, @RequestHeader HttpHeaders headers) {
        LOGGER.info("[createFoodOrder] order {} food {} type {}", addFoodOrder.getOrderId(),
                addFoodOrder.getFoodName(), addFoodOrder.getFoodType());
        return ok(foodService.createFoodOrder(addFoodOrder, headers));
    }

    @CrossOrigin(origins = "*")
    @GetMapping(path = "/orders/{orderId}")
    public HttpEntity findFoodOrderByOrderId(@PathVariable String orderId, @RequestHeader HttpHeaders headers) {
        return ok(foodService.findByOrderId(orderId, headers));
    }

    @CrossOrigin(origins = "*")
    @GetMapping(path = "/foods/{date}/{startStation}/{endStation}/{tripId}")
    public HttpEntity getAllFood(@PathVariable String date, @PathVariable String startStation,
                                 @PathVariable String endStation, @PathVariable String tripId,
                                 @RequestHeader HttpHeaders headers) {
        LOGGER.info("[getAllFood] {} {} -> {} on {}", tripId, startStation, endStation, date);
        return ok(foodService.getAllFood(date, startStation, endStation, tripId, headers));
    }
}
