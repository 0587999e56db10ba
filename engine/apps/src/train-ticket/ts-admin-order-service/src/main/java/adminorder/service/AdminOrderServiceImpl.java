package adminorder.service;

import adminorder.entity.Order;
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

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

@Service
public class AdminOrderServiceImpl implements AdminOrderService {

    private static final Logger LOGGER = LoggerFactory.getLogger(AdminOrderServiceImpl.class);

    /** Order status codes shared by both order services. */
    private static final int STATUS_NOT_PAID = 0;
    private static final int STATUS_USED = 6;

    @Autowired
    private RestTemplate restTemplate;

    @Override
    public Response getAllOrders(HttpHeaders headers) {
        HttpEntity requestEntity = new HttpEntity(null, headers);
        List<Order> merged = new ArrayList<>();

        ResponseEntity<Response<ArrayList<Order>>> re = restTemplate.exchange(
                "http://ts-order-service:12031/api/v1/orderservice/order",
                HttpMethod.GET,
                requestEntity,
                new ParameterizedTypeReference<Response<ArrayList<Order>>>() {
                });
        Response<ArrayList<Order>> highSpeed = re.getBody();
        if (highSpeed != null && highSpeed.getStatus() == 1 && highSpeed.getData() != null) {
            merged.addAll(highSpeed.getData());
        } else {
            LOGGER.warn("[getAllOrders] ts-order-service returned no orders");
        }

        ResponseEntity<Response<ArrayList<Order>>> re2 = restTemplate.exchange(
                "http://ts-order-other-service:12032/api/v1/orderOtherService/orderOther",
                HttpMethod.GET,
                requestEntity,
                new ParameterizedTypeReference<Response<ArrayList<Order>>>() {
                });
        Response<ArrayList<Order>> other = re2.getBody();
        if (other != null && other.getStatus() == 1 && other.getData() != null) {
            merged.addAll(other.getData());
        } else {
            LOGGER.warn("[getAllOrders] ts-order-other-service returned no orders");
        }

        // newest bookings first, as the admin table shows them
        merged.sort(Comparator.comparing(Order::getBoughtDate,
                Comparator.nullsLast(Comparator.reverseOrder())));
        return new Response<>(1, "Get the orders successfully!", merged);
    }

    @Override
    public Response updateOrder(Order request, HttpHeaders headers) {
        if (request.getStatus() < STATUS_NOT_PAID || request.getStatus() > STATUS_USED) {
            return new Response<>(0, "Unknown order status " + request.getStatus(), null);
        }
        if (request.getPrice() != null && Double.parseDouble(request.getPrice()) < 0) {
            return new Response<>(0, "Order price cannot be negative", null);
        }
        String url;
        if (isHighSpeed(request.getTrainNumber())) {
            url = "http://ts-order-service:12031/api/v1/orderservice/order/admin";
        } else {
            url = "http://ts-order-other-service:12032/api/v1/orderOtherService/orderOther/admin";
        }
        HttpEntity<Order> requestEntity = new HttpEntity<>(request, headers);
        ResponseEntity<Response> re = restTemplate.exchange(url, HttpMethod.PUT, requestEntity, Response.class);
        LOGGER.info("[updateOrder] {} -> {}", request.getId(), re.getBody() == null ? "no body" : re.getBody().getMsg());
        return re.getBody();
    }

    /** G (high-speed) and D (bullet) trains are booked through ts-order-service. */
    static boolean isHighSpeed(String trainNumber) {
        return trainNumber != null && (trainNumber.startsWith("G") || trainNumber.startsWith("D"));
    }
}
