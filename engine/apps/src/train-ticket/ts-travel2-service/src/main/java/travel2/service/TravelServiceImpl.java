package travel2.service;

import edu.fudan.common.util.Response;
import travel2.entity.*;
import travel2.repository.TripRepository;
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

import java.time.*;
import java.time.format.DateTimeFormatter;
import java.util.*;
import java.util.stream.Collectors;

@Service
public class TravelServiceImpl implements TravelService {

    private static final Logger LOGGER = LoggerFactory.getLogger(TravelServiceImpl.class);

    // seats counted for the search page: soft seat (comfort) and hard seat (economy)
    private static final int SOFT_SEAT = 5;
    private static final int HARD_SEAT = 4;

    /** Ordinary trains stop this long at each intermediate station. */
    private static final int DWELL_MINUTES = 4;

    private static final Set<Character> TYPES = new HashSet<>(Arrays.asList('Z', 'T', 'K'));
    private static final DateTimeFormatter DAY = DateTimeFormatter.ofPattern("yyyy-MM-dd");

    @Autowired
    private TripRepository repository;

    @Autowired
    private RestTemplate restTemplate;

    @Override
    public Response query(TripInfo info, HttpHeaders headers) {
        LocalDate day = toLocalDate(info.getDepartureTime());
        if (day.isBefore(LocalDate.now())) {
            return new Response<>(0, "Departure date is in the past", Collections.emptyList());
        }
        String from = stationId(info.getStartingPlace(), headers);
        String to = stationId(info.getEndPlace(), headers);
        List<TripResponse> result = repository.findAll().stream()
                .map(trip -> new AbstractMap.SimpleEntry<>(trip, route(trip.getRouteId(), headers)))
                .filter(e -> passes(e.getValue(), from, to))
                .map(e -> tickets(e.getKey(), e.getValue(), from, to, info.getStartingPlace(), info.getEndPlace(),
                        info.getDepartureTime(), headers))
                .filter(Objects::nonNull)
                .sorted(Comparator.comparing(TripResponse::getStartingTime))
                .collect(Collectors.toList());
        return new Response<>(1, "Success Query", result);
    }

    static boolean passes(Route route, String from, String to) {
        List<String> stations = route.getStations();
        return stations.contains(from) && stations.contains(to) && stations.indexOf(from) < stations.indexOf(to);
    }

    @Override
    public Response getTripAllDetailInfo(TripAllDetailInfo gtdi, HttpHeaders headers) {
        Trip trip = repository.findByTripId(new TripId(gtdi.getTripId()));
        if (trip == null) {
            return new Response<>(0, "Trip not found", null);
        }
        String from = stationId(gtdi.getFrom(), headers);
        String to = stationId(gtdi.getTo(), headers);
        Route route = route(trip.getRouteId(), headers);
        TripResponse response = tickets(trip, route, from, to, gtdi.getFrom(), gtdi.getTo(), gtdi.getTravelDate(), headers);
        if (response == null) {
            return new Response<>(0, "Trip is not bookable on that date", null);
        }
        TripAllDetail detail = new TripAllDetail();
        detail.setTrip(trip);
        detail.setTripResponse(response);
        return new Response<>(1, "Success", detail);
    }

    private TripResponse tickets(Trip trip, Route route, String fromId, String toId, String fromName, String toName,
                                 Date departure, HttpHeaders headers) {
        ResponseEntity<Response<TravelResult>> re = restTemplate.exchange(
                "http://ts-ticketinfo-service:15681/api/v1/ticketinfoservice/ticketinfo",
                HttpMethod.POST, new HttpEntity<>(new Travel(trip, fromName, toName, departure), headers),
                new ParameterizedTypeReference<Response<TravelResult>>() {
                });
        TravelResult fares = re.getBody() == null ? null : re.getBody().getData();
        if (fares == null) {
            return null;
        }
        ResponseEntity<Response<SoldTicket>> reSold = restTemplate.exchange(
                "http://ts-order-other-service:12032/api/v1/orderOtherService/orderOther/"
                        + toLocalDate(departure).format(DAY) + "/" + trip.getTripId().toString(),
                HttpMethod.GET, new HttpEntity(null, headers),
                new ParameterizedTypeReference<Response<SoldTicket>>() {
                });
        if (reSold.getBody() == null || reSold.getBody().getStatus() != 1) {
            return null;
        }
        TrainType trainType = trainType(trip.getTrainTypeId(), headers);

        int i = route.getStations().indexOf(fromId);
        int j = route.getStations().indexOf(toId);
        TripResponse response = new TripResponse();
        response.setTripId(trip.getTripId());
        response.setTrainTypeId(trip.getTrainTypeId());
        response.setStartingStation(fromName);
        response.setTerminalStation(toName);
        response.setStartingTime(arrivalAt(trip.getStartingTime(), route, i, trainType.getAverageSpeed()));
        response.setEndTime(arrivalAt(trip.getStartingTime(), route, j, trainType.getAverageSpeed()));
        response.setConfortClass(seatsLeft(departure, trip, fromId, toId, SOFT_SEAT, headers));
        response.setEconomyClass(seatsLeft(departure, trip, fromId, toId, HARD_SEAT, headers));
        response.setPriceForConfortClass(fares.getPrices().get("confortClass"));
        response.setPriceForEconomyClass(fares.getPrices().get("economyClass"));
        return response;
    }

    /**
     * Time at stop `index`: running time at the average speed plus a dwell at every
     * intermediate stop before it. Overnight trains may arrive on a later day.
     */
    static Date arrivalAt(Date start, Route route, int index, int speedKmh) {
        int km = route.getDistances().get(index) - route.getDistances().get(0);
        long minutes = Math.round(60.0 * km / speedKmh) + (long) Math.max(index - 1, 0) * DWELL_MINUTES;
        return Date.from(start.toInstant().plus(Duration.ofMinutes(minutes)));
    }

    private int seatsLeft(Date date, Trip trip, String from, String to, int seatType, HttpHeaders headers) {
        ResponseEntity<Response<Integer>> re = restTemplate.exchange(
                "http://ts-seat-service:18898/api/v1/seatservice/seats/left_tickets",
                HttpMethod.POST, new HttpEntity<>(new Seat(date, trip.getTripId().toString(), from, to, seatType), headers),
                new ParameterizedTypeReference<Response<Integer>>() {
                });
        Integer left = re.getBody() == null ? null : re.getBody().getData();
        return left == null ? 0 : left;
    }

    @Override
    public Response getRouteByTripId(String tripId, HttpHeaders headers) {
        Trip trip = repository.findByTripId(new TripId(tripId));
        return trip == null ? new Response<>(0, "Trip not found: " + tripId, null)
                : new Response<>(1, "Success", route(trip.getRouteId(), headers));
    }

    @Override
    public Response getTrainTypeByTripId(String tripId, HttpHeaders headers) {
        Trip trip = repository.findByTripId(new TripId(tripId));
        return trip == null ? new Response<>(0, "Trip not found: " + tripId, null)
                : new Response<>(1, "Success", trainType(trip.getTrainTypeId(), headers));
    }

    @Override
    public Response getTripByRoute(ArrayList<String> routeIds, HttpHeaders headers) {
        List<List<Trip>> out = routeIds.stream()
                .map(id -> Optional.ofNullable(repository.findByRouteId(id)).orElse(new ArrayList<>()))
                .collect(Collectors.toList());
        return new Response<>(1, "Success", out);
    }

    @Override
    public Response create(TravelInfo info, HttpHeaders headers) {
        if (info.getTripId() == null || info.getTripId().isEmpty() || !TYPES.contains(info.getTripId().charAt(0))) {
            return new Response<>(0, "ts-travel2-service keeps Z, T and K trips only", null);
        }
        TripId tripId = new TripId(info.getTripId());
        if (repository.findByTripId(tripId) != null) {
            return new Response<>(0, "Trip " + info.getTripId() + " already exists", null);
        }
        Trip trip = new Trip(tripId, info.getTrainTypeId(), info.getStartingStationId(), info.getStationsId(),
                info.getTerminalStationId(), info.getStartingTime(), info.getEndTime());
        trip.setRouteId(info.getRouteId());
        repository.save(trip);
        return new Response<>(1, "Create trip info:" + info.getTripId() + ".", null);
    }

    @Override
    public Response adminQueryAll(HttpHeaders headers) {
        List<AdminTrip> trips = repository.findAll().stream().map(trip -> {
            AdminTrip a = new AdminTrip();
            a.setTrip(trip);
            a.setRoute(route(trip.getRouteId(), headers));
            a.setTrainType(trainType(trip.getTrainTypeId(), headers));
            return a;
        }).collect(Collectors.toList());
        return new Response<>(1, "Travel Service Admin Query All Travel Success", trips);
    }

    private static LocalDate toLocalDate(Date date) {
        return date.toInstant().atZone(ZoneId.systemDefault()).toLocalDate();
    }

    private String stationId(String name, HttpHeaders headers) {
        ResponseEntity<Response<String>> re = restTemplate.exchange(
                "http://ts-ticketinfo-service:15681/api/v1/ticketinfoservice/ticketinfo/" + name,
                HttpMethod.GET, new HttpEntity(null, headers), new ParameterizedTypeReference<Response<String>>() {
                });
        return re.getBody().getData();
    }

    private Route route(String routeId, HttpHeaders headers) {
        ResponseEntity<Response<Route>> re = restTemplate.exchange(
                "http://ts-route-service:11178/api/v1/routeservice/routes/" + routeId,
                HttpMethod.GET, new HttpEntity(null, headers), new ParameterizedTypeReference<Response<Route>>() {
                });
        return re.getBody().getData();
    }

    private TrainType trainType(String id, HttpHeaders headers) {
        ResponseEntity<Response<TrainType>> re = restTemplate.exchange(
                "http://ts-train-service:14567/api/v1/trainservice/trains/" + id,
                HttpMethod.GET, new HttpEntity(null, headers), new ParameterizedTypeReference<Response<TrainType>>() {
                });
        return re.getBody().getData();
    }
}
