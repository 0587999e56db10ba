package route.init;

import route.entity.RouteInfo;
import route.service.RouteService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.CommandLineRunner;
import org.springframework.stereotype.Component;

/**
 * Seeds the railway routes of the demo data set at start-up, as upstream's
 * route/init/InitData does. ts-route-mongo runs without a volume: when its pod restarts
 * the routes are gone, and only a restart of this service writes them again.
 */
@Component
public class InitData implements CommandLineRunner {

    private static final Logger LOGGER = LoggerFactory.getLogger(InitData.class);

    @Autowired
    private RouteService routeService;

    @Override
    public void run(String... args) {
        create("0b23bd3e-876a-4af3-b920-c50a90c90b04", "shanghai,nanjing,shijiazhuang,taiyuan", "0,350,1000,1300");
        create("9fc9c261-3263-4bfa-82f8-bb44e06b2f52", "nanjing,xuzhou,jinan,beijing", "0,500,700,1200");
        create("d693a2c4-ef87-4a3c-bef8-600b43f62c68", "taiyuan,shijiazhuang,nanjing,shanghai", "0,300,950,1300");
        create("20eb7122-3a11-423f-b10a-be0dc5bce7db", "shanghai,taiyuan", "0,1300");
        create("1367db1f-461e-4ab7-87ad-2bcc05fd9cb7", "shanghaihongqiao,jiaxingnan,hangzhou", "0,150,300");
        create("92708982-77af-4318-be25-57ccb0ff69ad", "nanjing,zhenjiang,wuxi,suzhou,shanghai", "0,100,150,200,250");
        create("aefcef3f-3f42-46e8-afd7-6cb2a928bd3d", "nanjing,shanghai", "0,250");
        create("a3f256c1-0e43-4f7d-9c21-121bf258101f", "nanjing,suzhou,shanghai", "0,200,250");
        create("084837bb-53c8-4438-87c8-0321a4d09917", "suzhou,shanghai", "0,50");
        create("f3d4d4ef-693b-4456-8eed-59c0d717dd08", "shanghai,suzhou", "0,50");
        LOGGER.info("[run] route data set written");
    }

    private void create(String id, String stations, String distances) {
        RouteInfo info = new RouteInfo();
        info.setId(id);
        info.setStationList(stations);
        info.setDistanceList(distances);
        info.setStartStation(stations.substring(0, stations.indexOf(',')));
        info.setEndStation(stations.substring(stations.lastIndexOf(',') + 1));
        routeService.createAndModify(info, null);
    }
}
