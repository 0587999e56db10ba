package travel.service;

import edu.fudan.common.util.Response;
import travel.entity.*;
import travel.repository.TripRepository;
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
import java.util.*;

@Service
public class TravelServiceImpl implements TravelService {

    private static final Logger LOGGER = LoggerFactory.getLogger(TravelServiceImpl.class);

    private static final int FIRST_CLASS = 2;
    private static final int SECOND_CLASS = 3;

    @Autowired
    private TripRepository repository;

    @Autowired
    private RestTemplate restTemplate;

    @Override
    public Response query(TripInfo info, HttpHeaders headers) {
        if (!afterToday(info.getDepartureTime())) {
            return new Response<>(0, "Departure date is in the past", new ArrayList<>());
        }
        String startingPlaceId = queryForStationId(info.getStartingPlace(), headers);
        String endPlaceId = queryForStationId(info.getEndPlace(), headers);
        if (startingPlaceId == null || endPlaceId == null) {
            return new Response<>(0, "Unknown station", new ArrayList<>());
        }
        List<TripResponse> list = new ArrayList<>();
        for (Trip tempTrip : repository.findAll()) {
            Route tempRoute = getRouteByRouteId(tempTrip.getRouteId(), headers);
            int start = tempRoute.getStations().indexOf(startingPlaceId);
            int end = tempRoute.getStations().indexOf(endPlaceId);
            // the trip must pass both stations, in that order
            if (start >= 0 && end > start) {
                TripResponse response = getTickets(tempTrip, tempRoute, startingPlaceId, endPlaceId,
                        info.getStartingPlace(), info.getEndPlace(), info.getDepartureTime(), headers);
                if (response != null) {
                    list.add(response);
                }
            }
        }
        list.sort(Comparator.comparing(TripResponse::getStartingTime));
        return new Response<>(1, "Success", list);
    }

    @Override
    public Response getTripAllDetailInfo(TripAllDetailInfo gtdi, HttpHeaders headers) {
        Trip trip = repository.findByTripId(new TripId(gtdi.getTripId()));
        if (trip == null) {
            return new Response<>(0, "Trip not found", null);
        }
        String startId = queryForStationId(gtdi.getFrom(), headers);
        String endId = queryForStationId(gtdi.getTo(), headers);
        Route route = getRouteByRouteId(trip.getRouteId(), headers);
        TripResponse tripResponse = getTickets(trip, route, startId, endId, gtdi.getFrom(), gtdi.getTo(),
                gtdi.getTravelDate(), headers);
        if (tripResponse == null) {
            return new Response<>(0, "No tickets for this trip and date", null);
        }
        TripAllDetail detail = new TripAllDetail();
        detail.setTrip(trip);
        detail.setTripResponse(tripResponse);
        return new Response<>(1, "Success", detail);
    }

    /** Price, sold count, times and seats left of one trip for the passenger's leg. */
    private TripResponse getTickets(Trip trip, Route route, String startingPlaceId, String endPlaceId,
                                    String startingPlaceName, String endPlaceName, Date departureTime,
                                    HttpHeaders headers) {
        if (!afterToday(departureTime)) {
            return null;
        }
        Travel query = new Travel(trip, startingPlaceName, endPlaceName, departureTime);
        ResponseEntity<Response<TravelResult>> re = restTemplate.exchange(
                "http://ts-ticketinfo-service:15681/api/v1/ticketinfoservice/ticketinfo",
                HttpMethod.POST, new HttpEntity<>(query, headers),
                new ParameterizedTypeReference<Response<TravelResult>>() {
                });
        TravelResult resultForTravel = re.getBody().getData();
        if (resultForTravel == null) {
            return null;
        }

        String date = new SimpleDateFormat("yyyy-MM-dd").format(departureTime);
        ResponseEntity<Response<SoldTicket>> reSold = restTemplate.exchange(
                "http://ts-order-service:12031/api/v1/orderservice/order/" + date + "/" + trip.getTripId().toString(),
                HttpMethod.GET, new HttpEntity(null, headers),
                new ParameterizedTypeReference<Response<SoldTicket>>() {
                });
        SoldTicket sold = reSold.getBody().getData();
        if (sold == null) {
            return null;
        }

        TrainType trainType = getTrainType(trip.getTrainTypeId(), headers);
        int indexStart = route.getStations().indexOf(startingPlaceId);
        int indexEnd = route.getStations().indexOf(endPlaceId);
        int distanceStart = route.getDistances().get(indexStart) - route.getDistances().get(0);
        int distanceEnd = route.getDistances().get(indexEnd) - route.getDistances().get(0);

        TripResponse response = new TripResponse();
        response.setTripId(trip.getTripId());
        response.setTrainTypeId(trip.getTrainTypeId());
        response.setStartingStation(startingPlaceName);
        response.setTerminalStation(endPlaceName);
        // the trip's timetable gives the departure from the first station; the passenger's
        // times follow from the distances and the train type's average speed
        response.setStartingTime(offset(trip.getStartingTime(), distanceStart, trainType.getAverageSpeed()));
        response.setEndTime(offset(trip.getStartingTime(), distanceEnd, trainType.getAverageSpeed()));
        response.setConfortClass(getRestTicketNumber(departureTime, trip.getTripId().toString(),
                startingPlaceId, endPlaceId, FIRST_CLASS, headers));
        response.setEconomyClass(getRestTicketNumber(departureTime, trip.getTripId().toString(),
                startingPlaceId, endPlaceId, SECOND_CLASS, headers));
        response.setPriceForConfortClass(resultForTravel.getPrices().get("confortClass"));
        response.setPriceForEconomyClass(resultForTravel.getPrices().get("economyClass"));
        return response;
    }

    /** Departure plus the running time over `km` at `speed` km/h, to the minute. */
    static Date offset(Date start, int km, int speed) {
        long minutes = Math.round(60.0 * km / speed);
        return new Date(start.getTime() + minutes * 60000L);
    }

    /** Today or later, comparing calendar days only. */
    static boolean afterToday(Date date) {
        if (date == null) {
            return false;
        }
        SimpleDateFormat day = new SimpleDateFormat("yyyyMMdd");
        return day.format(date).compareTo(day.format(new Date())) >= 0;
    }

    private int getRestTicketNumber(Date travelDate, String trainNumber, String startStationId, String endStationId,
                                    int seatType, HttpHeaders headers) {
        Seat seatRequest = new Seat(travelDate, trainNumber, startStationId, endStationId, seatType);
        ResponseEntity<Response<Integer>> re = restTemplate.exchange(
                "http://ts-seat-service:18898/api/v1/seatservice/seats/left_tickets",
                HttpMethod.POST, new HttpEntity<>(seatRequest, headers),
                new ParameterizedTypeReference<Response<Integer>>() {
                });
        return re.getBody().getData();
    }

    @Override
    public Response getRouteByTripId(String tripId, HttpHeaders headers) {
        Trip trip = repository.findByTripId(new TripId(tripId));
        if (trip == null) {
            return new Response<>(0, "\"[Get Route By Trip ID] Trip Not Found:\" + tripId", null);
        }
        return new Response<>(1, "Success", getRouteByRouteId(trip.getRouteId(), headers));
    }

    @Override
    public Response getTrainTypeByTripId(String tripId, HttpHeaders headers) {
        Trip trip = repository.findByTripId(new TripId(tripId));
        if (trip == null) {
            return new Response<>(0, "Trip not found: " + tripId, null);
        }
        return new Response<>(1, "Success", getTrainType(trip.getTrainTypeId(), headers));
    }

    @Override
    public Response getTripByRoute(ArrayList<String> routeIds, HttpHeaders headers) {
        ArrayList<ArrayList<Trip>> tripList = new ArrayList<>();
        for (String routeId : routeIds) {
            ArrayList<Trip> tempTripList = repository.findByRouteId(routeId);
            tripList.add(tempTripList == null ? new ArrayList<>() : tempTripList);
        }
        return new Response<>(1, "Success", tripList);
    }

    @Override
    public Response create(TravelInfo info, HttpHeaders headers) {
        TripId ti = new TripId(info.getTripId());
        if (ti.getType() != TrainTypeEnum.G && ti.getType() != TrainTypeEnum.D) {
            return new Response<>(0, "ts-travel-service keeps G and D trips only", null);
        }
        if (repository.findByTripId(ti) != null) {
            return new Response<>(0, "Trip " + info.getTripId() + " already exists", null);
        }
        Trip trip = new Trip(ti, info.getTrainTypeId(), info.getStartingStationId(), info.getStationsId(),
                info.getTerminalStationId(), info.getStartingTime(), info.getEndTime());
        trip.setRouteId(info.getRouteId());
        repository.save(trip);
        return new Response<>(1, "Create trip:" + ti.toString() + ".", null);
    }

    @Override
    public Response adminQueryAll(HttpHeaders headers) {
        List<AdminTrip> adminTrips = new ArrayList<>();
        for (Trip trip : repository.findAll()) {
            AdminTrip adminTrip = new AdminTrip();
            adminTrip.setTrip(trip);
            adminTrip.setRoute(getRouteByRouteId(trip.getRouteId(), headers));
            adminTrip.setTrainType(getTrainType(trip.getTrainTypeId(), headers));
            adminTrips.add(adminTrip);
        }
        return new Response<>(1, "Travel Service Admin Query All Travel Success", adminTrips);
    }

    private String queryForStationId(String stationName, HttpHeaders headers) {
        ResponseEntity<Response<String>> re = restTemplate.exchange(
                "http://ts-ticketinfo-service:15681/api/v1/ticketinfoservice/ticketinfo/" + stationName,
                HttpMethod.GET, new HttpEntity(null, headers), new ParameterizedTypeReference<Response<String>>() {
                });
        return re.getBody() == null ? null : re.getBody().getData();
    }

    private Route getRouteByRouteId(String routeId, HttpHeaders headers) {
        ResponseEntity<Response<Route>> re = restTemplate.exchange(
                "http://ts-route-service:11178/api/v1/routeservice/routes/" + routeId,
                HttpMethod.GET, new HttpEntity(null, headers), new ParameterizedTypeReference<Response<Route>>() {
                });
        return re.getBody().getData();
    }

    private TrainType getTrainType(String trainTypeId, HttpHeaders headers) {
        ResponseEntity<Response<TrainType>> re = restTemplate.exchange(
                "http://ts-train-service:14567/api/v1/trainservice/trains/" + trainTypeId,
                HttpMethod.GET, new HttpEntity(null, headers), new ParameterizedTypeReference<Response<TrainType>>() {
                });
        return re.getBody().getData();
    }
}
