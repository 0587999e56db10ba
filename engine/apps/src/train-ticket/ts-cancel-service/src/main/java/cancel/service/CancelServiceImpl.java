package cancel.service;

import cancel.entity.*;
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

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Calendar;
import java.util.Date;

@Service
public class CancelServiceImpl implements CancelService {

    private static final Logger LOGGER = LoggerFactory.getLogger(CancelServiceImpl.class);

    /** Share of the ticket price refunded when cancelling a paid order before departure. */
    private static final BigDecimal REFUND_RATE = new BigDecimal("0.80");

    // order status codes (see ts-order-service)
    private static final int NOT_PAID = 0;
    private static final int PAID = 1;
    private static final int CHANGE = 3;
    private static final int CANCEL = 4;

    @Autowired
    private RestTemplate restTemplate;

    @Override
    public Response calculateRefund(String orderId, HttpHeaders headers) {
        Order order = findOrder(orderId, headers);
        if (order == null) {
            return new Response<>(0, "Order Not Found", null);
        }
        if (order.getStatus() != NOT_PAID && order.getStatus() != PAID && order.getStatus() != CHANGE) {
            return new Response<>(0, "Order Status Cancel Not Permitted, Refound Error", null);
        }
        return new Response<>(1, "Success. Refoud Success", calculateRefundMoney(order, new Date()));
    }

    @Override
    public Response cancelOrder(String orderId, String loginId, HttpHeaders headers) {
        boolean highSpeed = true;
        Order order = getOrderByIdFromOrder(orderId, headers);
        if (order == null) {
            highSpeed = false;
            order = getOrderByIdFromOrderOther(orderId, headers);
        }
        if (order == null) {
            return new Response<>(0, "Order Not Found.", null);
        }
        if (!order.getAccountId().toString().equals(loginId)) {
            LOGGER.warn("[cancelOrder] {} tried to cancel order {} of {}", loginId, orderId, order.getAccountId());
            return new Response<>(0, "Order does not belong to this account", null);
        }
        if (order.getStatus() != NOT_PAID && order.getStatus() != PAID && order.getStatus() != CHANGE) {
            return new Response<>(0, "Order Status Cancel Not Permitted", null);
        }

        String refund = calculateRefundMoney(order, new Date());
        order.setStatus(CANCEL);
        Response changed = highSpeed ? cancelFromOrder(order, headers) : cancelFromOtherOrder(order, headers);
        if (changed == null || changed.getStatus() != 1) {
            return new Response<>(0, "Cancel order failed", null);
        }

        if (new BigDecimal(refund).signum() > 0) {
            boolean paidBack = drawbackMoney(refund, loginId, headers);
            if (!paidBack) {
                // the order is cancelled already; the refund is retried by support
                LOGGER.error("[cancelOrder] order {} cancelled but drawback of {} failed", orderId, refund);
                return new Response<>(0, "Cancel success but refund failed", refund);
            }
        }

        User user = getAccount(order.getAccountId().toString(), headers);
        if (user != null) {
            NotifyInfo notifyInfo = new NotifyInfo(user.getEmail(), order, refund);
            try {
                restTemplate.postForObject(
                        "http://ts-notification-service:17853/api/v1/notifyservice/notification/order_cancel_success",
                        new HttpEntity<>(notifyInfo, headers), Boolean.class);
            } catch (RestClientException e) {
                LOGGER.warn("[cancelOrder] mail for order {} not sent: {}", orderId, e.getMessage());
            }
        }
        return new Response<>(1, "Success.", refund);
    }

    /**
     * Paid (or rebooked) orders get 80 % back if cancelled before the train leaves;
     * unpaid orders and cancellations after departure refund nothing.
     */
    String calculateRefundMoney(Order order, Date now) {
        if (order.getStatus() == NOT_PAID) {
            return "0.00";
        }
        Calendar departure = Calendar.getInstance();
        departure.setTime(order.getTravelDate());
        Calendar time = Calendar.getInstance();
        time.setTime(order.getTravelTime());
        departure.set(Calendar.HOUR_OF_DAY, time.get(Calendar.HOUR_OF_DAY));
        departure.set(Calendar.MINUTE, time.get(Calendar.MINUTE));
        departure.set(Calendar.SECOND, 0);
        if (now.after(departure.getTime())) {
            return "0.00";
        }
        return new BigDecimal(order.getPrice()).multiply(REFUND_RATE).setScale(2, RoundingMode.HALF_UP).toPlainString();
    }

    private Order findOrder(String orderId, HttpHeaders headers) {
        Order order = getOrderByIdFromOrder(orderId, headers);
        return order != null ? order : getOrderByIdFromOrderOther(orderId, headers);
    }

    private Order getOrderByIdFromOrder(String orderId, HttpHeaders headers) {
        ResponseEntity<Response<Order>> re = restTemplate.exchange(
                "http://ts-order-service:12031/api/v1/orderservice/order/" + orderId,
                HttpMethod.GET, new HttpEntity(null, headers),
                new ParameterizedTypeReference<Response<Order>>() {
                });
        Response<Order> body = re.getBody();
        return body != null && body.getStatus() == 1 ? body.getData() : null;
    }

    private Order getOrderByIdFromOrderOther(String orderId, HttpHeaders headers) {
        ResponseEntity<Response<Order>> re = restTemplate.exchange(
                "http://ts-order-other-service:12032/api/v1/orderOtherService/orderOther/" + orderId,
                HttpMethod.GET, new HttpEntity(null, headers),
                new ParameterizedTypeReference<Response<Order>>() {
                });
        Response<Order> body = re.getBody();
        return body != null && body.getStatus() == 1 ? body.getData() : null;
    }

    private Response cancelFromOrder(Order order, HttpHeaders headers) {
        ResponseEntity<Response> re = restTemplate.exchange(
                "http://ts-order-service:12031/api/v1/orderservice/order",
                HttpMethod.PUT, new HttpEntity<>(order, headers), Response.class);
        return re.getBody();
    }

    private Response cancelFromOtherOrder(Order order, HttpHeaders headers) {
        ResponseEntity<Response> re = restTemplate.exchange(
                "http://ts-order-other-service:12032/api/v1/orderOtherService/orderOther",
                HttpMethod.PUT, new HttpEntity<>(order, headers), Response.class);
        return re.getBody();
    }

    private boolean drawbackMoney(String money, String userId, HttpHeaders headers) {
        ResponseEntity<Response> re = restTemplate.exchange(
                "http://ts-inside-payment-service:18673/api/v1/inside_pay_service/inside_payment/drawback/" + userId + "/" + money,
                HttpMethod.GET, new HttpEntity(null, headers), Response.class);
        return re.getBody() != null && re.getBody().getStatus() == 1;
    }

    private User getAccount(String accountId, HttpHeaders headers) {
        ResponseEntity<Response<User>> re = restTemplate.exchange(
                "http://ts-user-service:12342/api/v1/userservice/users/id/" + accountId,
                HttpMethod.GET, new HttpEntity(null, headers),
                new ParameterizedTypeReference<Response<User>>() {
                });
        return re.getBody() != null ? re.getBody().getData() : null;
    }
}
