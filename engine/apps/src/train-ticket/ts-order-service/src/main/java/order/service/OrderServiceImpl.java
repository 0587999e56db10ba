package order.service;

import edu.fudan.common.util.Response;
import order.entity.*;
import order.repository.OrderRepository;
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

import java.util.*;

@Service
public class OrderServiceImpl implements OrderService {

    private static final Logger LOGGER = LoggerFactory.getLogger(OrderServiceImpl.class);

    private static final long ONE_HOUR_MS = 3600 * 1000L;

    @Autowired
    private OrderRepository orderRepository;

    @Autowired
    private RestTemplate restTemplate;

    @Override
    public Response getSoldTickets(Seat seatRequest, HttpHeaders headers) {
        ArrayList<Order> list = orderRepository.findByTravelDateAndTrainNumber(seatRequest.getTravelDate(),
                seatRequest.getTrainNumber());
        Set<Ticket> ticketSet = new HashSet<>();
        for (Order tempOrder : list) {
            // cancelled and refunded orders free their seat
            if (tempOrder.getStatus() == OrderStatus.CANCEL.getCode()
                    || tempOrder.getStatus() == OrderStatus.REFUNDS.getCode()) {
                continue;
            }
            if (tempOrder.getSeatClass() != seatRequest.getSeatType()) {
                continue;
            }
            ticketSet.add(new Ticket(Integer.parseInt(tempOrder.getSeatNumber()), tempOrder.getFrom(), tempOrder.getTo()));
        }
        LeftTicketInfo leftTicketInfo = new LeftTicketInfo();
        leftTicketInfo.setSoldTickets(ticketSet);
        return new Response<>(1, "Success", leftTicketInfo);
    }

    @Override
    public Response create(Order order, HttpHeaders headers) {
        ArrayList<Order> accountOrders = orderRepository.findByAccountId(order.getAccountId());
        for (Order o : accountOrders) {
            if (o.getTrainNumber().equals(order.getTrainNumber())
                    && sameDay(o.getTravelDate(), order.getTravelDate())
                    && o.getStatus() != OrderStatus.CANCEL.getCode()
                    && o.getContactsDocumentNumber().equals(order.getContactsDocumentNumber())) {
                return new Response<>(0, "Order already exist", order);
            }
        }
        order.setId(UUID.randomUUID());
        order.setBoughtDate(new Date());
        order.setStatus(OrderStatus.NOTPAID.getCode());
        orderRepository.save(order);
        return new Response<>(1, "Success", order);
    }

    @Override
    public Response queryOrdersForRefresh(OrderInfo qi, String accountId, HttpHeaders headers) {
        ArrayList<Order> orders = filterOrders(orderRepository.findByAccountId(UUID.fromString(accountId)), qi);
        if (orders.isEmpty()) {
            return new Response<>(1, "Query Orders For Refresh Success", orders);
        }
        // orders store station ids; the page shows names
        List<String> stationIds = new ArrayList<>();
        for (Order order : orders) {
            stationIds.add(order.getFrom());
            stationIds.add(order.getTo());
        }
        ResponseEntity<Response<List<String>>> re = restTemplate.exchange(
                "http://ts-station-service:12345/api/v1/stationservice/stations/namelist",
                HttpMethod.POST, new HttpEntity<>(stationIds, headers),
                new ParameterizedTypeReference<Response<List<String>>>() {
                });
        List<String> names = re.getBody() != null ? re.getBody().getData() : null;
        if (names == null || names.size() != stationIds.size()) {
            return new Response<>(0, "Station names unavailable", null);
        }
        for (int i = 0; i < orders.size(); i++) {
            orders.get(i).setFrom(names.get(i * 2));
            orders.get(i).setTo(names.get(i * 2 + 1));
        }
        return new Response<>(1, "Query Orders For Refresh Success", orders);
    }

    /** Optional filters of the "my orders" page: status, bought-date and travel-date ranges. */
    ArrayList<Order> filterOrders(ArrayList<Order> list, OrderInfo qi) {
        ArrayList<Order> result = new ArrayList<>();
        for (Order o : list) {
            if (qi.isEnableStateQuery() && o.getStatus() != qi.getState()) {
                continue;
            }
            if (qi.isEnableBoughtDateQuery()
                    && (o.getBoughtDate().before(qi.getBoughtDateStart()) || o.getBoughtDate().after(qi.getBoughtDateEnd()))) {
                continue;
            }
            if (qi.isEnableTravelDateQuery() && !o.getTravelDate().before(qi.getTravelDateEnd())) {
                continue;
            }
            result.add(o);
        }
        return result;
    }

    @Override
    public Response queryAlreadySoldOrders(Date travelDate, String trainNumber, HttpHeaders headers) {
        ArrayList<Order> orders = orderRepository.findByTravelDateAndTrainNumber(travelDate, trainNumber);
        SoldTicket cstr = new SoldTicket();
        cstr.setTravelDate(travelDate);
        cstr.setTrainNumber(trainNumber);
        for (Order order : orders) {
            if (order.getStatus() >= OrderStatus.CHANGE.getCode() && order.getStatus() != OrderStatus.USED.getCode()) {
                continue;  // rebooked-away, cancelled and refunded orders hold no seat
            }
            if (order.getSeatClass() == SeatClass.FIRSTCLASS.getCode()) {
                cstr.setFirstClassSeat(cstr.getFirstClassSeat() + 1);
            } else if (order.getSeatClass() == SeatClass.SECONDCLASS.getCode()) {
                cstr.setSecondClassSeat(cstr.getSecondClassSeat() + 1);
            } else if (order.getSeatClass() == SeatClass.BUSINESS.getCode()) {
                cstr.setBusinessSeat(cstr.getBusinessSeat() + 1);
            }
        }
        return new Response<>(1, "Success", cstr);
    }

    @Override
    public Response getOrderById(String orderId, HttpHeaders headers) {
        Order order = orderRepository.findById(UUID.fromString(orderId));
        if (order == null) {
            return new Response<>(0, "No Content by this orderId", null);
        }
        return new Response<>(1, "Success", order);
    }

    @Override
    public Response modifyOrder(String orderId, int status, HttpHeaders headers) {
        Order order = orderRepository.findById(UUID.fromString(orderId));
        if (order == null) {
            return new Response<>(0, "Order Not Found", null);
        }
        OrderStatus current = OrderStatus.of(order.getStatus());
        OrderStatus next = OrderStatus.of(status);
        if (next == null || current == null || !current.canMoveTo(next)) {
            LOGGER.warn("[modifyOrder] {} refused: {} -> {}", orderId, order.getStatus(), status);
            return new Response<>(0, "Order status change not allowed", null);
        }
        order.setStatus(status);
        orderRepository.save(order);
        return new Response<>(1, "Modify Order Success", order);
    }

    @Override
    public Response checkSecurityAboutOrder(Date dateFrom, String accountId, HttpHeaders headers) {
        OrderSecurity result = new OrderSecurity();
        ArrayList<Order> orders = orderRepository.findByAccountId(UUID.fromString(accountId));
        int countOrderInOneHour = 0;
        int countTotalValidOrder = 0;
        for (Order order : orders) {
            if (order.getStatus() == OrderStatus.NOTPAID.getCode()
                    || order.getStatus() == OrderStatus.PAID.getCode()
                    || order.getStatus() == OrderStatus.COLLECTED.getCode()) {
                countTotalValidOrder += 1;
            }
            if (order.getBoughtDate().getTime() > dateFrom.getTime() - ONE_HOUR_MS) {
                countOrderInOneHour += 1;
            }
        }
        result.setOrderNumInLastOneHour(countOrderInOneHour);
        result.setOrderNumOfValidOrder(countTotalValidOrder);
        return new Response<>(1, "Check Security Success . ", result);
    }

    @Override
    public Response saveChanges(Order order, HttpHeaders headers) {
        Order oldOrder = orderRepository.findById(order.getId());
        if (oldOrder == null) {
            return new Response<>(0, "Order Not Found, Can't Modify", null);
        }
        oldOrder.setStatus(order.getStatus());
        oldOrder.setTravelDate(order.getTravelDate());
        oldOrder.setTravelTime(order.getTravelTime());
        oldOrder.setTrainNumber(order.getTrainNumber());
        oldOrder.setSeatClass(order.getSeatClass());
        oldOrder.setSeatNumber(order.getSeatNumber());
        oldOrder.setFrom(order.getFrom());
        oldOrder.setTo(order.getTo());
        oldOrder.setPrice(order.getPrice());
        orderRepository.save(oldOrder);
        return new Response<>(1, "Success", oldOrder);
    }

    @Override
    public Response updateOrder(Order order, HttpHeaders headers) {
        Order oldOrder = orderRepository.findById(order.getId());
        if (oldOrder == null) {
            return new Response<>(0, "Order Not Found, Can't Update", null);
        }
        orderRepository.save(order);
        return new Response<>(1, "Admin Update Order Success", order);
    }

    @Override
    public Response deleteOrder(String orderId, HttpHeaders headers) {
        UUID id = UUID.fromString(orderId);
        Order order = orderRepository.findById(id);
        if (order == null) {
            return new Response<>(0, "Order Not Exist.", null);
        }
        orderRepository.deleteById(id);
        return new Response<>(1, "Delete Order Success", order);
    }

    @Override
    public Response getAllOrders(HttpHeaders headers) {
        ArrayList<Order> orders = orderRepository.findAll();
        if (orders == null || orders.isEmpty()) {
            return new Response<>(0, "No Content", null);
        }
        return new Response<>(1, "Success", orders);
    }

    private static boolean sameDay(Date a, Date b) {
        Calendar ca = Calendar.getInstance();
        ca.setTime(a);
        Calendar cb = Calendar.getInstance();
        cb.setTime(b);
        return ca.get(Calendar.YEAR) == cb.get(Calendar.YEAR) && ca.get(Calendar.DAY_OF_YEAR) == cb.get(Calendar.DAY_OF_YEAR);
    }
}
