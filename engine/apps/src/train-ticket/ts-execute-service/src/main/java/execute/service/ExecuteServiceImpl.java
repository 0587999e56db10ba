package execute.service;

import execute.entity.Order;
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

import java.util.Calendar;
import java.util.Date;

/**
 * Ticket life cycle at the station: PAID (1) -> COLLECTED (2) at the counter, COLLECTED
 * (2) -> USED (6) at the gate. The gate opens from 2 hours before departure, and only
 * on the travel date.
 */
@Service
public class ExecuteServiceImpl implements ExecuteService {

    private static final Logger LOGGER = LoggerFactory.getLogger(ExecuteServiceImpl.class);

    private static final int PAID = 1;
    private static final int COLLECTED = 2;
    private static final int USED = 6;

    private static final long GATE_OPENS_BEFORE_MS = 2 * 3600 * 1000L;

    private static final String ORDER = "http://ts-order-service:12031/api/v1/orderservice/order/";
    private static final String ORDER_OTHER = "http://ts-order-other-service:12032/api/v1/orderOtherService/orderOther/";

    @Autowired
    private RestTemplate restTemplate;

    @Override
    public Response ticketExecute(String orderId, HttpHeaders headers) {
        return advance(orderId, COLLECTED, USED, true, headers);
    }

    @Override
    public Response ticketCollect(String orderId, HttpHeaders headers) {
        return advance(orderId, PAID, COLLECTED, false, headers);
    }

    private Response advance(String orderId, int from, int to, boolean checkGate, HttpHeaders headers) {
        String base = ORDER;
        Order order = getOrder(ORDER + orderId, headers);
        if (order == null) {
            base = ORDER_OTHER;
            order = getOrder(ORDER_OTHER + orderId, headers);
        }
        if (order == null) {
            return new Response<>(0, "Order Not Found", null);
        }
        if (order.getStatus() != from) {
            LOGGER.info("[advance] order {} has status {}, expected {}", orderId, order.getStatus(), from);
            return new Response<>(0, "Order Status Wrong", null);
        }
        if (checkGate && !gateOpen(order, new Date())) {
            return new Response<>(0, "The gate is not open for this train", null);
        }
        ResponseEntity<Response> re = restTemplate.exchange(
                base + "status/" + orderId + "/" + to,
                HttpMethod.GET,
                new HttpEntity(null, headers),
                Response.class);
        Response result = re.getBody();
        if (result == null || result.getStatus() != 1) {
            return new Response<>(0, "Order status change failed", null);
        }
        return new Response<>(1, to == USED ? "Success." : "Success", null);
    }

    /** Open from departure minus 2 h until departure, on the travel date. */
    boolean gateOpen(Order order, Date now) {
        Calendar departure = Calendar.getInstance();
        departure.setTime(order.getTravelDate());
        Calendar time = Calendar.getInstance();
        time.setTime(order.getTravelTime());
        departure.set(Calendar.HOUR_OF_DAY, time.get(Calendar.HOUR_OF_DAY));
        departure.set(Calendar.MINUTE, time.get(Calendar.MINUTE));
        long dep = departure.getTimeInMillis();
        return now.getTime() >= dep - GATE_OPENS_BEFORE_MS && now.getTime() <= dep;
    }

    private Order getOrder(String url, HttpHeaders headers) {
        ResponseEntity<Response<Order>> re = restTemplate.exchange(
                url, HttpMethod.GET, new HttpEntity(null, headers),
                new ParameterizedTypeReference<Response<Order>>() {
                });
        Response<Order> body = re.getBody();
        return body != null && body.getStatus() == 1 ? body.getData() : null;
    }
}
