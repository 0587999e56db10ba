package consignprice.controller;

import consignprice.entity.ConsignPrice;
import consignprice.service.ConsignPriceService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.web.bind.annotation.*;

import static org.springframework.http.ResponseEntity.ok;

/**
 * Luggage consignment tariff: a first-weight price plus a per-kg price that depends on
 * whether the destination is in the same region.
 */
@RestController
@RequestMapping("/api/v1/consignpriceservice")
public class ConsignPriceController {

    private static final Logger LOGGER = LoggerFactory.getLogger(ConsignPriceController.class);

    @Autowired
    private ConsignPriceService service;

    @GetMapping(path = "/welcome")
    public String home(@RequestHeader HttpHeaders headers) {
        return "Welcome to [ ConsignPrice Service ] !";
    }

    @GetMapping(value = "/consignprice/{weight}/{isWithinRegion}")
    public HttpEntity getPriceByWeightAndRegion(@PathVariable String weight, @PathVariable String isWithinRegion,
                                                @RequestHeader HttpHeaders headers) {
        LOGGER.info("[getPriceByWeightAndRegion] {} kg, within region: {}", weight, isWithinRegion);
        return ok(service.getPriceByWeightAndRegion(Double.parseDouble(weight),
                Boolean.parseBoolean(isWithinRegion), headers));
    }

    @GetMapping(value = "/consignprice/price")
    public HttpEntity getPriceInfo(@RequestHeader HttpHeaders headers) {
        return ok(service.queryPriceInformation(headers));
    }

    @PostMapping(value = "/consignprice")
    public HttpEntity modifyPriceConfig(@RequestBody ConsignPrice priceConfig, @RequestHeader HttpHeaders headers) {
        LOGGER.info("[modifyPriceConfig] initial {} kg for {}, within {} / beyond {} per kg",
                priceConfig.getInitialWeight(), priceConfig.getInitialPrice(),
                priceConfig.getWithinPrice(), priceConfig.getBeyondPrice());
        return ok(service.createAndModifyPrice(priceConfig, headers));
    }
}
