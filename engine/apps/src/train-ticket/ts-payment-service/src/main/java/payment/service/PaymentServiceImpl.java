package payment.service;

import edu.fudan.common.util.Response;
import payment.entity.Money;
import payment.entity.Payment;
import payment.repository.AddMoneyRepository;
import payment.repository.PaymentRepository;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpHeaders;
import org.springframework.stereotype.Service;

import java.math.BigDecimal;
import java.util.List;
import java.util.UUID;

@Service
public class PaymentServiceImpl implements PaymentService {

    private static final Logger LOGGER = LoggerFactory.getLogger(PaymentServiceImpl.class);

    /** Single charges above this need a manual review and are refused here. */
    private static final BigDecimal MAX_CHARGE = new BigDecimal("10000.00");

    @Autowired
    private PaymentRepository paymentRepository;

    @Autowired
    private AddMoneyRepository addMoneyRepository;

    /**
     * Charges an order once: a retried charge for an order already paid here answers the
     * original payment instead of charging twice.
     */
    @Override
    public Response pay(Payment info, HttpHeaders headers) {
        BigDecimal amount;
        try {
            amount = new BigDecimal(info.getPrice());
        } catch (NumberFormatException | NullPointerException e) {
            return new Response<>(0, "Malformed amount", null);
        }
        if (amount.signum() <= 0 || amount.compareTo(MAX_CHARGE) > 0) {
            return new Response<>(0, "Amount out of range", null);
        }
        Payment existing = paymentRepository.findByOrderId(info.getOrderId());
        if (existing != null) {
            LOGGER.warn("[pay] order {} already charged by payment {}", info.getOrderId(), existing.getId());
            return new Response<>(1, "Pay Success (already paid)", existing);
        }
        Payment payment = new Payment();
        payment.setId(UUID.randomUUID().toString());
        payment.setOrderId(info.getOrderId());
        payment.setPrice(amount.setScale(2, BigDecimal.ROUND_HALF_UP).toPlainString());
        payment.setUserId(info.getUserId());
        paymentRepository.save(payment);
        return new Response<>(1, "Pay Success", payment);
    }

    @Override
    public Response addMoney(Money info, HttpHeaders headers) {
        Money money = new Money();
        money.setUserId(info.getUserId());
        money.setMoney(info.getMoney());
        addMoneyRepository.save(money);
        return new Response<>(1, "Add Money Success", money);
    }

    @Override
    public Response query(HttpHeaders headers) {
        List<Payment> payments = paymentRepository.findAll();
        if (payments == null || payments.isEmpty()) {
            return new Response<>(0, "No Content", null);
        }
        return new Response<>(1, "Query Success", payments);
    }
}
