package security.service;

import edu.fudan.common.util.Response;
import security.entity.OrderSecurity;
import security.entity.SecurityConfig;
import security.repository.SecurityRepository;
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

import java.text.SimpleDateFormat;
import java.util.ArrayList;
import java.util.Date;

@Service
public class SecurityServiceImpl implements SecurityService {

    private static final Logger LOGGER = LoggerFactory.getLogger(SecurityServiceImpl.class);

    /** Orders an account may place within one hour, across both order services. */
    static final String MAX_ORDER_1_HOUR = "max_order_1_hour";
    /** Orders an account may hold unpaid, paid or collected at the same time. */
    static final String MAX_ORDER_NOT_USE = "max_order_not_use";

    @Autowired
    private SecurityRepository securityRepository;

    @Autowired
    private RestTemplate restTemplate;

    @Override
    public Response findAllSecurityConfig(HttpHeaders headers) {
        ArrayList<SecurityConfig> securityConfigs = securityRepository.findAll();
        if (securityConfigs == null || securityConfigs.isEmpty()) {
            return new Response<>(0, "No Content", null);
        }
        return new Response<>(1, "Success", securityConfigs);
    }

    @Override
    public Response modifySecurityConfig(SecurityConfig info, HttpHeaders headers) {
        SecurityConfig sc = securityRepository.findByName(info.getName());
        if (sc == null) {
            return new Response<>(0, "Security Config Not Exist", null);
        }
        int value;
        try {
            value = Integer.parseInt(info.getValue());
        } catch (NumberFormatException e) {
            return new Response<>(0, "Limit must be a whole number", null);
        }
        if (value < 1) {
            return new Response<>(0, "Limit must be at least 1", null);
        }
        sc.setValue(String.valueOf(value));
        sc.setDescription(info.getDescription());
        securityRepository.save(sc);
        return new Response<>(1, "Success", sc);
    }

    @Override
    public Response check(String accountId, HttpHeaders headers) {
        String today = new SimpleDateFormat("yyyy-MM-dd").format(new Date());
        OrderSecurity high = orderSecurity("http://ts-order-service:12031/api/v1/orderservice/order/security/"
                + today + "/" + accountId, headers);
        OrderSecurity other = orderSecurity("http://ts-order-other-service:12032/api/v1/orderOtherService/orderOther/security/"
                + today + "/" + accountId, headers);
        int lastHour = high.getOrderNumInLastOneHour() + other.getOrderNumInLastOneHour();
        int valid = high.getOrderNumOfValidOrder() + other.getOrderNumOfValidOrder();

        int maxInHour = limit(MAX_ORDER_1_HOUR);
        int maxNotUsed = limit(MAX_ORDER_NOT_USE);
        LOGGER.info("[check] account {}: {} orders in the last hour (max {}), {} open orders (max {})",
                accountId, lastHour, maxInHour, valid, maxNotUsed);
        if (lastHour > maxInHour) {
            return new Response<>(0, "Too much order in last one hour", accountId);
        }
        if (valid > maxNotUsed) {
            return new Response<>(0, "Too much order which are not used", accountId);
        }
        return new Response<>(1, "Success.r", accountId);
    }

    /** A missing or malformed limit does not block bookings: it logs and allows. */
    private int limit(String name) {
        SecurityConfig config = securityRepository.findByName(name);
        if (config == null) {
            LOGGER.error("[limit] security config {} missing", name);
            return Integer.MAX_VALUE;
        }
        try {
            return Integer.parseInt(config.getValue());
        } catch (NumberFormatException e) {
            LOGGER.error("[limit] security config {} is not a number: {}", name, config.getValue());
            return Integer.MAX_VALUE;
        }
    }

    private OrderSecurity orderSecurity(String url, HttpHeaders headers) {
        ResponseEntity<Response<OrderSecurity>> re = restTemplate.exchange(url, HttpMethod.GET,
                new HttpEntity(null, headers), new ParameterizedTypeReference<Response<OrderSecurity>>() {
                });
        Response<OrderSecurity> body = re.getBody();
        if (body == null || body.getData() == null) {
            throw new IllegalStateException("no order statistics from " + url);
        }
        return body.getData();
    }
}
