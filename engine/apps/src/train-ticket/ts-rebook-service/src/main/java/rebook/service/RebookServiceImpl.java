package rebook.service;

import edu.fudan.common.util.Response;
import rebook.entity.*;
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
import java.util.Calendar;
import java.util.Date;

@Service
public class RebookServiceImpl implements RebookService {

    private static final Logger LOGGER = LoggerFactory.getLogger(RebookServiceImpl.class);

    private static final int PAID = 1;
    private static final int CHANGE = 3;
    private static final int FIRST_CLASS = 2;

    /** Rebooking closes two hours before the original departure. */
    private static final long CLOSE_BEFORE_DEPARTURE_MS = 2 * 3600 * 1000L;

    @Autowired
    private RestTemplate restTemplate;

    @Override
    public Response rebook(RebookInfo info, HttpHeaders headers) {
        Order order = findOrder(info, headers);
        if (order == null) {
            return new Response<>(0, "Order not found", null);
        }
        Response<?> refused = checkRebookable(order, info, new Date());
        if (refused != null) {
            return refused;
        }
        TripAllDetail detail = tripDetail(info, order, headers);
        if (detail == null) {
            return new Response<>(0, "Trip not found", null);
        }
        BigDecimal oldPrice = new BigDecimal(order.getPrice());
        BigDecimal newPrice = new BigDecimal(info.getSeatType() == FIRST_CLASS
                ? detail.getTripResponse().getPriceForConfortClass()
                : detail.getTripResponse().getPriceForEconomyClass());
        int compare = oldPrice.compareTo(newPrice);
        if (compare < 0) {
            // dearer: the UI collects the difference through /rebook/difference
            return new Response<>(2, "Please pay the different money!", newPrice.subtract(oldPrice).toPlainString());
        }
        if (compare > 0) {
            String refund = oldPrice.subtract(newPrice).toPlainString();
            ResponseEntity<Response> re = restTemplate.exchange(
                    "http://ts-inside-payment-service:18673/api/v1/inside_pay_service/inside_payment/drawback/"
                            + info.getLoginId() + "/" + refund,
                    HttpMethod.GET, new HttpEntity(null, headers), Response.class);
            if (re.getBody() == null || re.getBody().getStatus() != 1) {
                return new Response<>(0, "Can't draw back the difference money, please try again!", null);
            }
        }
        return updateOrder(order, info, detail, newPrice, headers);
    }

    @Override
    public Response payDifference(RebookInfo info, HttpHeaders headers) {
        Order order = findOrder(info, headers);
        if (order == null) {
            return new Response<>(0, "Order not found", null);
        }
        Response<?> refused = checkRebookable(order, info, new Date());
        if (refused != null) {
            return refused;
        }
        TripAllDetail detail = tripDetail(info, order, headers);
        if (detail == null) {
            return new Response<>(0, "Trip not found", null);
        }
        BigDecimal newPrice = new BigDecimal(info.getSeatType() == FIRST_CLASS
                ? detail.getTripResponse().getPriceForConfortClass()
                : detail.getTripResponse().getPriceForEconomyClass());
        BigDecimal difference = newPrice.subtract(new BigDecimal(order.getPrice()));
        PaymentDifferenceInfo payment = new PaymentDifferenceInfo(info.getOrderId(), info.getTripId(),
                info.getLoginId(), difference.toPlainString());
        ResponseEntity<Response> re = restTemplate.exchange(
                "http://ts-inside-payment-service:18673/api/v1/inside_pay_service/inside_payment/difference",
                HttpMethod.POST, new HttpEntity<>(payment, headers), Response.class);
        if (re.getBody() == null || re.getBody().getStatus() != 1) {
            return new Response<>(0, "Can't pay the difference,please try again", null);
        }
        return updateOrder(order, info, detail, newPrice, headers);
    }

    /** Only paid orders, rebooked at most once, before the closing time, to a future date. */
    Response<?> checkRebookable(Order order, RebookInfo info, Date now) {
        if (order.getStatus() == CHANGE) {
            return new Response<>(0, "You have already changed your ticket and you can only change one time.", null);
        }
        if (order.getStatus() != PAID) {
            return new Response<>(0, "You haven't paid the original ticket!", null);
        }
        Calendar departure = Calendar.getInstance();
        departure.setTime(order.getTravelDate());
        Calendar t = Calendar.getInstance();
        t.setTime(order.getTravelTime());
        departure.set(Calendar.HOUR_OF_DAY, t.get(Calendar.HOUR_OF_DAY));
        departure.set(Calendar.MINUTE, t.get(Calendar.MINUTE));
        if (now.getTime() > departure.getTimeInMillis() - CLOSE_BEFORE_DEPARTURE_MS) {
            return new Response<>(0, "You can only change the ticket before the train start or within 2 hours", null);
        }
        Calendar today = Calendar.getInstance();
        today.setTime(now);
        today.set(Calendar.HOUR_OF_DAY, 0);
        today.set(Calendar.MINUTE, 0);
        if (info.getDate().before(today.getTime())) {
            return new Response<>(0, "The new travel date is in the past", null);
        }
        return null;
    }

    private Response updateOrder(Order order, RebookInfo info, TripAllDetail detail, BigDecimal newPrice,
                                 HttpHeaders headers) {
        Seat seatRequest = new Seat(info.getDate(), info.getTripId(), order.getFrom(), order.getTo(), info.getSeatType());
        ResponseEntity<Response<Ticket>> reSeat = restTemplate.exchange(
                "http://ts-seat-service:18898/api/v1/seatservice/seats",
                HttpMethod.POST, new HttpEntity<>(seatRequest, headers),
                new ParameterizedTypeReference<Response<Ticket>>() {
                });
        Ticket ticket = reSeat.getBody().getData();

        boolean wasHighSpeed = isHighSpeed(order.getTrainNumber());
        boolean nowHighSpeed = isHighSpeed(info.getTripId());
        order.setTrainNumber(info.getTripId());
        order.setTravelDate(info.getDate());
        order.setTravelTime(detail.getTripResponse().getStartingTime());
        order.setSeatClass(info.getSeatType());
        order.setSeatNumber(String.valueOf(ticket.getSeatNo()));
        order.setPrice(newPrice.toPlainString());
        order.setStatus(CHANGE);

        if (wasHighSpeed == nowHighSpeed) {
            String url = nowHighSpeed
                    ? "http://ts-order-service:12031/api/v1/orderservice/order"
                    : "http://ts-order-other-service:12032/api/v1/orderOtherService/orderOther";
            ResponseEntity<Response> re = restTemplate.exchange(url, HttpMethod.PUT, new HttpEntity<>(order, headers),
                    Response.class);
            return re.getBody() != null && re.getBody().getStatus() == 1
                    ? new Response<>(1, "Success!", order)
                    : new Response<>(0, "Can't update Order!", null);
        }
        // moving between a G/D and a Z/T/K train: create in the new order service, then delete the old one
        String createUrl = nowHighSpeed
                ? "http://ts-order-service:12031/api/v1/orderservice/order"
                : "http://ts-order-other-service:12032/api/v1/orderOtherService/orderOther";
        String deleteUrl = wasHighSpeed
                ? "http://ts-order-service:12031/api/v1/orderservice/order/" + info.getOrderId()
                : "http://ts-order-other-service:12032/api/v1/orderOtherService/orderOther/" + info.getOrderId();
        ResponseEntity<Response> created = restTemplate.exchange(createUrl, HttpMethod.POST,
                new HttpEntity<>(order, headers), Response.class);
        if (created.getBody() == null || created.getBody().getStatus() != 1) {
            return new Response<>(0, "Can't create the new order", null);
        }
        restTemplate.exchange(deleteUrl, HttpMethod.DELETE, new HttpEntity(null, headers), Response.class);
        return new Response<>(1, "Success!", order);
    }

    private TripAllDetail tripDetail(RebookInfo info, Order order, HttpHeaders headers) {
        String from = stationName(order.getFrom(), headers);
        String to = stationName(order.getTo(), headers);
        TripAllDetailInfo gtdi = new TripAllDetailInfo(info.getTripId(), info.getDate(), from, to);
        String url = isHighSpeed(info.getTripId())
                ? "http://ts-travel-service:12346/api/v1/travelservice/trip_detail"
                : "http://ts-travel2-service:16346/api/v1/travel2service/trip_detail";
        ResponseEntity<Response<TripAllDetail>> re = restTemplate.exchange(url, HttpMethod.POST,
                new HttpEntity<>(gtdi, headers), new ParameterizedTypeReference<Response<TripAllDetail>>() {
                });
        Response<TripAllDetail> body = re.getBody();
        return body != null && body.getStatus() == 1 ? body.getData() : null;
    }

    private String stationName(String stationId, HttpHeaders headers) {
        ResponseEntity<Response<String>> re = restTemplate.exchange(
                "http://ts-station-service:12345/api/v1/stationservice/stations/name/" + stationId,
                HttpMethod.GET, new HttpEntity(null, headers), new ParameterizedTypeReference<Response<String>>() {
                });
        return re.getBody().getData();
    }

    private Order findOrder(RebookInfo info, HttpHeaders headers) {
        Order order = getOrder("http://ts-order-service:12031/api/v1/orderservice/order/" + info.getOrderId(), headers);
        if (order == null) {
            order = getOrder("http://ts-order-other-service:12032/api/v1/orderOtherService/orderOther/" + info.getOrderId(), headers);
        }
        return order;
    }

    private Order getOrder(String url, HttpHeaders headers) {
        ResponseEntity<Response<Order>> re = restTemplate.exchange(url, HttpMethod.GET, new HttpEntity(null, headers),
                new ParameterizedTypeReference<Response<Order>>() {
                });
        return re.getBody() != null && re.getBody().getStatus() == 1 ? re.getBody().getData() : null;
    }

    static boolean isHighSpeed(String tripId) {
        return tripId.startsWith("G") || tripId.startsWith("D");
    }
}
