package config.service;

import config.entity.Config;
import config.repository.ConfigRepository;
import edu.fudan.common.util.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpHeaders;
import org.springframework.stereotype.Service;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

@Service
public class ConfigServiceImpl implements ConfigService {

    private static final Logger LOGGER = LoggerFactory.getLogger(ConfigServiceImpl.class);

    /**
     * Known settings and their valid ranges. DirectTicketAllocationProportion is the share
     * of each train's seats reserved for passengers riding the whole route (0..1).
     */
    private static final Map<String, double[]> RANGES = new HashMap<>();

    static {
        RANGES.put("DirectTicketAllocationProportion", new double[]{0.0, 1.0});
    }

    @Autowired
    private ConfigRepository repository;

    @Override
    public Response create(Config info, HttpHeaders headers) {
        if (repository.findByName(info.getName()) != null) {
            return new Response<>(0, "Config " + info.getName() + " already exists.", null);
        }
        String problem = checkValue(info);
        if (problem != null) {
            return new Response<>(0, problem, null);
        }
        repository.save(new Config(info.getName(), info.getValue(), info.getDescription()));
        return new Response<>(1, "Create success", info);
    }

    @Override
    public Response query(String name, HttpHeaders headers) {
        Config config = repository.findByName(name);
        if (config == null) {
            LOGGER.warn("[query] no config named {}", name);
            return new Response<>(0, "No content", null);
        }
        return new Response<>(1, "Success", config);
    }

    @Override
    public Response queryAll(HttpHeaders headers) {
        List<Config> configList = repository.findAll();
        if (configList == null || configList.isEmpty()) {
            return new Response<>(0, "No content", null);
        }
        return new Response<>(1, "Find all  config success", configList);
    }

    String checkValue(Config info) {
        double[] range = RANGES.get(info.getName());
        if (range == null) {
            return null;
        }
        double value;
        try {
            value = Double.parseDouble(info.getValue());
        } catch (NumberFormatException e) {
            return info.getName() + " must be a number";
        }
        if (value < range[0] || value > range[1]) {
            return info.getName() + " must be within [" + range[0] + ", " + range[1] + "]";
        }
        return null;
    }
}
