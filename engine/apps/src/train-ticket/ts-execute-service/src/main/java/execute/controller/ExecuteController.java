package execute.controller;

import execute.service.ExecuteService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.web.bind.annotation.*;

import static org.springframework.http.ResponseEntity.ok;

/**
 * Station operations on a ticket: collecting it at the counter, then using it at the gate.
 */
@RestController
@RequestMapping("/api/v1/executeservice")
public class ExecuteController {

    private static final Logger LOGGER = LoggerFactory.getLogger(ExecuteController.class);

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
        return ok(executeService.ticketExecute(orderId, headers));
    }

    @CrossOrigin(origins = "*")
    @GetMapping(path = "/execute/collected/{orderId}")
    public HttpEntity collectTicket(@PathVariable String orderId, @RequestHeader HttpHeaders headers) {
        LOGGER.info("[collectTicket] counter collection of order {}", orderId);
        return ok(executeService.ticketCollect(orderId, headers));
    }
}
