package cancel.controller;

import cancel.service.CancelService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.web.bind.annotation.*;

import static org.springframework.http.ResponseEntity.ok;

/**
 * Cancelling an order: first the UI asks how much would be refunded ("refound" is the
 * upstream spelling of the path), then it cancels.
 */
@RestController
@RequestMapping("/api/v1/cancelservice")
public class CancelController {

    private static final Logger LOGGER = LoggerFactory.getLogger(CancelController.class);

    @Autowired
    private CancelService cancelService;

    @GetMapping(path = "/welcome")
    public String home(@RequestHeader HttpHeaders headers) {
        return "Welcome to [ Cancel Service ] !";
    }

    @CrossOrigin(origins = "*")
    @GetMapping(path = "/cancel/refound/{orderId}")
    public HttpEntity calculate(@PathVariable String orderId, @RequestHeader HttpHeaders headers) {
        LOGGER.info("[calculate] refund quote for order {}", orderId);
        return ok(cancelService.calculateRefund(orderId, headers));
    }

    @CrossOrigin(origins = "*")
    @GetMapping(path = "/cancel/{orderId}/{loginId}")
    public HttpEntity cancelTicket(@PathVariable String orderId, @PathVariable String loginId,
                                   @RequestHeader HttpHeaders headers) {
        LOGGER.info("[cancelTicket] order {} by {}", orderId, loginId);
        try {
            return ok(cancelService.cancelOrder(orderId, loginId, headers));
        } catch (Exception e) {
            LOGGER.error("[cancelTicket] order {} failed: {}", orderId, e.getMessage());
            return ok(new edu.fudan.common.util.Response<>(0, "error", null));
        }
    }
}
