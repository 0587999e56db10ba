package foodmap.service;

import edu.fudan.common.util.Response;
import foodmap.entity.Food;
import foodmap.entity.FoodStore;
import foodmap.entity.TrainFood;
import foodmap.repository.FoodStoreRepository;
import foodmap.repository.TrainFoodRepository;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpHeaders;
import org.springframework.stereotype.Service;

import java.time.LocalTime;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

@Service
public class FoodMapServiceImpl implements FoodMapService {

    private static final Logger LOGGER = LoggerFactory.getLogger(FoodMapServiceImpl.class);

    /** A station stop list longer than this is a malformed request, not a real route. */
    private static final int MAX_STATIONS = 50;

    @Autowired
    private FoodStoreRepository foodStoreRepository;

    @Autowired
    private TrainFoodRepository trainFoodRepository;

    @Override
    public Response listFoodStores(HttpHeaders headers) {
        List<FoodStore> stores = foodStoreRepository.findAll();
        if (stores == null || stores.isEmpty()) {
            return new Response<>(0, "Foodstore is empty", null);
        }
        return new Response<>(1, "Success", stores);
    }

    @Override
    public Response listTrainFoodByTripId(String tripId, HttpHeaders headers) {
        List<TrainFood> trainFoodList = trainFoodRepository.findByTripId(tripId);
        if (trainFoodList == null || trainFoodList.isEmpty()) {
            return new Response<>(0, "No content", null);
        }
        // drop dishes with a non-positive price: they cannot be ordered
        for (TrainFood tf : trainFoodList) {
            List<Food> sellable = tf.getFoodList().stream()
                    .filter(f -> f.getPrice() > 0)
                    .collect(Collectors.toList());
            tf.setFoodList(sellable);
        }
        return new Response<>(1, "Success", trainFoodList);
    }

    /**
     * Stores of the given stations, keeping only those open now (a store's business hours
     * are "HH:mm-HH:mm"), in the order of the station list.
     */
    @Override
    public Response getFoodStoresByStationIds(List<String> stationIds) {
        if (stationIds.isEmpty() || stationIds.size() > MAX_STATIONS) {
            return new Response<>(0, "Station list must hold 1 to " + MAX_STATIONS + " ids", null);
        }
        List<FoodStore> stores = foodStoreRepository.findByStationIdIn(stationIds);
        if (stores == null || stores.isEmpty()) {
            return new Response<>(0, "No content", null);
        }
        LocalTime now = LocalTime.now();
        List<FoodStore> open = new ArrayList<>();
        for (String stationId : stationIds) {
            for (FoodStore store : stores) {
                if (store.getStationId().equals(stationId) && isOpen(store.getBusinessTime(), now)) {
                    open.add(store);
                }
            }
        }
        LOGGER.info("[getFoodStoresByStationIds] {} of {} stores open", open.size(), stores.size());
        return new Response<>(1, "Success", open);
    }

    static boolean isOpen(String businessTime, LocalTime now) {
        if (businessTime == null || !businessTime.contains("-")) {
            return true;   // no hours recorded: assume always open
        }
        String[] parts = businessTime.split("-");
        LocalTime opens = LocalTime.parse(parts[0].trim());
        LocalTime closes = LocalTime.parse(parts[1].trim());
        if (closes.isBefore(opens)) {   // open past midnight
            return !now.isBefore(opens) || now.isBefore(closes);
        }
        return !now.isBefore(opens) && now.isBefore(closes);
    }
}
