package consignprice.service;

import consignprice.entity.ConsignPrice;
import consignprice.repository.ConsignPriceConfigRepository;
import edu.fudan.common.util.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpHeaders;
import org.springframework.stereotype.Service;

import java.math.BigDecimal;
import java.math.RoundingMode;

@Service
public class ConsignPriceServiceImpl implements ConsignPriceService {

    private static final Logger LOGGER = LoggerFactory.getLogger(ConsignPriceServiceImpl.class);

    /** There is one tariff document; it lives at index 0. */
    private static final int CONFIG_INDEX = 0;

    /** Heaviest consignment accepted at the counter, kg. */
    private static final double MAX_WEIGHT_KG = 100.0;

    @Autowired
    private ConsignPriceConfigRepository repository;

    /**
     * price = initialPrice for the first initialWeight kg, plus every further kg at
     * withinPrice (same region) or beyondPrice (other region). With the initial data
     * (2 kg for 8.0, then 2.0 or 4.0 per kg) 10 kg within the region costs 24.00.
     */
    @Override
    public Response getPriceByWeightAndRegion(double weight, boolean isWithinRegion, HttpHeaders headers) {
        if (weight <= 0 || weight > MAX_WEIGHT_KG) {
            return new Response<>(0, "Weight must be in (0, " + MAX_WEIGHT_KG + "] kg", null);
        }
        ConsignPrice priceConfig = repository.findByIndex(CONFIG_INDEX);
        if (priceConfig == null) {
            LOGGER.error("[getPriceByWeightAndRegion] no tariff at index {}", CONFIG_INDEX);
            return new Response<>(0, "No consign price configured", null);
        }
        BigDecimal price = BigDecimal.valueOf(priceConfig.getInitialPrice());
        double extraWeight = weight - priceConfig.getInitialWeight();
        if (extraWeight > 0) {
            double perKg = isWithinRegion ? priceConfig.getWithinPrice() : priceConfig.getBeyondPrice();
            price = price.add(BigDecimal.valueOf(extraWeight).multiply(BigDecimal.valueOf(perKg)));
        }
        return new Response<>(1, "Success", price.setScale(2, RoundingMode.HALF_UP).doubleValue());
    }

    @Override
    public Response queryPriceInformation(HttpHeaders headers) {
        ConsignPrice price = repository.findByIndex(CONFIG_INDEX);
        if (price == null) {
            return new Response<>(0, "No consign price configured", null);
        }
        String text = "The price of weight within " + price.getInitialWeight() + " is " + price.getInitialPrice()
                + ". The price of extra weight within the region is " + price.getWithinPrice()
                + " and beyond the region is " + price.getBeyondPrice() + "\n";
        return new Response<>(1, "Success", text);
    }

    @Override
    public Response createAndModifyPrice(ConsignPrice config, HttpHeaders headers) {
        if (config.getInitialWeight() <= 0 || config.getInitialPrice() < 0
                || config.getWithinPrice() < 0 || config.getBeyondPrice() < config.getWithinPrice()) {
            return new Response<>(0, "Invalid tariff: beyond-region price must not be below within-region", null);
        }
        ConsignPrice stored = repository.findByIndex(CONFIG_INDEX);
        if (stored == null) {
            stored = new ConsignPrice();
            stored.setIndex(CONFIG_INDEX);
        }
        stored.setInitialWeight(config.getInitialWeight());
        stored.setInitialPrice(config.getInitialPrice());
        stored.setWithinPrice(config.getWithinPrice());
        stored.setBeyondPrice(config.getBeyondPrice());
        repository.save(stored);
        return new Response<>(1, "Success", stored);
    }
}
