package inside_payment.service;

import edu.fudan.common.util.Response;
import inside_payment.entity.*;
import inside_payment.repository.AddMoneyRepository;
import inside_payment.repository.PaymentRepository;
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
import java.util.List;
import java.util.UUID;

@Service
public class InsidePaymentServiceImpl implements InsidePaymentService {

    private static final Logger LOGGER = LoggerFactory.getLogger(InsidePaymentServiceImpl.class);

    private static final int NOT_PAID = 0;
    private static final int PAID = 1;

    @Autowired
    private AddMoneyRepository addMoneyRepository;

    @Autowired
    private PaymentRepository paymentRepository;

    @Autowired
    private RestTemplate restTemplate;

    @Override
    public Response pay(PaymentInfo info, HttpHeaders headers) {
        String userId = info.getUserId();
        boolean highSpeed = info.getTripId().startsWith("G") || info.getTripId().startsWith("D");
        String orderBase = highSpeed
                ? "http://ts-order-service:12031/api/v1/orderservice/order/"
                : "http://ts-order-other-service:12032/api/v1/orderOtherService/orderOther/";

        ResponseEntity<Response<Order>> re = restTemplate.exchange(
                orderBase + info.getOrderId(), HttpMethod.GET, new HttpEntity(null, headers),
                new ParameterizedTypeReference<Response<Order>>() {
                });
        Response<Order> orderResult = re.getBody();
        if (orderResult == null || orderResult.getStatus() != 1) {
            return new Response<>(0, "Payment Failed, Order Not Exists", null);
        }
        Order order = orderResult.getData();
        if (order.getStatus() != NOT_PAID) {
            return new Response<>(0, "Error. Order status Not allowed to Pay.", null);
        }
        BigDecimal price = new BigDecimal(order.getPrice());

        Payment payment = new Payment();
        payment.setOrderId(info.getOrderId());
        payment.setPrice(order.getPrice());
        payment.setUserId(userId);

        BigDecimal balance = balanceOf(userId);
        if (balance.compareTo(price) < 0) {
            // wallet too low: charge the card through the external payment service
            PaymentInfo outside = new PaymentInfo();
            outside.setOrderId(info.getOrderId());
            outside.setUserId(userId);
            outside.setPrice(order.getPrice());
            ResponseEntity<Response> rePay = restTemplate.exchange(
                    "http://ts-payment-service:19001/api/v1/paymentservice/payment",
                    HttpMethod.POST, new HttpEntity<>(outside, headers), Response.class);
            if (rePay.getBody() == null || rePay.getBody().getStatus() != 1) {
                return new Response<>(0, "Payment Failed: outside payment refused", null);
            }
            payment.setType(PaymentType.O);
        } else {
            payment.setType(PaymentType.P);
        }
        paymentRepository.save(payment);

        ResponseEntity<Response> reStatus = restTemplate.exchange(
                orderBase + "status/" + info.getOrderId() + "/" + PAID,
                HttpMethod.GET, new HttpEntity(null, headers), Response.class);
        if (reStatus.getBody() == null || reStatus.getBody().getStatus() != 1) {
            LOGGER.error("[pay] order {} charged but status not updated", info.getOrderId());
            return new Response<>(0, "Payment recorded, order status update failed", null);
        }
        return new Response<>(1, "Payment Success", null);
    }

    /**
     * balance = recharges and refunds (AddMoney records) - wallet payments. Payments made
     * outside (type O) were charged to a card and do not reduce the balance.
     */
    BigDecimal balanceOf(String userId) {
        BigDecimal total = BigDecimal.ZERO;
        List<Money> addMonies = addMoneyRepository.findByUserId(userId);
        for (Money money : addMonies) {
            total = total.add(new BigDecimal(money.getMoney()));
        }
        List<Payment> payments = paymentRepository.findByUserId(userId);
        for (Payment p : payments) {
            if (p.getType() != PaymentType.O) {
                total = total.subtract(new BigDecimal(p.getPrice()));
            }
        }
        return total;
    }

    @Override
    public Response createAccount(AccountInfo info, HttpHeaders headers) {
        if (!addMoneyRepository.findByUserId(info.getUserId()).isEmpty()) {
            return new Response<>(0, "Create Account Failed, Account already Exists", null);
        }
        Money addMoney = new Money(info.getUserId(), info.getMoney(), MoneyType.A);
        addMoneyRepository.save(addMoney);
        return new Response<>(1, "Create Account Success", null);
    }

    @Override
    public Response drawBack(String userId, String money, HttpHeaders headers) {
        BigDecimal amount;
        try {
            amount = new BigDecimal(money);
        } catch (NumberFormatException e) {
            return new Response<>(0, "Malformed amount " + money, null);
        }
        if (amount.signum() <= 0) {
            return new Response<>(0, "Refund must be positive", null);
        }
        if (addMoneyRepository.findByUserId(userId).isEmpty()) {
            return new Response<>(0, "Draw Back Money Failed, Account Not Exists", null);
        }
        addMoneyRepository.save(new Money(userId, amount.toPlainString(), MoneyType.D));
        return new Response<>(1, "Draw Back Money Success", null);
    }

    @Override
    public Response payDifference(PaymentInfo info, HttpHeaders headers) {
        BigDecimal difference = new BigDecimal(info.getPrice());
        if (difference.signum() <= 0) {
            return new Response<>(0, "Nothing to pay", null);
        }
        Payment payment = new Payment();
        payment.setId(UUID.randomUUID().toString());
        payment.setOrderId(info.getOrderId());
        payment.setPrice(info.getPrice());
        payment.setUserId(info.getUserId());

        if (balanceOf(info.getUserId()).compareTo(difference) < 0) {
            ResponseEntity<Response> re = restTemplate.exchange(
                    "http://ts-payment-service:19001/api/v1/paymentservice/payment",
                    HttpMethod.POST, new HttpEntity<>(info, headers), Response.class);
            if (re.getBody() == null || re.getBody().getStatus() != 1) {
                return new Response<>(0, "Pay Difference Failed", null);
            }
            payment.setType(PaymentType.E);
        } else {
            payment.setType(PaymentType.D);
        }
        paymentRepository.save(payment);
        return new Response<>(1, "Pay Difference Success", null);
    }
}
