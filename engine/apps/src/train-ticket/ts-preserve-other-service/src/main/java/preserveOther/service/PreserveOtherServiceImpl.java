package preserveOther.service;

import edu.fudan.common.util.Response;
import preserveOther.entity.*;
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

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.LocalDate;
import java.time.ZoneId;
import java.util.*;

/**
 * Books a Z/T/K ticket in ordered steps; the first failing mandatory step ends the
 * booking with its message. Extras (assurance, food, consignment) and the mail never
 * fail the booking.
 */
@Service
public class PreserveOtherServiceImpl implements PreserveOtherService {

    private static final Logger LOGGER = LoggerFactory.getLogger(PreserveOtherServiceImpl.class);

    // ordinary-train classes and how they are priced from basic's two fares
    static final int HARD_SEAT = 4, SOFT_SEAT = 5, HARD_BED = 6, SOFT_BED = 7;
    private static final Map<Integer, String> FARE_KEY = new HashMap<>();
    private static final Map<Integer, BigDecimal> BERTH_SURCHARGE = new HashMap<>();

    static {
        FARE_KEY.put(HARD_SEAT, "economyClass");
        FARE_KEY.put(HARD_BED, "economyClass");
        FARE_KEY.put(SOFT_SEAT, "confortClass");
        FARE_KEY.put(SOFT_BED, "confortClass");
        BERTH_SURCHARGE.put(HARD_SEAT, BigDecimal.ONE);
        BERTH_SURCHARGE.put(SOFT_SEAT, BigDecimal.ONE);
        BERTH_SURCHARGE.put(HARD_BED, new BigDecimal("1.60"));
        BERTH_SURCHARGE.put(SOFT_BED, new BigDecimal("1.45"));
    }

    /** Ordinary trains open sales 15 days ahead. */
    private static final long PRESALE_DAYS = 15;

    @Autowired
    private RestTemplate restTemplate;

    @Override
    public Response preserve(OrderTicketsInfo oti, HttpHeaders headers) {
        if (!FARE_KEY.containsKey(oti.getSeatType())) {
            return new Response<>(0, "Seat class " + oti.getSeatType() + " not sold on ordinary trains", null);
        }
        LocalDate travel = oti.getDate().toInstant().atZone(ZoneId.systemDefault()).toLocalDate();
        LocalDate today = LocalDate.now();
        if (travel.isBefore(today) || travel.isAfter(today.plusDays(PRESALE_DAYS))) {
            return new Response<>(0, "Travel date outside the " + PRESALE_DAYS + "-day sale window", null);
        }

        Response<?> step = call(HttpMethod.GET, "http://ts-security-service:11188/api/v1/securityservice/securityConfigs/"
                + oti.getAccountId(), null, headers, new ParameterizedTypeReference<Response<Object>>() {
        });
        if (step.getStatus() == 0) {
            return new Response<>(0, step.getMsg(), null);
        }

        Response<Contacts> contactsResult = call(HttpMethod.GET,
                "http://ts-contacts-service:12347/api/v1/contactservice/contacts/" + oti.getContactsId(), null, headers,
                new ParameterizedTypeReference<Response<Contacts>>() {
                });
        if (contactsResult.getStatus() == 0) {
            return new Response<>(0, "Contacts not found", null);
        }
        Contacts contacts = contactsResult.getData();

        TripAllDetailInfo query = new TripAllDetailInfo(oti.getTripId(), oti.getDate(), oti.getFrom(), oti.getTo());
        Response<TripAllDetail> detail = call(HttpMethod.POST,
                "http://ts-travel2-service:16346/api/v1/travel2service/trip_detail", query, headers,
                new ParameterizedTypeReference<Response<TripAllDetail>>() {
                });
        if (detail.getStatus() == 0) {
            return new Response<>(0, detail.getMsg(), null);
        }
        TripResponse tripResponse = detail.getData().getTripResponse();
        boolean softClass = oti.getSeatType() == SOFT_SEAT || oti.getSeatType() == SOFT_BED;
        if ((softClass ? tripResponse.getConfortClass() : tripResponse.getEconomyClass()) <= 0) {
            return new Response<>(0, "Seat Not Enough", null);
        }
        Trip trip = detail.getData().getTrip();

        String fromId = stationId(oti.getFrom(), headers);
        String toId = stationId(oti.getTo(), headers);

        Response<TravelResult> fares = call(HttpMethod.POST,
                "http://ts-ticketinfo-service:15681/api/v1/ticketinfoservice/ticketinfo",
                new Travel(trip, oti.getFrom(), oti.getTo(), new Date()), headers,
                new ParameterizedTypeReference<Response<TravelResult>>() {
                });
        BigDecimal fare = new BigDecimal(fares.getData().getPrices().get(FARE_KEY.get(oti.getSeatType())));
        String price = fare.multiply(BERTH_SURCHARGE.get(oti.getSeatType())).setScale(2, RoundingMode.HALF_UP).toPlainString();

        Response<Ticket> seat = call(HttpMethod.POST, "http://ts-seat-service:18898/api/v1/seatservice/seats",
                new Seat(oti.getDate(), trip.getTripId().toString(), fromId, toId, oti.getSeatType()), headers,
                new ParameterizedTypeReference<Response<Ticket>>() {
                });

        Order order = new Order();
        order.setTrainNumber(oti.getTripId());
        order.setAccountId(UUID.fromString(oti.getAccountId()));
        order.setFrom(fromId);
        order.setTo(toId);
        order.setContactsName(contacts.getName());
        order.setContactsDocumentNumber(contacts.getDocumentNumber());
        order.setDocumentType(contacts.getDocumentType());
        order.setSeatClass(oti.getSeatType());
        order.setSeatNumber(String.valueOf(seat.getData().getSeatNo()));
        order.setTravelDate(oti.getDate());
        order.setTravelTime(tripResponse.getStartingTime());
        order.setPrice(price);
        Response<Order> created = call(HttpMethod.POST,
                "http://ts-order-other-service:12032/api/v1/orderOtherService/orderOther", order, headers,
                new ParameterizedTypeReference<Response<Order>>() {
                });
        if (created.getStatus() == 0) {
            return new Response<>(0, created.getMsg(), null);
        }
        Order saved = created.getData();
        List<String> failedExtras = new ArrayList<>();

        if (oti.getAssurance() != 0 && !optional(HttpMethod.GET, "http://ts-assurance-service:18888/api/v1/assuranceservice/assurances/"
                + oti.getAssurance() + "/" + saved.getId(), null, headers)) {
            failedExtras.add("Assurance");
        }
        if (oti.getFoodType() > 0) {
            FoodOrder food = new FoodOrder(saved.getId(), oti.getFoodType(), oti.getFoodName(), oti.getFoodPrice());
            food.setStationName(oti.getStationName());
            food.setStoreName(oti.getStoreName());
            if (!optional(HttpMethod.POST, "http://ts-food-service:18856/api/v1/foodservice/orders", food, headers)) {
                failedExtras.add("Food");
            }
        }
        if (oti.getConsigneeName() != null && !oti.getConsigneeName().isEmpty()) {
            Consign consign = new Consign(saved.getId(), saved.getAccountId(), oti.getHandleDate(), saved.getTravelDate(),
                    saved.getFrom(), saved.getTo(), oti.getConsigneeName(), oti.getConsigneePhone(),
                    oti.getConsigneeWeight(), oti.isWithin());
            if (!optional(HttpMethod.POST, "http://ts-consign-service:16111/api/v1/consignservice/consigns", consign, headers)) {
                failedExtras.add("Consign");
            }
        }

        Response<User> user = call(HttpMethod.GET, "http://ts-user-service:12342/api/v1/userservice/users/id/"
                + oti.getAccountId(), null, headers, new ParameterizedTypeReference<Response<User>>() {
        });
        if (user.getData() != null) {
            optional(HttpMethod.POST, "http://ts-notification-service:17853/api/v1/notifyservice/notification/preserve_success",
                    new NotifyInfo(user.getData().getEmail(), saved, user.getData().getUserName()), headers);
        }
        String msg = failedExtras.isEmpty() ? "Success." : "Success.But " + String.join(", ", failedExtras) + " Fail.";
        return new Response<>(1, msg, saved);
    }

    private String stationId(String name, HttpHeaders headers) {
        Response<String> r = call(HttpMethod.GET, "http://ts-station-service:12345/api/v1/stationservice/stations/id/" + name,
                null, headers, new ParameterizedTypeReference<Response<String>>() {
                });
        return r.getData();
    }

    private <T> Response<T> call(HttpMethod method, String url, Object body, HttpHeaders headers,
                                 ParameterizedTypeReference<Response<T>> type) {
        ResponseEntity<Response<T>> re = restTemplate.exchange(url, method, new HttpEntity<>(body, headers), type);
        if (re.getBody() == null) {
            throw new IllegalStateException("empty answer from " + url);
        }
        return re.getBody();
    }

    private boolean optional(HttpMethod method, String url, Object body, HttpHeaders headers) {
        try {
            ResponseEntity<Response> re = restTemplate.exchange(url, method, new HttpEntity<>(body, headers), Response.class);
            return re.getBody() != null && re.getBody().getStatus() == 1;
        } catch (RestClientException e) {
            LOGGER.warn("[optional] {} failed: {}", url, e.getMessage());
            return false;
        }
    }
}
