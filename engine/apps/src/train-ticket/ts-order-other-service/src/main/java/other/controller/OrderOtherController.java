package other.controller;

import edu.fudan.common.util.Response;
import edu.fudan.common.util.StringUtils;
import other.entity.Order;
import other.entity.QueryInfo;
import other.entity.Seat;
import other.service.OrderOtherService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.web.bind.annotation.*;

import java.util.Date;
import java.util.UUID;

import static org.springframework.http.ResponseEntity.ok;

/**
 * Orders of ordinary trains: Z (direct express), T (express) and K (fast), with hard and
 * soft seats and sleepers.
 */
@RestController
@RequestMapping("/api/v1/orderOtherService")
public class OrderOtherController {

    private static final Logger LOGGER = LoggerFactory.getLogger(OrderOtherController.class);

    @Autowired
    private OrderOtherService orderService;

    @GetMapping(path = "/welcome")
    public String home() {
        return "Welcome to [ Order Other Service ] !";
    }

    @PostMapping(value = "/orderOther/tickets")
    public HttpEntity getTicketListByDateAndTripId(@RequestBody Seat seatRequest, @RequestHeader HttpHeaders headers) {
        return ok(orderService.getSoldTickets(seatRequest, headers));
    }

    @CrossOrigin(origins = "*")
    @PostMapping(path = "/orderOther")
    public HttpEntity createNewOrder(@RequestBody Order createOrder, @RequestHeader HttpHeaders headers) {
        LOGGER.info("[createNewOrder] {} {} -> {} seat class {}", createOrder.getTrainNumber(),
                createOrder.getFrom(), createOrder.getTo(), createOrder.getSeatClass());
        return ok(orderService.create(createOrder, headers));
    }

    @CrossOrigin(origins = "*")
    @PostMapping(path = "/orderOther/refresh")
    public HttpEntity queryOrdersForRefresh(@RequestBody QueryInfo qi, @RequestHeader HttpHeaders headers) {
        return ok(orderService.queryOrdersForRefresh(qi, qi.getLoginId(), headers));
    }

    @CrossOrigin(origins = "*")
    @GetMapping(path = "/orderOther/{travelDate}/{trainNumber}")
    public HttpEntity calculateSoldTicket(@PathVariable String travelDate, @PathVariable String trainNumber,
                                          @RequestHeader HttpHeaders headers) {
        Date date = StringUtils.String2Date(travelDate);
        if (date == null) {
            return ok(new Response<>(0, "Travel date must be yyyy-MM-dd", travelDate));
        }
        return ok(orderService.queryAlreadySoldOrders(date, trainNumber, headers));
    }

    @CrossOrigin(origins = "*")
    @GetMapping(path = "/orderOther/{orderId}")
    public HttpEntity getOrderById(@PathVariable String orderId, @RequestHeader HttpHeaders headers) {
        return ok(orderService.getOrderById(UUID.fromString(orderId), headers));
    }

    @CrossOrigin(origins = "*")
    @GetMapping(path = "/orderOther/status/{orderId}/{status}")
    public HttpEntity modifyOrder(@PathVariable String orderId, @PathVariable int status,
                                  @RequestHeader HttpHeaders headers) {
        return ok(orderService.modifyOrder(UUID.fromString(orderId), status, headers));
    }

    @CrossOrigin(origins = "*")
    @GetMapping(path = "/orderOther/security/{checkDate}/{accountId}")
    public HttpEntity securityInfoCheck(@PathVariable String checkDate, @PathVariable String accountId,
                                        @RequestHeader HttpHeaders headers) {
        return ok(orderService.checkSecurityAboutOrder(StringUtils.String2Date(checkDate), accountId, headers));
    }

    @CrossOrigin(origins = "*")
    @PutMapping(path = "/orderOther")
    public HttpEntity saveOrderInfo(@RequestBody Order orderInfo, @RequestHeader HttpHeaders headers) {
        return ok(orderService.saveChanges(orderInfo, headers));
    }

    @CrossOrigin(origins = "*")
    @PutMapping(path = "/orderOther/admin")
    public HttpEntity updateOrder(@RequestBody Order order, @RequestHeader HttpHeaders headers) {
        return ok(orderService.updateOrder(order, headers));
    }

    @CrossOrigin(origins = "*")
    @DeleteMapping(path = "/orderOther/{orderId}")
    public HttpEntity deleteOrder(@PathVariable String orderId, @RequestHeader HttpHeaders headers) {
        return ok(orderService.deleteOrder(UUID.fromString(orderId), headers));
    }

    @CrossOrigin(origins = "*")
    @GetMapping(path = "/orderOther")
    public HttpEntity findAllOrder(@RequestHeader HttpHeaders headers) {
        return ok(orderService.getAllOrders(headers));
    }
}
