package seat.service;

import edu.fudan.common.util.Response;
import seat.entity.*;
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

import java.security.SecureRandom;
import java.util.*;

@Service
public class SeatServiceImpl implements SeatService {

    private static final Logger LOGGER = LoggerFactory.getLogger(SeatServiceImpl.class);

    /** Classes counted against a train type's comfort seats: first class, soft seat, soft berth. */
    private static final Set<Integer> COMFORT_CLASSES = new HashSet<>(Arrays.asList(2, 5, 7));

    /** Config key: share of seats reserved for passengers riding the whole route. */
    private static final String DIRECT_PROPORTION = "DirectTicketAllocationProportion";

    /** How many random draws before falling back to a linear scan for a free seat. */
    private static final int RANDOM_ATTEMPTS = 20;

    private final Random rand = new SecureRandom();

    @Autowired
    private RestTemplate restTemplate;

    /** Where the trip's route, sold tickets and train type live: by train class letter. */
    private static final class Sources {
        final String route;
        final String sold;
        final String trainType;

        Sources(String trainNumber) {
            if (trainNumber.startsWith("G") || trainNumber.startsWith("D")) {
                route = "http://ts-travel-service:12346/api/v1/travelservice/routes/" + trainNumber;
                sold = "http://ts-order-service:12031/api/v1/orderservice/order/tickets";
                trainType = "http://ts-travel-service:12346/api/v1/travelservice/train_types/" + trainNumber;
            } else {
                route = "http://ts-travel2-service:16346/api/v1/travel2service/routes/" + trainNumber;
                sold = "http://ts-order-other-service:12032/api/v1/orderOtherService/orderOther/tickets";
                trainType = "http://ts-travel2-service:16346/api/v1/travel2service/train_types/" + trainNumber;
            }
        }
    }

    @Override
    public Response distributeSeat(Seat seatRequest, HttpHeaders headers) {
        Sources src = new Sources(seatRequest.getTrainNumber());
        Route route = fetch(src.route, HttpMethod.GET, null, headers, new ParameterizedTypeReference<Response<Route>>() {
        });
        LeftTicketInfo sold = fetch(src.sold, HttpMethod.POST, seatRequest, headers,
                new ParameterizedTypeReference<Response<LeftTicketInfo>>() {
                });
        TrainType trainType = fetch(src.trainType, HttpMethod.GET, null, headers,
                new ParameterizedTypeReference<Response<TrainType>>() {
                });
        int total = COMFORT_CLASSES.contains(seatRequest.getSeatType()) ? trainType.getConfortClass() : trainType.getEconomyClass();
        List<String> stations = route.getStations();
        int start = stations.indexOf(seatRequest.getStartStation());
        int dest = stations.indexOf(seatRequest.getDestStation());

        Ticket ticket = new Ticket();
        ticket.setStartStation(seatRequest.getStartStation());
        ticket.setDestStation(seatRequest.getDestStation());

        Set<Integer> taken = new HashSet<>();
        for (Ticket t : sold.getSoldTickets()) {
            if (overlaps(stations.indexOf(t.getStartStation()), stations.indexOf(t.getDestStation()), start, dest)) {
                taken.add(t.getSeatNo());
            }
        }
        // reuse a seat freed before our leg starts: keeps later legs bookable
        for (Ticket t : sold.getSoldTickets()) {
            if (stations.indexOf(t.getDestStation()) <= start && !taken.contains(t.getSeatNo())) {
                ticket.setSeatNo(t.getSeatNo());
                return new Response<>(1, "Use the previous distributed seat number!", ticket);
            }
        }
        if (taken.size() >= total) {
            return new Response<>(0, "No seat left in this class", null);
        }
        int seat = -1;
        for (int i = 0; i < RANDOM_ATTEMPTS && seat < 0; i++) {
            int candidate = rand.nextInt(total) + 1;
            if (!taken.contains(candidate)) {
                seat = candidate;
            }
        }
        for (int candidate = 1; seat < 0 && candidate <= total; candidate++) {
            if (!taken.contains(candidate)) {
                seat = candidate;
            }
        }
        ticket.setSeatNo(seat);
        return new Response<>(1, "Use a new seat number!", ticket);
    }

    /**
     * Seats free for [start, dest): seats in the pool for this kind of ticket, minus sold
     * tickets whose leg overlaps ours. Direct tickets (first to last station) draw from
     * DirectTicketAllocationProportion of the seats, partial legs from the rest.
     */
    @Override
    public Response getLeftTicketOfInterval(Seat seatRequest, HttpHeaders headers) {
        Sources src = new Sources(seatRequest.getTrainNumber());
        Route route = fetch(src.route, HttpMethod.GET, null, headers, new ParameterizedTypeReference<Response<Route>>() {
        });
        LeftTicketInfo sold = fetch(src.sold, HttpMethod.POST, seatRequest, headers,
                new ParameterizedTypeReference<Response<LeftTicketInfo>>() {
                });
        TrainType trainType = fetch(src.trainType, HttpMethod.GET, null, headers,
                new ParameterizedTypeReference<Response<TrainType>>() {
                });
        int total = COMFORT_CLASSES.contains(seatRequest.getSeatType()) ? trainType.getConfortClass() : trainType.getEconomyClass();
        List<String> stations = route.getStations();
        int start = stations.indexOf(seatRequest.getStartStation());
        int dest = stations.indexOf(seatRequest.getDestStation());
        if (start < 0 || dest <= start) {
            return new Response<>(0, "Leg is not on this route", 0);
        }

        double directPart = getDirectProportion(headers);
        boolean direct = start == 0 && dest == stations.size() - 1;
        int pool = (int) (total * (direct ? directPart : 1.0 - directPart));

        int overlapping = 0;
        for (Ticket t : sold.getSoldTickets()) {
            if (overlaps(stations.indexOf(t.getStartStation()), stations.indexOf(t.getDestStation()), start, dest)) {
                overlapping++;
            }
        }
        int left = Math.max(pool - overlapping, 0);
        return new Response<>(1, "Get Left Ticket of Internal Success", left);
    }

    /** Legs [a1, a2) and [b1, b2) share at least one section of track. */
    static boolean overlaps(int a1, int a2, int b1, int b2) {
        return a1 < b2 && b1 < a2;
    }

    private double getDirectProportion(HttpHeaders headers) {
        ResponseEntity<Response<Config>> re = restTemplate.exchange(
                "http://ts-config-service:15679/api/v1/configservice/configs/" + DIRECT_PROPORTION,
                HttpMethod.GET, new HttpEntity(null, headers), new ParameterizedTypeReference<Response<Config>>() {
                });
        Response<Config> body = re.getBody();
        if (body == null || body.getStatus() != 1) {
            LOGGER.warn("[getDirectProportion] config missing, reserving half the seats for direct tickets");
            return 0.5;
        }
        return Double.parseDouble(body.getData().getValue());
    }

    private <T> T fetch(String url, HttpMethod method, Object body, HttpHeaders headers,
                        ParameterizedTypeReference<Response<T>> type) {
        ResponseEntity<Response<T>> re = restTemplate.exchange(url, method, new HttpEntity<>(body, headers), type);
        if (re.getBody() == null || re.getBody().getData() == null) {
            throw new IllegalStateException("no data from " + url);
        }
        return re.getBody().getData();
    }
}
