package preserve.service;

import edu.fudan.common.util.Response;
import preserve.entity.*;
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

import java.text.SimpleDateFormat;
import java.util.Calendar;
import java.util.Date;
import java.util.UUID;

@Service
public class PreserveServiceImpl implements PreserveService {

    private static final Logger LOGGER = LoggerFactory.getLogger(PreserveServiceImpl.class);

    private static final int FIRST_CLASS = 2;
    private static final int SECOND_CLASS = 3;

    /** Tickets go on sale 30 days ahead; booking closes at departure. */
    private static final int PRESALE_DAYS = 30;

    @Autowired
    private RestTemplate restTemplate;

    @Override
    public Response preserve(OrderTicketsInfo oti, HttpHeaders headers) {
        // 0. date: not in the past, within the pre-sale window
        String dateProblem = checkTravelDate(oti.getDate(), new Date());
        if (dateProblem != null) {
            return new Response<>(0, dateProblem, null);
        }
        if (oti.getSeatType() != FIRST_CLASS && oti.getSeatType() != SECOND_CLASS) {
            return new Response<>(0, "High-speed trains sell first and second class only", null);
        }

        // 1. anti-scalping limits
        Response securityResult = get("http://ts-security-service:11188/api/v1/securityservice/securityConfigs/"
                + oti.getAccountId(), headers);
        if (securityResult.getStatus() == 0) {
            return new Response<>(0, securityResult.getMsg(), null);
        }

        // 2. the passenger
        Response<Contacts> gcr = getContactsById(oti.getContactsId(), headers);
        if (gcr.getStatus() == 0) {
            return new Response<>(0, gcr.getMsg(), null);
        }
        Contacts contacts = gcr.getData();

        // 3. the trip and the seats left in the requested class
        TripAllDetailInfo gtdi = new TripAllDetailInfo(oti.getTripId(), oti.getDate(), oti.getFrom(), oti.getTo());
        ResponseEntity<Response<TripAllDetail>> reDetail = restTemplate.exchange(
                "http://ts-travel-service:12346/api/v1/travelservice/trip_detail",
                HttpMethod.POST, new HttpEntity<>(gtdi, headers),
                new ParameterizedTypeReference<Response<TripAllDetail>>() {
                });
        Response<TripAllDetail> detail = reDetail.getBody();
        if (detail == null || detail.getStatus() == 0 || detail.getData().getTripResponse() == null) {
            return new Response<>(0, detail == null ? "Trip detail unavailable" : detail.getMsg(), null);
        }
        TripResponse tripResponse = detail.getData().getTripResponse();
        int left = oti.getSeatType() == FIRST_CLASS ? tripResponse.getConfortClass() : tripResponse.getEconomyClass();
        if (left <= 0) {
            return new Response<>(0, "Seat Not Enough", null);
        }
        Trip trip = detail.getData().getTrip();

        // 4. station ids for the order, and the price of this leg
        String fromStationId = queryForStationId(oti.getFrom(), headers);
        String toStationId = queryForStationId(oti.getTo(), headers);
        Travel query = new Travel(trip, oti.getFrom(), oti.getTo(), new Date());
        ResponseEntity<Response<TravelResult>> rePrice = restTemplate.exchange(
                "http://ts-ticketinfo-service:15681/api/v1/ticketinfoservice/ticketinfo",
                HttpMethod.POST, new HttpEntity<>(query, headers),
                new ParameterizedTypeReference<Response<TravelResult>>() {
                });
        TravelResult priceResult = rePrice.getBody().getData();
        String price = oti.getSeatType() == FIRST_CLASS
                ? priceResult.getPrices().get("confortClass")
                : priceResult.getPrices().get("economyClass");

        // 5. a seat number
        Seat seatRequest = new Seat(oti.getDate(), trip.getTripId().toString(), fromStationId, toStationId, oti.getSeatType());
        ResponseEntity<Response<Ticket>> reSeat = restTemplate.exchange(
                "http://ts-seat-service:18898/api/v1/seatservice/seats",
                HttpMethod.POST, new HttpEntity<>(seatRequest, headers),
                new ParameterizedTypeReference<Response<Ticket>>() {
                });
        Ticket ticket = reSeat.getBody().getData();

        // 6. the order
        Order order = new Order();
        order.setId(UUID.randomUUID());
        order.setTrainNumber(oti.getTripId());
        order.setAccountId(UUID.fromString(oti.getAccountId()));
        order.setFrom(fromStationId);
        order.setTo(toStationId);
        order.setBoughtDate(new Date());
        order.setStatus(0);
        order.setContactsDocumentNumber(contacts.getDocumentNumber());
        order.setContactsName(contacts.getName());
        order.setDocumentType(contacts.getDocumentType());
        order.setSeatClass(oti.getSeatType());
        order.setSeatNumber(String.valueOf(ticket.getSeatNo()));
        order.setTravelDate(oti.getDate());
        order.setTravelTime(tripResponse.getStartingTime());
        order.setPrice(price);
        ResponseEntity<Response<Order>> reOrder = restTemplate.exchange(
                "http://ts-order-service:12031/api/v1/orderservice/order",
                HttpMethod.POST, new HttpEntity<>(order, headers),
                new ParameterizedTypeReference<Response<Order>>() {
                });
        Response<Order> cor = reOrder.getBody();
        if (cor == null || cor.getStatus() == 0) {
            return new Response<>(0, cor == null ? "Create Order Fail." : cor.getMsg(), null);
        }
        Order created = cor.getData();
        StringBuilder message = new StringBuilder("Success.");

        // 7. extras: a failure here keeps the ticket and reports it
        if (oti.getAssurance() != 0) {
            try {
                Response ar = get("http://ts-assurance-service:18888/api/v1/assuranceservice/assurances/"
                        + oti.getAssurance() + "/" + created.getId(), headers);
                if (ar.getStatus() != 1) {
                    message.append("But Buy Assurance Fail.");
                }
            } catch (RestClientException e) {
                LOGGER.warn("[preserve] assurance for order {} failed: {}", created.getId(), e.getMessage());
                message.append("But Buy Assurance Fail.");
            }
        }
        if (oti.getFoodType() > 0) {
            FoodOrder foodOrder = new FoodOrder(created.getId(), oti.getFoodType(), oti.getFoodName(), oti.getFoodPrice());
            if (oti.getFoodType() == 2) {
                foodOrder.setStationName(oti.getStationName());
                foodOrder.setStoreName(oti.getStoreName());
            }
            if (!post("http://ts-food-service:18856/api/v1/foodservice/orders", foodOrder, headers)) {
                message.append("But Food Order Fail.");
            }
        }
        if (oti.getConsigneeName() != null && !oti.getConsigneeName().isEmpty()) {
            Consign consign = new Consign(created.getId(), created.getAccountId(), oti.getHandleDate(),
                    created.getTravelDate(), created.getFrom(), created.getTo(), oti.getConsigneeName(),
                    oti.getConsigneePhone(), oti.getConsigneeWeight(), oti.isWithin());
            if (!post("http://ts-consign-service:16111/api/v1/consignservice/consigns", consign, headers)) {
                message.append("But Consign Fail.");
            }
        }

        // 8. confirmation mail
        User user = getAccount(oti.getAccountId(), headers);
        if (user != null) {
            NotifyInfo notifyInfo = new NotifyInfo(user.getEmail(), created, user.getUserName());
            post("http://ts-notification-service:17853/api/v1/notifyservice/notification/preserve_success",
                    notifyInfo, headers);
        }
        return new Response<>(1, message.toString(), created);
    }

    /** The travel date must be today or later and at most PRESALE_DAYS ahead. */
    String checkTravelDate(Date travelDate, Date now) {
        if (travelDate == null) {
            return "Travel date is required";
        }
        SimpleDateFormat day = new SimpleDateFormat("yyyy-MM-dd");
        if (day.format(travelDate).compareTo(day.format(now)) < 0) {
            return "Travel date is in the past";
        }
        Calendar last = Calendar.getInstance();
        last.setTime(now);
        last.add(Calendar.DAY_OF_MONTH, PRESALE_DAYS);
        if (travelDate.after(last.getTime())) {
            return "Tickets are sold at most " + PRESALE_DAYS + " days ahead";
        }
        return null;
    }

    private String queryForStationId(String stationName, HttpHeaders headers) {
        ResponseEntity<Response<String>> re = restTemplate.exchange(
                "http://ts-station-service:12345/api/v1/stationservice/stations/id/" + stationName,
                HttpMethod.GET, new HttpEntity(null, headers),
                new ParameterizedTypeReference<Response<String>>() {
                });
        return re.getBody().getData();
    }

    private Response<Contacts> getContactsById(String contactsId, HttpHeaders headers) {
        ResponseEntity<Response<Contacts>> re = restTemplate.exchange(
                "http://ts-contacts-service:12347/api/v1/contactservice/contacts/" + contactsId,
                HttpMethod.GET, new HttpEntity(null, headers),
                new ParameterizedTypeReference<Response<Contacts>>() {
                });
        return re.getBody();
    }

    private User getAccount(String accountId, HttpHeaders headers) {
        ResponseEntity<Response<User>> re = restTemplate.exchange(
                "http://ts-user-service:12342/api/v1/userservice/users/id/" + accountId,
                HttpMethod.GET, new HttpEntity(null, headers),
                new ParameterizedTypeReference<Response<User>>() {
                });
        return re.getBody() == null ? null : re.getBody().getData();
    }

    private Response get(String url, HttpHeaders headers) {
        ResponseEntity<Response> re = restTemplate.exchange(url, HttpMethod.GET, new HttpEntity(null, headers), Response.class);
        return re.getBody();
    }

    private boolean post(String url, Object body, HttpHeaders headers) {
        try {
            ResponseEntity<Response> re = restTemplate.exchange(url, HttpMethod.POST, new HttpEntity<>(body, headers),
                    Response.class);
            return re.getBody() != null && re.getBody().getStatus() == 1;
        } catch (RestClientException e) {
            LOGGER.warn("[post] {} failed: {}", url, e.getMessage());
            return false;
        }
    }
}
