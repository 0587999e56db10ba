package basic.service;

import basic.entity.*;
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
import org.springframework.web.client.RestTemplate;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

@Service
public class BasicServiceImpl implements BasicService {

    private static final Logger LOGGER = LoggerFactory.getLogger(BasicServiceImpl.class);

    @Autowired
    private RestTemplate restTemplate;

    @Override
    public Response queryForTravel(Travel info, HttpHeaders headers) {
        Trip trip = info.getTrip();
        String start = info.getStartingPlace();
        String end = info.getEndPlace();

        // 1. both stations must exist (the UI sends names, routes store ids)
        String startId = queryStationId(start, headers);
        String endId = queryStationId(end, headers);
        if (startId == null || endId == null) {
            return new Response<>(0, "Start place or end place not exist!", null);
        }

        // 2. the train type gives the class capacities
        TrainType trainType = queryTrainType(trip.getTrainTypeId(), headers);
        if (trainType == null) {
            return new Response<>(0, "Train type doesn't exist", null);
        }

        // 3. the route gives the distances
        Route route = getRouteByRouteId(trip.getRouteId(), headers);
        if (route == null) {
            return new Response<>(0, "Route doesn't exist", null);
        }
        int indexStart = route.getStations().indexOf(startId);
        int indexEnd = route.getStations().indexOf(endId);
        if (indexStart < 0 || indexEnd < 0 || indexStart >= indexEnd) {
            // the trip does not pass both stations in travel order
            return new Response<>(0, "Station not in the route or wrong direction", null);
        }

        // 4. the price config of (route, train type) gives the rates
        PriceConfig priceConfig = queryPriceConfigByRouteIdAndTrainType(route.getId(), trainType.getId(), headers);
        if (priceConfig == null) {
            return new Response<>(0, "Price config doesn't exist", null);
        }

        int distance = route.getDistances().get(indexEnd) - route.getDistances().get(indexStart);
        Map<String, String> prices = new HashMap<>();
        prices.put("economyClass", money(distance * priceConfig.getBasicPriceRate()));
        prices.put("confortClass", money(distance * priceConfig.getFirstClassPriceRate()));

        TravelResult result = new TravelResult();
        result.setStatus(true);
        result.setPercent(1.0);
        result.setTrainType(trainType);
        result.setRoute(route);
        result.setPrices(prices);
        return new Response<>(1, "Success", result);
    }

    @Override
    public Response queryForStationId(String stationName, HttpHeaders headers) {
        String id = queryStationId(stationName, headers);
        if (id == null) {
            return new Response<>(0, "Station not exist: " + stationName, null);
        }
        return new Response<>(1, "Success", id);
    }

    /** Prices are shown with two decimals, rounded half-up (CNY fen). */
    static String money(double amount) {
        return new BigDecimal(amount).setScale(2, RoundingMode.HALF_UP).toPlainString();
    }

    private String queryStationId(String stationName, HttpHeaders headers) {
        HttpEntity requestEntity = new HttpEntity(null, headers);
        ResponseEntity<Response<String>> re = restTemplate.exchange(
                "http://ts-station-service:12345/api/v1/stationservice/stations/id/" + stationName,
                HttpMethod.GET,
                requestEntity,
                new ParameterizedTypeReference<Response<String>>() {
                });
        Response<String> body = re.getBody();
        return body != null && body.getStatus() == 1 ? body.getData() : null;
    }

    private TrainType queryTrainType(String trainTypeId, HttpHeaders headers) {
        HttpEntity requestEntity = new HttpEntity(null, headers);
        ResponseEntity<Response<TrainType>> re = restTemplate.exchange(
                "http://ts-train-service:14567/api/v1/trainservice/trains/" + trainTypeId,
                HttpMethod.GET,
                requestEntity,
                new ParameterizedTypeReference<Response<TrainType>>() {
                });
        Response<TrainType> body = re.getBody();
        return body != null ? body.getData() : null;
    }

    private Route getRouteByRouteId(String routeId, HttpHeaders headers) {
        HttpEntity requestEntity = new HttpEntity(null, headers);
        ResponseEntity<Response<Route>> re = restTemplate.exchange(
                "http://ts-route-service:11178/api/v1/routeservice/routes/" + routeId,
                HttpMethod.GET,
                requestEntity,
                new ParameterizedTypeReference<Response<Route>>() {
                });
        Response<Route> body = re.getBody();
        if (body == null || body.getStatus() == 0) {
            LOGGER.warn("[getRouteByRouteId] no route {}", routeId);
            return null;
        }
        List<Integer> distances = body.getData().getDistances();
        if (distances.size() != body.getData().getStations().size()) {
            LOGGER.error("[getRouteByRouteId] route {} has {} stations but {} distances", routeId,
                    body.getData().getStations().size(), distances.size());
            return null;
        }
        return body.getData();
    }

    private PriceConfig queryPriceConfigByRouteIdAndTrainType(String routeId, String trainType, HttpHeaders headers) {
        HttpEntity requestEntity = new HttpEntity(null, headers);
        ResponseEntity<Response<PriceConfig>> re = restTemplate.exchange(
                "http://ts-price-service:16579/api/v1/priceservice/prices/" + routeId + "/" + trainType,
                HttpMethod.GET,
                requestEntity,
                new ParameterizedTypeReference<Response<PriceConfig>>() {
                });
        Response<PriceConfig> body = re.getBody();
        return body != null ? body.getData() : null;
    }
}
