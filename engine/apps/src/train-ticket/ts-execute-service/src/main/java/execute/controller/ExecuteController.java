package execute.controller;

import execute.service.ExecuteService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.web.bind.annotation.*;

import edu.fudan.common.util.Response;

import java.util.regex.Pattern;

import static org.springframework.http.ResponseEntity.ok;

/**
 * Station operations on a ticket: collecting it at the counter, then using it at the gate.
 */
@RestController
@RequestMapping("/api/v1/executeservice")
public class ExecuteController {

    private static final Logger LOGGER = LoggerFactory.getLogger(ExecuteController.class);

    /** Order ids are UUIDs; the gate scanners send them lower-case. */
    private static final Pattern ORDER_ID = Pattern.compile("^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$");

    @Autowired
    private ExecuteService executeService;

    @GetMapping(path = "/welcome")
    public String home(@RequestHeader HttpHeaders headers) {
        return "Welcome to [ Execute Service ] !";
    }

    @CrossOrigin(origins = "*")
    @GetMapping(path = "/execute/execute/{orderId}")
    public HttpEntity executeTicket(@PathVariable String orderId, @RequestHeader HttpHeaders headers) {
        LOGGER.info("[executeTicket] gate check for order {}", orderId);
        if (!ORDER_ID.matcher(orderId).matches()) {
            return ok(new Response<>(0, "Malformed order id", orderId));
        }
        return ok(executeService.ticketExecute(orderId, headers));
    }

    @CrossOrigin(origins = "*")
    @GetMapping(path = "/execute/collected/{orderId}")
    public HttpEntity collectTicket(@PathVariable String orderId, @RequestHeader HttpHeaders headers) {
        LOGGER.info("[collectTicket] counter collection of order {}", orderId);
        if (!ORDER_ID.matcher(orderId).matches()) {
            return ok(new Response<>(0, "Malformed order id", orderId));
        }
        return ok(executeService.ticketCollect(orderId, headers));
    }
}
