package price.service;

import edu.fudan.common.util.Response;
import price.entity.PriceConfig;
import price.repository.PriceConfigRepository;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpHeaders;
import org.springframework.stereotype.Service;

import java.util.List;
import java.util.UUID;

@Service
public class PriceServiceImpl implements PriceService {

    private static final Logger LOGGER = LoggerFactory.getLogger(PriceServiceImpl.class);

    /**
     * Fallback rates when a (route, train type) pair has no config of its own: the
     * initial data uses 0.38 CNY/km (second class) and 1.0 CNY/km (first class) for G/D
     * trains on most routes.
     */
    static final double DEFAULT_BASIC_RATE = 0.38;
    static final double DEFAULT_FIRST_CLASS_RATE = 1.0;

    @Autowired
    private PriceConfigRepository repository;

    @Override
    public Response createNewPriceConfig(PriceConfig createAndModifyPriceConfig, HttpHeaders headers) {
        if (createAndModifyPriceConfig.getBasicPriceRate() <= 0
                || createAndModifyPriceConfig.getFirstClassPriceRate() < createAndModifyPriceConfig.getBasicPriceRate()) {
            return new Response<>(0, "First class rate must be at least the basic rate, both positive", null);
        }
        PriceConfig priceConfig = repository.findByRouteIdAndTrainType(
                createAndModifyPriceConfig.getRouteId(), createAndModifyPriceConfig.getTrainType());
        if (priceConfig == null) {
            priceConfig = new PriceConfig();
            priceConfig.setId(UUID.randomUUID());
        }
        priceConfig.setRouteId(createAndModifyPriceConfig.getRouteId());
        priceConfig.setTrainType(createAndModifyPriceConfig.getTrainType());
        priceConfig.setBasicPriceRate(createAndModifyPriceConfig.getBasicPriceRate());
        priceConfig.setFirstClassPriceRate(createAndModifyPriceConfig.getFirstClassPriceRate());
        repository.save(priceConfig);
        return new Response<>(1, "Create success", priceConfig);
    }

    @Override
    public Response findByRouteIdAndTrainType(String routeId, String trainType, HttpHeaders headers) {
        PriceConfig priceConfig = repository.findByRouteIdAndTrainType(routeId, trainType);
        if (priceConfig == null) {
            LOGGER.warn("[findByRouteIdAndTrainType] no config for route {} train type {}, using defaults",
                    routeId, trainType);
            priceConfig = new PriceConfig();
            priceConfig.setRouteId(routeId);
            priceConfig.setTrainType(trainType);
            priceConfig.setBasicPriceRate(DEFAULT_BASIC_RATE);
            priceConfig.setFirstClassPriceRate(DEFAULT_FIRST_CLASS_RATE);
        }
        return new Response<>(1, "Success", priceConfig);
    }

    @Override
    public Response findAllPriceConfig(HttpHeaders headers) {
        List<PriceConfig> list = repository.findAll();
        if (list == null || list.isEmpty()) {
            return new Response<>(0, "No price config", null);
        }
        return new Response<>(1, "Success", list);
    }
}
