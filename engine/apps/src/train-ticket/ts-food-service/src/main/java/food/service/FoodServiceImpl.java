package food.service;

import edu.fudan.common.util.Response;
import food.entity.*;
import food.repository.FoodOrderRepository;
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

import java.util.*;

@Service
public class FoodServiceImpl implements FoodService {

    private static final Logger LOGGER = LoggerFactory.getLogger(FoodServiceImpl.class);

    /** foodType 1: served on the train; 2: bought in a station store. */
    private static final int TRAIN_FOOD = 1;
    private static final int STATION_FOOD = 2;

    private static final double MAX_FOOD_PRICE = 500.0;

    @Autowired
    private FoodOrderRepository foodOrderRepository;

    @Autowired
    private RestTemplate restTemplate;

    @Override
    public Response createFoodOrder(FoodOrder addFoodOrder, HttpHeaders headers) {
        if (addFoodOrder.getFoodType() != TRAIN_FOOD && addFoodOrder.getFoodType() != STATION_FOOD) {
            return new Response<>(0, "Unknown food type " + addFoodOrder.getFoodType(), null);
        }
        if (addFoodOrder.getFoodType() == STATION_FOOD
                && (addFoodOrder.getStationName() == null || addFoodOrder.getStoreName() == null)) {
            return new Response<>(0, "Station food needs a station and a store", null);
        }
        if (addFoodOrder.getPrice() <= 0 || addFoodOrder.getPrice() > MAX_FOOD_PRICE) {
            return new Response<>(0, "Food price out of range", null);
        }
        FoodOrder existing = foodOrderRepository.findByOrderId(addFoodOrder.getOrderId());
        if (existing != null) {
            // one food order per ticket order
            return new Response<>(0, "Order Id Has Existed.", null);
        }
        FoodOrder fo = new FoodOrder();
        fo.setId(UUID.randomUUID());
        fo.setOrderId(addFoodOrder.getOrderId());
        fo.setFoodType(addFoodOrder.getFoodType());
        if (addFoodOrder.getFoodType() == STATION_FOOD) {
            fo.setStationName(addFoodOrder.getStationName());
            fo.setStoreName(addFoodOrder.getStoreName());
        }
        fo.setFoodName(addFoodOrder.getFoodName());
        fo.setPrice(addFoodOrder.getPrice());
        foodOrderRepository.save(fo);
        return new Response<>(1, "Success.", fo);
    }

    @Override
    public Response findByOrderId(String orderId, HttpHeaders headers) {
        FoodOrder fo = foodOrderRepository.findByOrderId(UUID.fromString(orderId));
        if (fo == null) {
            return new Response<>(0, "Order Id Is Non-Existent.", null);
        }
        return new Response<>(1, "Success.", fo);
    }

    @Override
    public Response getAllFood(String date, String startStation, String endStation, String tripId,
                               HttpHeaders headers) {
        AllTripFood allTripFood = new AllTripFood();
        if (tripId == null || tripId.length() <= 2) {
            return new Response<>(0, "Trip id is not suitable", null);
        }

        // 1. food served on board this trip
        ResponseEntity<Response<List<TrainFood>>> reTrainFoods = restTemplate.exchange(
                "http://ts-food-map-service:18855/api/v1/foodmapservice/trainfoods/" + tripId,
                HttpMethod.GET, new HttpEntity(null, headers),
                new ParameterizedTypeReference<Response<List<TrainFood>>>() {
                });
        List<TrainFood> trainFoodList = reTrainFoods.getBody() != null ? reTrainFoods.getBody().getData() : null;
        if (trainFoodList != null && !trainFoodList.isEmpty()) {
            allTripFood.setTrainFoodList(trainFoodList.get(0).getFoodList());
        }

        // 2. the stops of the trip, then the stores at the stops the passenger passes
        ResponseEntity<Response<Route>> reRoute = restTemplate.exchange(
                "http://ts-travel-service:12346/api/v1/travelservice/routes/" + tripId,
                HttpMethod.GET, new HttpEntity(null, headers),
                new ParameterizedTypeReference<Response<Route>>() {
                });
        Response<Route> routeResult = reRoute.getBody();
        if (routeResult == null || routeResult.getStatus() != 1) {
            return new Response<>(0, "Get the route info failed", allTripFood);
        }
        List<String> stations = routeResult.getData().getStations();
        String startId = queryStationId(startStation, headers);
        String endId = queryStationId(endStation, headers);
        int from = stations.indexOf(startId);
        int to = stations.indexOf(endId);
        if (from < 0 || to < 0 || from > to) {
            return new Response<>(0, "Stations are not on this trip in travel order", allTripFood);
        }
        List<String> passed = new ArrayList<>(stations.subList(from, to + 1));

        ResponseEntity<Response<List<FoodStore>>> reStores = restTemplate.exchange(
                "http://ts-food-map-service:18855/api/v1/foodmapservice/foodstores",
                HttpMethod.POST, new HttpEntity<>(passed, headers),
                new ParameterizedTypeReference<Response<List<FoodStore>>>() {
                });
        Map<String, List<FoodStore>> storesByStation = new LinkedHashMap<>();
        List<FoodStore> stores = reStores.getBody() != null ? reStores.getBody().getData() : null;
        if (stores != null) {
            for (FoodStore store : stores) {
                storesByStation.computeIfAbsent(store.getStationId(), k -> new ArrayList<>()).add(store);
            }
        }
        allTripFood.setFoodStoreListMap(storesByStation);
        LOGGER.info("[getAllFood] {}: {} train dishes, stores at {} stations", tripId,
                allTripFood.getTrainFoodList() == null ? 0 : allTripFood.getTrainFoodList().size(),
                storesByStation.size());
        return new Response<>(1, "Get All Food Success", allTripFood);
    }

    private String queryStationId(String stationName, HttpHeaders headers) {
        ResponseEntity<Response<String>> re = restTemplate.exchange(
                "http://ts-station-service:12345/api/v1/stationservice/stations/id/" + stationName,
                HttpMethod.GET, new HttpEntity(null, headers),
                new ParameterizedTypeReference<Response<String>>() {
                });
        return re.getBody() != null ? re.getBody().getData() : null;
    }
}
