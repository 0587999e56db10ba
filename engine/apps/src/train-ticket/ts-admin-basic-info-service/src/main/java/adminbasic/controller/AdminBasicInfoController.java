package adminbasic.controller;

import adminbasic.entity.PriceInfo;
import adminbasic.service.AdminBasicInfoService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.security.access.prepost.PreAuthorize;
import org.springframework.web.bind.annotation.*;

import static org.springframework.http.ResponseEntity.ok;

/**
 * Back-office views over the basic data owned by other services: contacts, stations,
 * trains, configs and price rates. Every endpoint requires ROLE_ADMIN in the JWT.
 */
@RestController
@RequestMapping("/api/v1/adminbasicservice")
@PreAuthorize("hasRole('ADMIN')")
public class AdminBasicInfoController {

    private static final Logger LOGGER = LoggerFactory.getLogger(AdminBasicInfoController.class);

    @Autowired
    private AdminBasicInfoService adminBasicInfoService;

    @GetMapping(path = "/welcome")
    public String home(@RequestHeader HttpHeaders headers) {
        return "Welcome to [ AdminBasicInfo Service ] !";
    }

    @CrossOrigin(origins = "*")
    @GetMapping(path = "/adminbasic/contacts")
    public HttpEntity getAllContacts(@RequestHeader HttpHeaders headers) {
        LOGGER.info("[getAllContacts] admin lists every contact");
        return ok(adminBasicInfoService.getAllContacts(headers));
    }

    @CrossOrigin(origins = "*")
    @GetMapping(path = "/adminbasic/stations")
    public HttpEntity getAllStations(@RequestHeader HttpHeaders headers) {
        LOGGER.info("[getAllStations] admin lists every station");
        return ok(adminBasicInfoService.getAllStations(headers));
    }

    @CrossOrigin(origins = "*")
    @GetMapping(path = "/adminbasic/trains")
    public HttpEntity getAllTrains(@RequestHeader HttpHeaders headers) {
        LOGGER.info("[getAllTrains] admin lists every train type");
        return ok(adminBasicInfoService.getAllTrains(headers));
    }

    @CrossOrigin(origins = "*")
    @GetMapping(path = "/adminbasic/configs")
    public HttpEntity getAllConfigs(@RequestHeader HttpHeaders headers) {
        LOGGER.info("[getAllConfigs] admin lists every config entry");
        return ok(adminBasicInfoService.getAllConfigs(headers));
    }

    @CrossOrigin(origins = "*")
    @GetMapping(path = "/adminbasic/prices")
    public HttpEntity getAllPrices(@RequestHeader HttpHeaders headers) {
        LOGGER.info("[getAllPrices] admin lists every price config");
        return ok(adminBasicInfoService.getAllPrices(headers));
    }

    @CrossOrigin(origins = "*")
    @PostMapping(path = "/adminbasic/prices")
    public HttpEntity addPrice(@RequestBody PriceInfo pi, @RequestHeader HttpHeaders headers) {
        LOGGER.info("[addPrice] route {} train type {} basic rate {} first-class rate {}",
                pi.getRouteId(), pi.getTrainType(), pi.getBasicPriceRate(), pi.getFirstClassPriceRate());
        return ok(adminBasicInfoService.addPrice(pi, headers));
    }
}
