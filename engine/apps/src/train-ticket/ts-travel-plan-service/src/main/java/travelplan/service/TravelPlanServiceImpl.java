package travelplan.service;

import edu.fudan.common.util.Response;
import travelplan.entity.*;
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
public class TravelPlanServiceImpl implements TravelPlanService {

    private static final Logger LOGGER = LoggerFactory.getLogger(TravelPlanServiceImpl.class);

    private static final int FIRST_CLASS = 2;
    private static final int SECOND_CLASS = 3;

    /** A transfer needs at least this long between arriving and leaving the via station. */
    static final long MIN_CONNECTION_MS = 20 * 60 * 1000L;

    @Autowired
    private RestTemplate restTemplate;

    @Override
    public Response getCheapest(TripInfo info, HttpHeaders headers) {
        return plans("http://ts-route-plan-service:14578/api/v1/routeplanservice/routePlan/cheapestRoute", info, headers);
    }

    @Override
    public Response getQuickest(TripInfo info, HttpHeaders headers) {
        return plans("http://ts-route-plan-service:14578/api/v1/routeplanservice/routePlan/quickestRoute", info, headers);
    }

    @Override
    public Response getMinStation(TripInfo info, HttpHeaders headers) {
        return plans("http://ts-route-plan-service:14578/api/v1/routeplanservice/routePlan/minStopStations", info, headers);
    }

    /** Ask route-plan for the ranking, then add seats left and readable stop names. */
    private Response plans(String url, TripInfo info, HttpHeaders headers) {
        RoutePlanInfo routePlanInfo = new RoutePlanInfo(info.getStartingPlace(), info.getEndPlace(),
                info.getDepartureTime(), 5);
        ResponseEntity<Response<ArrayList<RoutePlanResultUnit>>> re = restTemplate.exchange(url, HttpMethod.POST,
                new HttpEntity<>(routePlanInfo, headers),
                new ParameterizedTypeReference<Response<ArrayList<RoutePlanResultUnit>>>() {
                });
        List<RoutePlanResultUnit> units = re.getBody() == null ? null : re.getBody().getData();
        if (units == null || units.isEmpty()) {
            return new Response<>(0, "Cannot Find", null);
        }
        String fromId = queryForStationId(info.getStartingPlace(), headers);
        String toId = queryForStationId(info.getEndPlace(), headers);

        List<TravelAdvanceResultUnit> lists = new ArrayList<>();
        for (RoutePlanResultUnit unit : units) {
            TravelAdvanceResultUnit out = new TravelAdvanceResultUnit();
            out.setTripId(unit.getTripId());
            out.setTrainTypeId(unit.getTrainTypeId());
            out.setFromStationName(unit.getFromStationName());
            out.setToStationName(unit.getToStationName());
            out.setStopStations(stationNames(unit.getStopStations(), headers));
            out.setPriceForFirstClassSeat(unit.getPriceForFirstClassSeat());
            out.setPriceForSecondClassSeat(unit.getPriceForSecondClassSeat());
            out.setStartingTime(unit.getStartingTime());
            out.setEndTime(unit.getEndTime());
            out.setNumberOfRestTicketFirstClass(restTickets(info.getDepartureTime(), unit.getTripId(), fromId, toId,
                    FIRST_CLASS, headers));
            out.setNumberOfRestTicketSecondClass(restTickets(info.getDepartureTime(), unit.getTripId(), fromId, toId,
                    SECOND_CLASS, headers));
            lists.add(out);
        }
        return new Response<>(1, "Success", lists);
    }

    /**
     * Two legs: start -> via and via -> end, each searched in both travel services; keep
     * the pairs whose second leg leaves at least MIN_CONNECTION_MS after the first arrives.
     */
    @Override
    public Response getTransferSearch(TransferTravelInfo info, HttpHeaders headers) {
        TripInfo first = new TripInfo(info.getFromStationName(), info.getViaStationName(), info.getTravelDate());
        TripInfo second = new TripInfo(info.getViaStationName(), info.getToStationName(), info.getTravelDate());
        List<TripResponse> firstLegs = new ArrayList<>();
        List<TripResponse> secondLegs = new ArrayList<>();
        firstLegs.addAll(search("http://ts-travel-service:12346/api/v1/travelservice/trips/left", first, headers));
        firstLegs.addAll(search("http://ts-travel2-service:16346/api/v1/travel2service/trips/left", first, headers));
        secondLegs.addAll(search("http://ts-travel-service:12346/api/v1/travelservice/trips/left", second, headers));
        secondLegs.addAll(search("http://ts-travel2-service:16346/api/v1/travel2service/trips/left", second, headers));

        List<TransferTravelResult> pairs = new ArrayList<>();
        for (TripResponse a : firstLegs) {
            for (TripResponse b : secondLegs) {
                if (b.getStartingTime().getTime() - a.getEndTime().getTime() >= MIN_CONNECTION_MS) {
                    pairs.add(new TransferTravelResult(a, b));
                }
            }
        }
        pairs.sort(Comparator.comparing(p -> p.getSecondSectionResult().getEndTime()));
        LOGGER.info("[getTransferSearch] {} x {} legs -> {} connections", firstLegs.size(), secondLegs.size(), pairs.size());
        return new Response<>(1, "Success.", pairs);
    }

    private List<TripResponse> search(String url, TripInfo info, HttpHeaders headers) {
        ResponseEntity<Response<ArrayList<TripResponse>>> re = restTemplate.exchange(url, HttpMethod.POST,
                new HttpEntity<>(info, headers), new ParameterizedTypeReference<Response<ArrayList<TripResponse>>>() {
                });
        return re.getBody() == null || re.getBody().getData() == null ? Collections.emptyList() : re.getBody().getData();
    }

    private int restTickets(Date travelDate, String trainNumber, String from, String to, int seatType,
                            HttpHeaders headers) {
        Seat seatRequest = new Seat(travelDate, trainNumber, from, to, seatType);
        ResponseEntity<Response<Integer>> re = restTemplate.exchange(
                "http://ts-seat-service:18898/api/v1/seatservice/seats/left_tickets",
                HttpMethod.POST, new HttpEntity<>(seatRequest, headers),
                new ParameterizedTypeReference<Response<Integer>>() {
                });
        return re.getBody() == null || re.getBody().getData() == null ? 0 : re.getBody().getData();
    }

    private String queryForStationId(String stationName, HttpHeaders headers) {
        ResponseEntity<Response<String>> re = restTemplate.exchange(
                "http://ts-ticketinfo-service:15681/api/v1/ticketinfoservice/ticketinfo/" + stationName,
                HttpMethod.GET, new HttpEntity(null, headers), new ParameterizedTypeReference<Response<String>>() {
                });
        return re.getBody().getData();
    }

    private List<String> stationNames(List<String> ids, HttpHeaders headers) {
        ResponseEntity<Response<List<String>>> re = restTemplate.exchange(
                "http://ts-station-service:12345/api/v1/stationservice/stations/namelist",
                HttpMethod.POST, new HttpEntity<>(ids, headers), new ParameterizedTypeReference<Response<List<String>>>() {
                });
        return re.getBody() == null ? ids : re.getBody().getData();
    }
}
