package train.service;

import edu.fudan.common.util.Response;
import train.entity.TrainType;
import train.repository.TrainTypeRepository;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpHeaders;
import org.springframework.stereotype.Service;

import java.util.List;

@Service
public class TrainServiceImpl implements TrainService {

    private static final Logger LOGGER = LoggerFactory.getLogger(TrainServiceImpl.class);

    /**
     * Plausibility bounds per train class (letter of the type id): the fastest G trains
     * run 350 km/h, K trains about 120 km/h. A type outside its band is rejected.
     */
    static int maxSpeed(String typeId) {
        switch (typeId.charAt(0)) {
            case 'G': return 350;
            case 'D': return 250;
            case 'Z': return 160;
            case 'T': return 140;
            case 'K': return 120;
            default: return 0;
        }
    }

    /** Seats per train: 16 cars of at most ~90 seats. */
    static final int MAX_SEATS = 1500;

    @Autowired
    private TrainTypeRepository repository;

    @Override
    public Response create(TrainType trainType, HttpHeaders headers) {
        if (repository.findById(trainType.getId()) != null) {
            return new Response<>(0, "Train type already exists", null);
        }
        int limit = maxSpeed(trainType.getId());
        if (limit == 0) {
            return new Response<>(0, "Train type id must start with G, D, Z, T or K", null);
        }
        if (trainType.getAverageSpeed() <= 0 || trainType.getAverageSpeed() > limit) {
            return new Response<>(0, "Average speed must be in (0, " + limit + "] km/h", null);
        }
        int seats = trainType.getEconomyClass() + trainType.getConfortClass();
        if (trainType.getEconomyClass() < 0 || trainType.getConfortClass() < 0 || seats == 0 || seats > MAX_SEATS) {
            return new Response<>(0, "Seat counts out of range", null);
        }
        repository.save(trainType);
        return new Response<>(1, "create success", trainType);
    }

    @Override
    public Response retrieve(String id, HttpHeaders headers) {
        TrainType trainType = repository.findById(id);
        if (trainType == null) {
            LOGGER.warn("[retrieve] no train type {}", id);
            return new Response<>(0, "here is no TrainType with the trainType id: " + id, null);
        }
        return new Response<>(1, "success", trainType);
    }

    @Override
    public Response query(HttpHeaders headers) {
        List<TrainType> trainTypes = repository.findAll();
        if (trainTypes == null || trainTypes.isEmpty()) {
            return new Response<>(0, "no content", null);
        }
        return new Response<>(1, "success", trainTypes);
    }
}
