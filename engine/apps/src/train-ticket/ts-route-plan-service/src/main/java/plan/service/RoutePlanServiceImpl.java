package plan.service;

import edu.fudan.common.util.Response;
import plan.entity.*;
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
import java.util.function.ToDoubleFunction;
import java.util.stream.Collectors;

@Service
public class RoutePlanServiceImpl implements RoutePlanService {

    private static final Logger LOGGER = LoggerFactory.getLogger(RoutePlanServiceImpl.class);

    /** How many plans a ranking returns. */
    static final int RESULT_LIMIT = 3;

    @Autowired
    private RestTemplate restTemplate;

    @Override
    public Response searchCheapestResult(RoutePlanInfo info, HttpHeaders headers) {
        // rank by the second-class price: what most passengers pay
        return ranked(info, headers, t -> Double.parseDouble(t.getPriceForEconomyClass()), "cheapest");
    }

    @Override
    public Response searchQuickestResult(RoutePlanInfo info, HttpHeaders headers) {
        return ranked(info, headers, t -> t.getEndTime().getTime() - t.getStartingTime().getTime(), "quickest");
    }

    private Response ranked(RoutePlanInfo info, HttpHeaders headers, ToDoubleFunction<TripResponse> key, String what) {
        TripInfo query = new TripInfo(info.getFormStationName(), info.getToStationName(), info.getTravelDate());
        List<TripResponse> trips = new ArrayList<>();
        trips.addAll(searchTrips("http://ts-travel-service:12346/api/v1/travelservice/trips/left", query, headers));
        trips.addAll(searchTrips("http://ts-travel2-service:16346/api/v1/travel2service/trips/left", query, headers));
        List<TripResponse> best = trips.stream()
                .sorted(Comparator.comparingDouble(key))
                .limit(RESULT_LIMIT)
                .collect(Collectors.toList());

        List<RoutePlanResultUnit> units = new ArrayList<>();
        for (TripResponse trip : best) {
            RoutePlanResultUnit unit = new RoutePlanResultUnit();
            unit.setTripId(trip.getTripId().toString());
            unit.setTrainTypeId(trip.getTrainTypeId());
            unit.setFromStationName(trip.getStartingStation());
            unit.setToStationName(trip.getTerminalStation());
            unit.setStopStations(stationList(trip.getRouteId(), headers));
            unit.setPriceForSecondClassSeat(trip.getPriceForEconomyClass());
            unit.setPriceForFirstClassSeat(trip.getPriceForConfortClass());
            unit.setStartingTime(trip.getStartingTime());
            unit.setEndTime(trip.getEndTime());
            units.add(unit);
        }
        LOGGER.info("[ranked] {} of {} trips kept for the {} plan", units.size(), trips.size(), what);
        return new Response<>(1, "Success", units);
    }

    @Override
    public Response searchMinStopStations(RoutePlanInfo info, HttpHeaders headers) {
        String fromId = stationId(info.getFormStationName(), headers);
        String toId = stationId(info.getToStationName(), headers);
        ResponseEntity<Response<ArrayList<Route>>> re = restTemplate.exchange(
                "http://ts-route-service:11178/api/v1/routeservice/routes/" + fromId + "/" + toId,
                HttpMethod.GET, new HttpEntity(null, headers),
                new ParameterizedTypeReference<Response<ArrayList<Route>>>() {
                });
        List<Route> routes = re.getBody() == null ? Collections.emptyList() : re.getBody().getData();
        // fewest stops between the two stations, not on the whole route
        List<Route> fewest = routes.stream()
                .sorted(Comparator.comparingInt(r -> r.getStations().indexOf(toId) - r.getStations().indexOf(fromId)))
                .limit(RESULT_LIMIT)
                .collect(Collectors.toList());
        List<String> routeIds = fewest.stream().map(Route::getId).collect(Collectors.toList());

        List<List<Trip>> highSpeed = tripsByRoutes("http://ts-travel-service:12346/api/v1/travelservice/trips/routes",
                routeIds, headers);
        List<List<Trip>> normal = tripsByRoutes("http://ts-travel2-service:16346/api/v1/travel2service/trips/routes",
                routeIds, headers);
        List<RoutePlanResultUnit> units = new ArrayList<>();
        for (int i = 0; i < fewest.size(); i++) {
            Route route = fewest.get(i);
            List<String> stops = route.getStations().subList(route.getStations().indexOf(fromId),
                    route.getStations().indexOf(toId) + 1);
            for (Trip trip : concat(highSpeed, normal, i)) {
                RoutePlanResultUnit unit = new RoutePlanResultUnit();
                unit.setTripId(trip.getTripId().toString());
                unit.setTrainTypeId(trip.getTrainTypeId());
                unit.setFromStationName(info.getFormStationName());
                unit.setToStationName(info.getToStationName());
                unit.setStopStations(stops);
                unit.setStartingTime(trip.getStartingTime());
                unit.setEndTime(trip.getEndTime());
                units.add(unit);
            }
        }
        return new Response<>(1, "Success.", units);
    }

    private static List<Trip> concat(List<List<Trip>> a, List<List<Trip>> b, int i) {
        List<Trip> out = new ArrayList<>();
        if (i < a.size()) out.addAll(a.get(i));
        if (i < b.size()) out.addAll(b.get(i));
        return out;
    }

    private List<TripResponse> searchTrips(String url, TripInfo query, HttpHeaders headers) {
        ResponseEntity<Response<ArrayList<TripResponse>>> re = restTemplate.exchange(url, HttpMethod.POST,
                new HttpEntity<>(query, headers), new ParameterizedTypeReference<Response<ArrayList<TripResponse>>>() {
                });
        Response<ArrayList<TripResponse>> body = re.getBody();
        return body == null || body.getData() == null ? Collections.emptyList() : body.getData();
    }

    private List<List<Trip>> tripsByRoutes(String url, List<String> routeIds, HttpHeaders headers) {
        ResponseEntity<Response<ArrayList<ArrayList<Trip>>>> re = restTemplate.exchange(url, HttpMethod.POST,
                new HttpEntity<>(routeIds, headers), new ParameterizedTypeReference<Response<ArrayList<ArrayList<Trip>>>>() {
                });
        return re.getBody() == null ? Collections.emptyList() : new ArrayList<>(re.getBody().getData());
    }

    private List<String> stationList(String routeId, HttpHeaders headers) {
        ResponseEntity<Response<Route>> re = restTemplate.exchange(
                "http://ts-route-service:11178/api/v1/routeservice/routes/" + routeId,
                HttpMethod.GET, new HttpEntity(null, headers), new ParameterizedTypeReference<Response<Route>>() {
                });
        return re.getBody() == null ? Collections.emptyList() : re.getBody().getData().getStations();
    }

    private String stationId(String name, HttpHeaders headers) {
        ResponseEntity<Response<String>> re = restTemplate.exchange(
                "http://ts-station-service:12345/api/v1/stationservice/stations/id/" + name,
                HttpMethod.GET, new HttpEntity(null, headers), new ParameterizedTypeReference<Response<String>>() {
                });
        return re.getBody().getData();
    }
}
