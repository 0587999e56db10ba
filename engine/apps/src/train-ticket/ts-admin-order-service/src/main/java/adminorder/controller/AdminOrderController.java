package adminorder.controller;

import adminorder.entity.Order;
import adminorder.service.AdminOrderService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.security.access.prepost.PreAuthorize;
import org.springframework.web.bind.annotation.*;

import static org.springframework.http.ResponseEntity.ok;

/**
 * Admin view over the orders of both order services: high-speed trains (G/D) live in
 * ts-order-service, every other train in ts-order-other-service.
 */
@RestController
@RequestMapping("/api/v1/adminorderservice")
@PreAuthorize("hasRole('ADMIN')")
public class AdminOrderController {

    private static final Logger LOGGER = LoggerFactory.getLogger(AdminOrderController.class);

    @Autowired
    private AdminOrderService adminOrderService;

    @GetMapping(path = "/welcome")
    public String home(@RequestHeader HttpHeaders headers) {
        return "Welcome to [ AdminOrder Service ] !";
    }

    @CrossOrigin(origins = "*")
    @GetMapping(path = "/adminorder")
    public HttpEntity getAllOrders(@RequestHeader HttpHeaders headers) {
        LOGGER.info("[getAllOrders] merge orders of both order services");
        return ok(adminOrderService.getAllOrders(headers));
    }

    @CrossOrigin(origins = "*")
    @PutMapping(path = "/adminorder")
    public HttpEntity updateOrder(@RequestBody Order request, @RequestHeader HttpHeaders headers) {
        LOGGER.info("[updateOrder] order {} train {} status {}",
                request.getId(), request.getTrainNumber(), request.getStatus());
        return ok(adminOrderService.updateOrder(request, headers));
    }
}
