package adminbasic.service;

import adminbasic.entity.PriceInfo;
import edu.fudan.common.util.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Service;
import org.springframework.web.client.RestClientException;
import org.springframework.web.client.RestTemplate;

/**
 * Forwards each admin request to the service that owns the data. Peer addresses are the
 * cluster Service names and ports, hard-coded as everywhere in Train Ticket.
 */
@Service
public class AdminBasicInfoServiceImpl implements AdminBasicInfoService {

    private static final Logger LOGGER = LoggerFactory.getLogger(AdminBasicInfoServiceImpl.class);

    /** Price rates are multipliers on the route distance (km); anything above this is a typo. */
    private static final double MAX_PRICE_RATE = 5.0;

    @Autowired
    private RestTemplate restTemplate;

    @Override
    public Response getAllContacts(HttpHeaders headers) {
        return forwardGet("http://ts-contacts-service:12347/api/v1/contactservice/contacts", headers);
    }

    @Override
    public Response getAllStations(HttpHeaders headers) {
        return forwardGet("http://ts-station-service:12345/api/v1/stationservice/stations", headers);
    }

    @Override
    public Response getAllTrains(HttpHeaders headers) {
        return forwardGet("http://ts-train-service:14567/api/v1/trainservice/trains", headers);
    }

    @Override
    public Response getAllConfigs(HttpHeaders headers) {
        return forwardGet("http://ts-config-service:15679/api/v1/configservice/configs", headers);
    }

    @Override
    public Response getAllPrices(HttpHeaders headers) {
        return forwardGet("http://ts-price-service:16579/api/v1/priceservice/prices", headers);
    }

    @Override
    public Response addPrice(PriceInfo pi, HttpHeaders headers) {
        String problem = validatePrice(pi);
        if (problem != null) {
            LOGGER.warn("[addPrice] rejected: {}", problem);
            return new Response<>(0, problem, null);
        }
        HttpEntity<PriceInfo> requestEntity = new HttpEntity<>(pi, headers);
        try {
            ResponseEntity<Response> re = restTemplate.exchange(
                    "http://ts-price-service:16579/api/v1/priceservice/prices",
                    HttpMethod.POST,
                    requestEntity,
                    Response.class);
            return re.getBody();
        } catch (RestClientException e) {
            LOGGER.error("[addPrice] price service failed: {}", e.getMessage());
            return new Response<>(0, "Price service unavailable", null);
        }
    }

    /**
     * A price config is keyed by (routeId, trainType); the first-class rate must not be
     * below the basic (second-class) rate, and both must be positive.
     */
    String validatePrice(PriceInfo pi) {
        if (pi.getRouteId() == null || pi.getRouteId().isEmpty()) {
            return "Route id is required";
        }
        if (pi.getTrainType() == null || pi.getTrainType().isEmpty()) {
            return "Train type is required";
        }
        if (pi.getBasicPriceRate() <= 0 || pi.getFirstClassPriceRate() <= 0) {
            return "Price rates must be positive";
        }
        if (pi.getBasicPriceRate() > MAX_PRICE_RATE || pi.getFirstClassPriceRate() > MAX_PRICE_RATE) {
            return "Price rate above " + MAX_PRICE_RATE + " per km";
        }
        if (pi.getFirstClassPriceRate() < pi.getBasicPriceRate()) {
            return "First class rate is below the basic rate";
        }
        return null;
    }

    private Response forwardGet(String url, HttpHeaders headers) {
        HttpEntity requestEntity = new HttpEntity(null, headers);
        try {
            ResponseEntity<Response> re = restTemplate.exchange(url, HttpMethod.GET, requestEntity,
                    new ParameterizedTypeReference<Response>() {
                    });
            Response body = re.getBody();
            if (body == null) {
                return new Response<>(0, "Empty answer from " + url, null);
            }
            return body;
        } catch (RestClientException e) {
            LOGGER.error("[forwardGet] {} failed: {}", url, e.getMessage());
            return new Response<>(0, "Upstream unavailable: " + url, null);
        }
    }
}
