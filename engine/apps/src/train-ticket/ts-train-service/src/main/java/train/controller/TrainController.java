package train.controller;

import train.entity.TrainType;
import train.service.TrainService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.web.bind.annotation.*;

import static org.springframework.http.ResponseEntity.ok;

/**
 * Train types: seat counts per class and average speed (km/h).
 */
@RestController
@RequestMapping("/api/v1/trainservice")
public class TrainController {

    private static final Logger LOGGER = LoggerFactory.getLogger(TrainController.class);

    @Autowired
    private TrainService trainService;

    @GetMapping(path = "/trains/welcome")
    public String home(@RequestHeader HttpHeaders headers) {
        return "Welcome to [ Train Service ] !";
    }

    @CrossOrigin(origins = "*")
    @PostMapping(value = "/trains")
    public HttpEntity create(@RequestBody TrainType trainType, @RequestHeader HttpHeaders headers) {
        LOGGER.info("[create] {}: {} economy, {} comfort, {} km/h", trainType.getId(), trainType.getEconomyClass(),
                trainType.getConfortClass(), trainType.getAverageSpeed());
        return ok(trainService.create(trainType, headers));
    }

    @CrossOrigin(origins = "*")
    @GetMapping(value = "/trains/{id}")
    public HttpEntity retrieve(@PathVariable String id, @RequestHeader HttpHeaders headers) {
        return ok(trainService.retrieve(id, headers));
    }

    @CrossOrigin(origins = "*")
    @GetMapping(value = "/trains")
    public HttpEntity query(@RequestHeader HttpHeaders headers) {
        return ok(trainService.query(headers));
    }
}
