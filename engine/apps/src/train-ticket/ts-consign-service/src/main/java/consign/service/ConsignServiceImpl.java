package consign.service;

import consign.entity.Consign;
import consign.entity.ConsignRecord;
import consign.repository.ConsignRepository;
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

import java.text.SimpleDateFormat;
import java.util.Date;
import java.util.List;
import java.util.UUID;
import java.util.regex.Pattern;

@Service
public class ConsignServiceImpl implements ConsignService {

    private static final Logger LOGGER = LoggerFactory.getLogger(ConsignServiceImpl.class);

    private static final Pattern PHONE = Pattern.compile("^\\+?[0-9]{7,15}$");

    @Autowired
    private ConsignRepository repository;

    @Autowired
    private RestTemplate restTemplate;

    @Override
    public Response insertConsignRecord(Consign consignRequest, HttpHeaders headers) {
        String problem = validate(consignRequest);
        if (problem != null) {
            return new Response<>(0, problem, null);
        }
        Double price = queryPrice(consignRequest.getWeight(), consignRequest.isWithin(), headers);
        if (price == null) {
            return new Response<>(0, "Consign price unavailable", null);
        }
        ConsignRecord consignRecord = new ConsignRecord();
        consignRecord.setId(UUID.randomUUID());
        consignRecord.setOrderId(consignRequest.getOrderId());
        consignRecord.setAccountId(consignRequest.getAccountId());
        consignRecord.setHandleDate(consignRequest.getHandleDate());
        consignRecord.setTargetDate(consignRequest.getTargetDate());
        consignRecord.setFrom(consignRequest.getFrom());
        consignRecord.setTo(consignRequest.getTo());
        consignRecord.setConsignee(consignRequest.getConsignee());
        consignRecord.setPhone(consignRequest.getPhone());
        consignRecord.setWeight(consignRequest.getWeight());
        consignRecord.setPrice(price);
        repository.save(consignRecord);
        LOGGER.info("[insertConsignRecord] order {} consigned {} kg for {}", consignRequest.getOrderId(),
                consignRequest.getWeight(), price);
        return new Response<>(1, "You have consigned successfully! The price is " + price, consignRecord);
    }

    @Override
    public Response updateConsignRecord(Consign consignRequest, HttpHeaders headers) {
        ConsignRecord originalRecord = repository.findById(consignRequest.getId());
        if (originalRecord == null) {
            return insertConsignRecord(consignRequest, headers);
        }
        originalRecord.setAccountId(consignRequest.getAccountId());
        originalRecord.setHandleDate(consignRequest.getHandleDate());
        originalRecord.setTargetDate(consignRequest.getTargetDate());
        originalRecord.setFrom(consignRequest.getFrom());
        originalRecord.setTo(consignRequest.getTo());
        originalRecord.setConsignee(consignRequest.getConsignee());
        originalRecord.setPhone(consignRequest.getPhone());
        // only a weight change re-prices the consignment
        if (originalRecord.getWeight() != consignRequest.getWeight()) {
            Double price = queryPrice(consignRequest.getWeight(), consignRequest.isWithin(), headers);
            if (price == null) {
                return new Response<>(0, "Consign price unavailable", null);
            }
            originalRecord.setPrice(price);
            originalRecord.setWeight(consignRequest.getWeight());
        }
        repository.save(originalRecord);
        return new Response<>(1, "Update consign success", originalRecord);
    }

    @Override
    public Response queryByAccountId(UUID accountId, HttpHeaders headers) {
        List<ConsignRecord> consignRecords = repository.findByAccountId(accountId);
        if (consignRecords == null || consignRecords.isEmpty()) {
            return new Response<>(0, "No Content according to accountId", null);
        }
        return new Response<>(1, "Find consign by account id success", consignRecords);
    }

    @Override
    public Response queryByOrderId(UUID orderId, HttpHeaders headers) {
        ConsignRecord consignRecord = repository.findByOrderId(orderId);
        if (consignRecord == null) {
            return new Response<>(0, "No Content according to order id", null);
        }
        return new Response<>(1, "Find consign by order id success", consignRecord);
    }

    String validate(Consign consign) {
        if (consign.getWeight() <= 0) {
            return "Weight must be positive";
        }
        if (consign.getPhone() == null || !PHONE.matcher(consign.getPhone()).matches()) {
            return "Malformed phone number";
        }
        if (consign.getConsignee() == null || consign.getConsignee().trim().isEmpty()) {
            return "Consignee is required";
        }
        try {
            SimpleDateFormat day = new SimpleDateFormat("yyyy-MM-dd");
            Date handle = day.parse(consign.getHandleDate());
            Date target = day.parse(consign.getTargetDate());
            if (target.before(handle)) {
                return "Target date is before the handle date";
            }
        } catch (Exception e) {
            return "Dates must be yyyy-MM-dd";
        }
        return null;
    }

    private Double queryPrice(double weight, boolean within, HttpHeaders headers) {
        ResponseEntity<Response<Double>> re = restTemplate.exchange(
                "http://ts-consign-price-service:16110/api/v1/consignpriceservice/consignprice/" + weight + "/" + within,
                HttpMethod.GET,
                new HttpEntity(null, headers),
                new ParameterizedTypeReference<Response<Double>>() {
                });
        Response<Double> body = re.getBody();
        return body != null && body.getStatus() == 1 ? body.getData() : null;
    }
}
