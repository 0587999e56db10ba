package admintravel.service;

import admintravel.entity.AdminTrip;
import admintravel.entity.TravelInfo;
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

import java.util.ArrayList;
import java.util.Date;
import java.util.regex.Pattern;

@Service
public class AdminTravelServiceImpl implements AdminTravelService {

    private static final Logger LOGGER = LoggerFactory.getLogger(AdminTravelServiceImpl.class);

    /** One letter for the train class, then the number: G1234, D1345, Z1236, T1235, K1345. */
    private static final Pattern TRIP_ID = Pattern.compile("^[GDZTK][0-9]{1,4}$");

    @Autowired
    private RestTemplate restTemplate;

    @Override
    public Response getAllTravels(HttpHeaders headers) {
        ArrayList<AdminTrip> trips = new ArrayList<>();
        HttpEntity requestEntity = new HttpEntity(null, headers);

        ResponseEntity<Response<ArrayList<AdminTrip>>> re = restTemplate.exchange(
                "http://ts-travel-service:12346/api/v1/travelservice/admin_trip",
                HttpMethod.GET,
                requestEntity,
                new ParameterizedTypeReference<Response<ArrayList<AdminTrip>>>() {
                });
        Response<ArrayList<AdminTrip>> highSpeed = re.getBody();
        if (highSpeed != null && highSpeed.getStatus() == 1) {
            trips.addAll(highSpeed.getData());
        }

        ResponseEntity<Response<ArrayList<AdminTrip>>> re2 = restTemplate.exchange(
                "http://ts-travel2-service:16346/api/v1/travel2service/admin_trip",
                HttpMethod.GET,
                requestEntity,
                new ParameterizedTypeReference<Response<ArrayList<AdminTrip>>>() {
                });
        Response<ArrayList<AdminTrip>> other = re2.getBody();
        if (other != null && other.getStatus() == 1) {
            trips.addAll(other.getData());
        }
        LOGGER.info("[getAllTravels] {} trips", trips.size());
        return new Response<>(1, "Travel Service Admin Query All Travel Success", trips);
    }

    @Override
    public Response addTravel(TravelInfo request, HttpHeaders headers) {
        if (request.getTripId() == null || !TRIP_ID.matcher(request.getTripId()).matches()) {
            return new Response<>(0, "Trip id must look like G1234", request.getTripId());
        }
        Date start = request.getStartingTime();
        Date end = request.getEndTime();
        if (start == null || end == null || !end.after(start)) {
            return new Response<>(0, "Arrival time must be after departure time", null);
        }
        String url;
        char type = request.getTripId().charAt(0);
        if (type == 'G' || type == 'D') {
            url = "http://ts-travel-service:12346/api/v1/travelservice/trips";
        } else {
            url = "http://ts-travel2-service:16346/api/v1/travel2service/trips";
        }
        HttpEntity<TravelInfo> requestEntity = new HttpEntity<>(request, headers);
        ResponseEntity<Response> re = restTemplate.exchange(url, HttpMethod.POST, requestEntity, Response.class);
        Response result = re.getBody();
        if (result == null || result.getStatus() != 1) {
            LOGGER.warn("[addTravel] {} refused trip {}", url, request.getTripId());
            return new Response<>(0, "Admin add new travel failed", null);
        }
        return new Response<>(1, "[Admin add new travel]", result.getData());
    }
}
