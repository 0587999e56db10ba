package station.service;

import edu.fudan.common.util.Response;
import station.entity.Station;
import station.repository.StationRepository;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpHeaders;
import org.springframework.stereotype.Service;

import java.util.*;

@Service
public class StationServiceImpl implements StationService {

    private static final Logger LOGGER = LoggerFactory.getLogger(StationServiceImpl.class);

    /** Longest id list one batch request may translate (a route has at most ~30 stops). */
    private static final int MAX_BATCH = 200;

    @Autowired
    private StationRepository repository;

    @Override
    public Response query(HttpHeaders headers) {
        List<Station> stations = repository.findAll();
        if (stations == null || stations.isEmpty()) {
            return new Response<>(0, "No content", null);
        }
        stations.sort(Comparator.comparing(Station::getName));
        return new Response<>(1, "Find all content", stations);
    }

    /**
     * Name to id. Names are matched after normalising case and spaces, so "shang hai",
     * "Shang Hai" and "ShangHai" find the same station.
     */
    @Override
    public Response queryForId(String stationName, HttpHeaders headers) {
        Station station = repository.findByName(stationName);
        if (station == null) {
            String wanted = normalise(stationName);
            for (Station s : repository.findAll()) {
                if (normalise(s.getName()).equals(wanted)) {
                    station = s;
                    break;
                }
            }
        }
        if (station == null) {
            return new Response<>(0, "Not exists", stationName);
        }
        return new Response<>(1, "Success", station.getId());
    }

    static String normalise(String name) {
        return name == null ? "" : name.replace(" ", "").toLowerCase(Locale.ROOT);
    }

    @Override
    public Response queryById(String stationId, HttpHeaders headers) {
        Station station = repository.findById(stationId);
        if (station == null) {
            return new Response<>(0, "No that stationId", stationId);
        }
        return new Response<>(1, "Success", station.getName());
    }

    /**
     * Ids to names, one name per id and in the same order (callers zip the lists); an
     * unknown id yields a null entry instead of shortening the list.
     */
    @Override
    public Response queryByIdBatch(List<String> idList, HttpHeaders headers) {
        if (idList.size() > MAX_BATCH) {
            return new Response<>(0, "At most " + MAX_BATCH + " ids per request", null);
        }
        Map<String, String> names = new HashMap<>();
        for (Station s : repository.findByIdIn(new HashSet<>(idList))) {
            names.put(s.getId(), s.getName());
        }
        List<String> result = new ArrayList<>(idList.size());
        int missing = 0;
        for (String id : idList) {
            String name = names.get(id);
            if (name == null) {
                missing++;
            }
            result.add(name);
        }
        if (missing > 0) {
            LOGGER.warn("[queryByIdBatch] {} of {} ids unknown", missing, idList.size());
        }
        return new Response<>(1, "Success", result);
    }
}
