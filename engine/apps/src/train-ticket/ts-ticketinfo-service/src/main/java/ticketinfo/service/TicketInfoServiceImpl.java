package ticketinfo.service;

import edu.fudan.common.util.Response;
import ticketinfo.entity.Travel;
import ticketinfo.entity.TravelResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Service;
import org.springframework.web.client.ResourceAccessException;
import org.springframework.web.client.RestTemplate;

import java.util.Date;

@Service
public class TicketInfoServiceImpl implements TicketInfoService {

    private static final Logger LOGGER = LoggerFactory.getLogger(TicketInfoServiceImpl.class);

    /** basic answers in a few ms; one retry on a connection reset, none on a timeout. */
    private static final int CONNECT_RETRIES = 1;

    @Autowired
    private RestTemplate restTemplate;

    @Override
    public Response queryForTravel(Travel info, HttpHeaders headers) {
        if (info.getTrip() == null || info.getStartingPlace() == null || info.getEndPlace() == null) {
            return new Response<>(0, "Trip, starting place and end place are required", null);
        }
        if (info.getStartingPlace().equals(info.getEndPlace())) {
            return new Response<>(0, "Starting place and end place are the same", null);
        }
        if (info.getDepartureTime() == null) {
            info.setDepartureTime(new Date());
        }
        for (int attempt = 0; ; attempt++) {
            try {
                ResponseEntity<Response<TravelResult>> re = restTemplate.exchange(
                        "http://ts-basic-service:15680/api/v1/basicservice/basic/travel",
                        HttpMethod.POST,
                        new HttpEntity<>(info, headers),
                        new ParameterizedTypeReference<Response<TravelResult>>() {
                        });
                return re.getBody();
            } catch (ResourceAccessException e) {
                boolean timeout = e.getMessage() != null && e.getMessage().contains("Read timed out");
                if (timeout || attempt >= CONNECT_RETRIES) {
                    LOGGER.error("[queryForTravel] basic service unreachable: {}", e.getMessage());
                    throw e;
                }
                LOGGER.warn("[queryForTravel] retrying after {}", e.getMessage());
            }
        }
    }

    @Override
    public Response queryForStationId(String name, HttpHeaders headers) {
        if (name == null || name.trim().isEmpty()) {
            return new Response<>(0, "Station name is required", null);
        }
        ResponseEntity<Response<String>> re = restTemplate.exchange(
                "http://ts-basic-service:15680/api/v1/basicservice/basic/" + name.trim(),
                HttpMethod.GET,
                new HttpEntity(null, headers),
                new ParameterizedTypeReference<Response<String>>() {
                });
        return re.getBody();
    }
}
