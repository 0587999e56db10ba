package other.service;

import edu.fudan.common.util.Response;
import other.entity.*;
import other.repository.OrderOtherRepository;
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

import java.time.LocalDate;
import java.time.ZoneId;
import java.util.*;
import java.util.stream.Collectors;

@Service
public class OrderOtherServiceImpl implements OrderOtherService {

    private static final Logger LOGGER = LoggerFactory.getLogger(OrderOtherServiceImpl.class);

    // status codes (same numbering as ts-order-service)
    static final int NOT_PAID = 0, PAID = 1, COLLECTED = 2, CHANGE = 3, CANCEL = 4, REFUNDS = 5, USED = 6;

    // seat classes sold on ordinary trains
    static final int HARD_SEAT = 4, SOFT_SEAT = 5, HARD_BED = 6, SOFT_BED = 7;

    /** Sleeper berths on ordinary trains are numbered per compartment of 6 (hard) or 4 (soft). */
    static final int HARD_BED_PER_COMPARTMENT = 6, SOFT_BED_PER_COMPARTMENT = 4;

    /** Statuses that hold a seat on the train. */
    private static final Set<Integer> HOLDS_SEAT = new HashSet<>(Arrays.asList(NOT_PAID, PAID, COLLECTED, USED));

    @Autowired
    private OrderOtherRepository orderOtherRepository;

    @Autowired
    private RestTemplate restTemplate;

    @Override
    public Response getSoldTickets(Seat seatRequest, HttpHeaders headers) {
        Set<Ticket> sold = orderOtherRepository
                .findByTravelDateAndTrainNumber(seatRequest.getTravelDate(), seatRequest.getTrainNumber())
                .stream()
                .filter(o -> HOLDS_SEAT.contains(o.getStatus()))
                .filter(o -> o.getSeatClass() == seatRequest.getSeatType())
                .map(o -> new Ticket(Integer.parseInt(o.getSeatNumber()), o.getFrom(), o.getTo()))
                .collect(Collectors.toSet());
        LeftTicketInfo info = new LeftTicketInfo();
        info.setSoldTickets(sold);
        return new Response<>(1, "Success", info);
    }

    @Override
    public Response create(Order order, HttpHeaders headers) {
        if (order.getSeatClass() < HARD_SEAT || order.getSeatClass() > SOFT_BED) {
            return new Response<>(0, "Seat class " + order.getSeatClass() + " is not sold on ordinary trains", null);
        }
        // the same seat on the same train and day can be sold twice only for disjoint legs,
        // which ts-seat-service already checked; here we only refuse an exact duplicate
        boolean duplicate = orderOtherRepository
                .findByTravelDateAndTrainNumber(order.getTravelDate(), order.getTrainNumber())
                .stream()
                .anyMatch(o -> HOLDS_SEAT.contains(o.getStatus())
                        && o.getSeatClass() == order.getSeatClass()
                        && o.getSeatNumber().equals(order.getSeatNumber())
                        && o.getFrom().equals(order.getFrom()));
        if (duplicate) {
            return new Response<>(0, "Order already exist", null);
        }
        order.setId(UUID.randomUUID());
        order.setBoughtDate(new Date());
        order.setStatus(NOT_PAID);
        if (order.getSeatClass() == HARD_BED || order.getSeatClass() == SOFT_BED) {
            order.setSeatNumber(berthLabel(order.getSeatClass(), Integer.parseInt(order.getSeatNumber())));
        }
        orderOtherRepository.save(order);
        return new Response<>(1, "Success", order);
    }

    /** "12" in a hard sleeper becomes "12-2-upper": compartment 2, upper berth. */
    static String berthLabel(int seatClass, int number) {
        int perCompartment = seatClass == HARD_BED ? HARD_BED_PER_COMPARTMENT : SOFT_BED_PER_COMPARTMENT;
        int compartment = (number - 1) / perCompartment + 1;
        int position = (number - 1) % perCompartment;
        String[] berths = seatClass == HARD_BED
                ? new String[]{"lower", "lower", "middle", "middle", "upper", "upper"}
                : new String[]{"lower", "lower", "upper", "upper"};
        return number + "-" + compartment + "-" + berths[position];
    }

    @Override
    public Response queryOrdersForRefresh(QueryInfo qi, String accountId, HttpHeaders headers) {
        List<Order> orders = orderOtherRepository.findByAccountId(UUID.fromString(accountId)).stream()
                .filter(o -> !qi.isEnableStateQuery() || o.getStatus() == qi.getState())
                .filter(o -> !qi.isEnableTravelDateQuery() || o.getTravelDate().before(qi.getTravelDateEnd()))
                .sorted(Comparator.comparing(Order::getTravelDate).reversed())
                .collect(Collectors.toList());
        if (orders.isEmpty()) {
            return new Response<>(1, "Success", orders);
        }
        List<String> ids = orders.stream()
                .flatMap(o -> Arrays.asList(o.getFrom(), o.getTo()).stream())
                .collect(Collectors.toList());
        ResponseEntity<Response<List<String>>> re = restTemplate.exchange(
                "http://ts-station-service:12345/api/v1/stationservice/stations/namelist",
                HttpMethod.POST, new HttpEntity<>(ids, headers),
                new ParameterizedTypeReference<Response<List<String>>>() {
                });
        List<String> names = re.getBody() == null ? null : re.getBody().getData();
        if (names == null || names.size() != ids.size()) {
            LOGGER.error("[queryOrdersForRefresh] asked {} station names, got {}", ids.size(),
                    names == null ? 0 : names.size());
            return new Response<>(0, "Station names unavailable", null);
        }
        Iterator<String> it = names.iterator();
        for (Order o : orders) {
            o.setFrom(it.next());
            o.setTo(it.next());
        }
        return new Response<>(1, "Success", orders);
    }

    @Override
    public Response queryAlreadySoldOrders(Date travelDate, String trainNumber, HttpHeaders headers) {
        Map<Integer, Long> byClass = orderOtherRepository.findByTravelDateAndTrainNumber(travelDate, trainNumber)
                .stream()
                .filter(o -> HOLDS_SEAT.contains(o.getStatus()))
                .collect(Collectors.groupingBy(Order::getSeatClass, Collectors.counting()));
        SoldTicket cstr = new SoldTicket();
        cstr.setTravelDate(travelDate);
        cstr.setTrainNumber(trainNumber);
        cstr.setHardSeat(byClass.getOrDefault(HARD_SEAT, 0L).intValue());
        cstr.setSoftSeat(byClass.getOrDefault(SOFT_SEAT, 0L).intValue());
        cstr.setHardBed(byClass.getOrDefault(HARD_BED, 0L).intValue());
        cstr.setSoftBed(byClass.getOrDefault(SOFT_BED, 0L).intValue());
        return new Response<>(1, "Success", cstr);
    }

    @Override
    public Response getOrderById(UUID orderId, HttpHeaders headers) {
        Order order = orderOtherRepository.findById(orderId);
        return order == null ? new Response<>(0, "Order Not Found", null) : new Response<>(1, "Success", order);
    }

    @Override
    public Response modifyOrder(UUID orderId, int status, HttpHeaders headers) {
        Order order = orderOtherRepository.findById(orderId);
        if (order == null) {
            return new Response<>(0, "Order Not Found", null);
        }
        boolean allowed;
        switch (order.getStatus()) {
            case NOT_PAID: allowed = status == PAID || status == CANCEL; break;
            case PAID: allowed = status == COLLECTED || status == CHANGE || status == CANCEL; break;
            case CHANGE: allowed = status == COLLECTED || status == CANCEL; break;
            case COLLECTED: allowed = status == USED; break;
            case CANCEL: allowed = status == REFUNDS; break;
            default: allowed = false;
        }
        if (!allowed) {
            return new Response<>(0, "Order status change not allowed: " + order.getStatus() + " -> " + status, null);
        }
        order.setStatus(status);
        orderOtherRepository.save(order);
        return new Response<>(1, "Success", order);
    }

    @Override
    public Response checkSecurityAboutOrder(Date checkDate, String accountId, HttpHeaders headers) {
        List<Order> orders = orderOtherRepository.findByAccountId(UUID.fromString(accountId));
        long lastHour = orders.stream()
                .filter(o -> checkDate.getTime() - o.getBoughtDate().getTime() < 3600 * 1000L)
                .count();
        LocalDate today = checkDate.toInstant().atZone(ZoneId.systemDefault()).toLocalDate();
        long valid = orders.stream()
                .filter(o -> o.getStatus() == NOT_PAID || o.getStatus() == PAID || o.getStatus() == COLLECTED)
                .filter(o -> !o.getTravelDate().toInstant().atZone(ZoneId.systemDefault()).toLocalDate().isBefore(today))
                .count();
        OrderSecurity result = new OrderSecurity();
        result.setOrderNumInLastOneHour((int) lastHour);
        result.setOrderNumOfValidOrder((int) valid);
        return new Response<>(1, "Success", result);
    }

    @Override
    public Response saveChanges(Order order, HttpHeaders headers) {
        Order stored = orderOtherRepository.findById(order.getId());
        if (stored == null) {
            return new Response<>(0, "Order Not Found", null);
        }
        stored.setStatus(order.getStatus());
        stored.setTravelDate(order.getTravelDate());
        stored.setTravelTime(order.getTravelTime());
        stored.setTrainNumber(order.getTrainNumber());
        stored.setSeatClass(order.getSeatClass());
        stored.setSeatNumber(order.getSeatNumber());
        stored.setFrom(order.getFrom());
        stored.setTo(order.getTo());
        stored.setPrice(order.getPrice());
        orderOtherRepository.save(stored);
        return new Response<>(1, "Success", stored);
    }

    @Override
    public Response updateOrder(Order order, HttpHeaders headers) {
        if (orderOtherRepository.findById(order.getId()) == null) {
            return new Response<>(0, "Order Not Found, Can't Update", null);
        }
        orderOtherRepository.save(order);
        return new Response<>(1, "Success", order);
    }

    @Override
    public Response deleteOrder(UUID orderId, HttpHeaders headers) {
        Order order = orderOtherRepository.findById(orderId);
        if (order == null) {
            return new Response<>(0, "Order Not Exist.", null);
        }
        if (order.getStatus() == COLLECTED || order.getStatus() == USED) {
            return new Response<>(0, "A collected or used ticket cannot be deleted", null);
        }
        orderOtherRepository.deleteById(orderId);
        return new Response<>(1, "Delete Order Success", order);
    }

    @Override
    public Response getAllOrders(HttpHeaders headers) {
        List<Order> orders = orderOtherRepository.findAll();
        return orders.isEmpty() ? new Response<>(0, "No Content", null) : new Response<>(1, "Success", orders);
    }
}
