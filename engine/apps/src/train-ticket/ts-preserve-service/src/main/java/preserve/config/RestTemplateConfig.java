package preserve.config;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.SimpleClientHttpRequestFactory;
import org.springframework.web.client.RestTemplate;

/**
 * The RestTemplate every booking step uses. A booking fans out to a dozen services, one
 * after the other; a peer that stops answering must not hold a Tomcat thread (and the
 * passenger) forever.
 */
@Configuration
public class RestTemplateConfig {

    /** Peers are in-cluster Services: a connect slower than this is a dead endpoint. */
    static final int CONNECT_TIMEOUT_MS = 2000;

    /** trip_detail is the slowest step (seats left in both classes), well under a second. */
    static final int READ_TIMEOUT_MS = 10000;

    @Bean
    public RestTemplate restTemplate() {
        SimpleClientHttpRequestFactory factory = new SimpleClientHttpRequestFactory();
        factory.setConnectTimeout(CONNECT_TIMEOUT_MS);
        factory.setReadTimeout(READ_TIMEOUT_MS);
        return new RestTemplate(factory);
    }
}
