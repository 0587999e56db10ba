package station.controller;

import station.service.StationService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.web.bind.annotation.*;

import java.util.List;

import static org.springframework.http.ResponseEntity.ok;

/**
 * Stations: the UI and users speak names ("Shang Hai"), every other record stores ids
 * ("shanghai"). This service translates both ways.
 */
@RestController
@RequestMapping("/api/v1/stationservice")
public class StationController {

    private static final Logger LOGGER = LoggerFactory.getLogger(StationController.class);

    @Autowired
    private StationService stationService;

    @GetMapping(path = "/welcome")
    public String home(@RequestHeader HttpHeaders headers) {
        return "Welcome to [ Station Service ] !";
    }

    @GetMapping(value = "/stations")
    public HttpEntity query(@RequestHeader HttpHeaders headers) {
        return ok(stationService.query(headers));
    }

    @GetMapping(value = "/stations/id/{stationNameForId}")
    public HttpEntity queryForStationId(@PathVariable(value = "stationNameForId") String stationName,
                                        @RequestHeader HttpHeaders headers) {
        return ok(stationService.queryForId(stationName, headers));
    }

    @CrossOrigin(origins = "*")
    @PostMapping(value = "/stations/namelist")
    public HttpEntity queryForNameBatch(@RequestBody List<String> stationIdList, @RequestHeader HttpHeaders headers) {
        LOGGER.info("[queryForNameBatch] {} ids", stationIdList.size());
        return ok(stationService.queryByIdBatch(stationIdList, headers));
    }

    @CrossOrigin(origins = "*")
    @GetMapping(value = "/stations/name/{stationIdForName}")
    public HttpEntity queryById(@PathVariable(value = "stationIdForName") String stationId,
                                @RequestHeader HttpHeaders headers) {
        return ok(stationService.queryById(stationId, headers));
    }
}
