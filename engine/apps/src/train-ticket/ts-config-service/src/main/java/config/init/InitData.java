package config.init;

import config.entity.Config;
import config.service.ConfigService;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.CommandLineRunner;
import org.springframework.stereotype.Component;

/**
 * Seeds the system settings at start-up, as upstream's config/init/InitData does.
 * ts-config-mongo runs without a volume: when its pod restarts the settings are gone,
 * and only a restart of this service writes them again.
 */
@Component
public class InitData implements CommandLineRunner {

    @Autowired
    private ConfigService service;

    @Override
    public void run(String... args) {
        service.create(new Config("DirectTicketAllocationProportion", "0.5",
                "Allocation Proportion Of The Direct Ticket - From Start To End"), null);
    }
}
