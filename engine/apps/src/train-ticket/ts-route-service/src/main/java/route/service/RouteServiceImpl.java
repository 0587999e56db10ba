package route.service;

import edu.fudan.common.util.Response;
import route.entity.Route;
import route.entity.RouteInfo;
import route.repository.RouteRepository;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpHeaders;
import org.springframework.stereotype.Service;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.stream.Collectors;

@Service
public class RouteServiceImpl implements RouteService {

    private static final Logger LOGGER = LoggerFactory.getLogger(RouteServiceImpl.class);

    @Autowired
    private RouteRepository routeRepository;

    @Override
    public Response createAndModify(RouteInfo info, HttpHeaders headers) {
        List<String> stations = splitTrim(info.getStationList());
        List<Integer> distances;
        try {
            distances = splitTrim(info.getDistanceList()).stream().map(Integer::parseInt).collect(Collectors.toList());
        } catch (NumberFormatException e) {
            return new Response<>(0, "Distances must be whole km", null);
        }
        if (stations.size() != distances.size()) {
            return new Response<>(0, "Station Number Not Equal To Distance Number", null);
        }
        if (distances.get(0) != 0) {
            return new Response<>(0, "The first station must be at distance 0", null);
        }
        for (int i = 1; i < distances.size(); i++) {
            if (distances.get(i) <= distances.get(i - 1)) {
                return new Response<>(0, "Distances must increase along the route", null);
            }
        }
        if (stations.stream().distinct().count() != stations.size()) {
            return new Response<>(0, "A station appears twice on the route", null);
        }
        Route route = null;
        if (info.getId() != null && !info.getId().isEmpty()) {
            route = routeRepository.findById(info.getId());
        }
        if (route == null) {
            route = new Route();
            route.setId(info.getId() == null || info.getId().isEmpty() ? UUID.randomUUID().toString() : info.getId());
        }
        route.setStartStationId(stations.get(0));
        route.setTerminalStationId(stations.get(stations.size() - 1));
        route.setStations(stations);
        route.setDistances(distances);
        routeRepository.save(route);
        return new Response<>(1, "Save Success", route);
    }

    @Override
    public Response deleteRoute(String routeId, HttpHeaders headers) {
        routeRepository.removeRouteById(routeId);
        if (routeRepository.findById(routeId) != null) {
            return new Response<>(0, "Delete failed, Reason unKnown with this routeId", routeId);
        }
        return new Response<>(1, "Delete Success", routeId);
    }

    @Override
    public Response getRouteById(String routeId, HttpHeaders headers) {
        Route route = routeRepository.findById(routeId);
        if (route == null) {
            return new Response<>(0, "No content with the routeId", null);
        }
        return new Response<>(1, "Success", route);
    }

    /** Routes that pass the start station and, later, the terminal station. */
    @Override
    public Response getRouteByStartAndTerminal(String startId, String terminalId, HttpHeaders headers) {
        ArrayList<Route> routes = routeRepository.findAll();
        List<Route> result = new ArrayList<>();
        for (Route route : routes) {
            int from = route.getStations().indexOf(startId);
            int to = route.getStations().indexOf(terminalId);
            if (from >= 0 && to > from) {
                result.add(route);
            }
        }
        LOGGER.info("[getRouteByStartAndTerminal] {} of {} routes go {} -> {}", result.size(), routes.size(),
                startId, terminalId);
        if (result.isEmpty()) {
            return new Response<>(0, "No routes with the startId and terminalId", null);
        }
        return new Response<>(1, "Success", result);
    }

    @Override
    public Response getAllRoutes(HttpHeaders headers) {
        ArrayList<Route> routes = routeRepository.findAll();
        if (routes == null || routes.isEmpty()) {
            return new Response<>(0, "No Content", null);
        }
        return new Response<>(1, "Success", routes);
    }

    private static List<String> splitTrim(String csv) {
        List<String> out = new ArrayList<>();
        for (String part : csv.split(",")) {
            String p = part.trim();
            if (!p.isEmpty()) {
                out.add(p);
            }
        }
        return out;
    }
}
