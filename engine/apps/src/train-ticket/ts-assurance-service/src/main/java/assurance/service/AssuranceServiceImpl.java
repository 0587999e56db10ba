package assurance.service;

import assurance.entity.Assurance;
import assurance.entity.PlainAssurance;
import assurance.repository.AssuranceRepository;
import edu.fudan.common.util.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpHeaders;
import org.springframework.stereotype.Service;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

@Service
public class AssuranceServiceImpl implements AssuranceService {

    private static final Logger LOGGER = LoggerFactory.getLogger(AssuranceServiceImpl.class);

    /**
     * The assurance products. The index is what the booking form sends (0 = none); the
     * price is a flat amount per ticket in CNY.
     */
    public enum AssuranceType {
        TRAFFIC_ACCIDENT(1, "Traffic Accident Assurance", 3.0);

        private final int index;
        private final String name;
        private final double price;

        AssuranceType(int index, String name, double price) {
            this.index = index;
            this.name = name;
            this.price = price;
        }

        public int getIndex() { return index; }
        public String getName() { return name; }
        public double getPrice() { return price; }

        public static AssuranceType getTypeByIndex(int index) {
            for (AssuranceType type : values()) {
                if (type.index == index) {
                    return type;
                }
            }
            return null;
        }
    }

    @Autowired
    private AssuranceRepository assuranceRepository;

    @Override
    public Response getAllAssuranceTypes(HttpHeaders headers) {
        List<PlainAssurance> types = new ArrayList<>();
        for (AssuranceType type : AssuranceType.values()) {
            types.add(new PlainAssurance(type.getIndex(), type.getName(), type.getPrice()));
        }
        return new Response<>(1, "Find All Assurance", types);
    }

    @Override
    public Response create(int typeIndex, String orderId, HttpHeaders headers) {
        AssuranceType type = AssuranceType.getTypeByIndex(typeIndex);
        if (type == null) {
            LOGGER.warn("[create] unknown assurance type {} for order {}", typeIndex, orderId);
            return new Response<>(0, "WARNING.Assurance Type not exist.", null);
        }
        UUID orderUuid;
        try {
            orderUuid = UUID.fromString(orderId);
        } catch (IllegalArgumentException e) {
            return new Response<>(0, "Malformed order id", orderId);
        }
        Assurance existing = assuranceRepository.findByOrderId(orderUuid);
        if (existing != null) {
            // the preserve services retry on timeouts: never sell two assurances per order
            LOGGER.info("[create] order {} already has assurance {}", orderId, existing.getId());
            return new Response<>(0, "Fail.Assurance already exists", null);
        }
        Assurance assurance = new Assurance(UUID.randomUUID(), orderUuid, type);
        assuranceRepository.save(assurance);
        return new Response<>(1, "Success", assurance);
    }

    @Override
    public Response findAssuranceByOrderId(String orderId, HttpHeaders headers) {
        Assurance assurance = assuranceRepository.findByOrderId(UUID.fromString(orderId));
        if (assurance == null) {
            return new Response<>(0, "No Content by this orderId", orderId);
        }
        return new Response<>(1, "Find Assurance Success", assurance);
    }
}
