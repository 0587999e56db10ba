package oteldemo;

import dev.openfeature.contrib.providers.flagd.FlagdOptions;
import dev.openfeature.contrib.providers.flagd.FlagdProvider;
import dev.openfeature.sdk.Client;
import dev.openfeature.sdk.EvaluationContext;
import dev.openfeature.sdk.MutableContext;
import dev.openfeature.sdk.OpenFeatureAPI;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import oteldemo.Demo.Ad;
import oteldemo.Demo.AdRequest;
import oteldemo.Demo.AdResponse;

/** gRPC AdService: text ads for the context words of the page being viewed. */
public final class AdService {
  private static final Logger logger = LogManager.getLogger(AdService.class);

  // Flag keys as in demo.flagd.json; every one defaults to off.
  static final String AD_FAILURE = "adFailure";
  static final String AD_MANUAL_GC = "adManualGc";
  static final String AD_HIGH_CPU = "adHighCpu";

  // adFailure fails one request in this many.
  private static final int FAILURE_ONE_IN = 10;
  // Ads returned when the page gave no usable context word.
  private static final int RANDOM_ADS_COUNT = 2;

  private final Server server;
  private final HealthStatusManager health = new HealthStatusManager();
  private final AdCatalog catalog = new AdCatalog();
  private final Random random = new Random();
  private final CpuLoad cpuLoad = new CpuLoad();
  private final Client flags;

  AdService(int port, String flagdHost, int flagdPort) {
    FlagdOptions options = FlagdOptions.builder().host(flagdHost).port(flagdPort).deadline(500).build();
    OpenFeatureAPI.getInstance().setProvider(new FlagdProvider(options));
    this.flags = OpenFeatureAPI.getInstance().getClient();
    this.server =
        ServerBuilder.forPort(port)
            .addService(new AdServiceImpl())
            .addService(health.getHealthService())
            .build();
  }

  private void start() throws IOException {
    server.start();
    health.setStatus("oteldemo.AdService", ServingStatus.SERVING);
    logger.info("Ad service started, listening on " + server.getPort());
    Runtime.getRuntime().addShutdownHook(new Thread(this::stop));
  }

  private void stop() {
    health.clearStatus("oteldemo.AdService");
    cpuLoad.stop();
    server.shutdown();
    try {
      server.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  // A flag that cannot be evaluated (flagd down or slow) counts as off.
  private boolean flag(String key, EvaluationContext ctx) {
    try {
      return flags.getBooleanValue(key, false, ctx);
    } catch (RuntimeException e) {
      logger.warn("flag " + key + " evaluation failed, using false", e);
      return false;
    }
  }

  private final class AdServiceImpl extends AdServiceGrpc.AdServiceImplBase {
    @Override
    public void getAds(AdRequest req, StreamObserver<AdResponse> responseObserver) {
      EvaluationContext ctx = new MutableContext().add("session", req.getContextKeysCount() > 0 ? "keyed" : "random");
      try {
        List<Ad> ads = catalog.forContextKeys(req.getContextKeysList());
        if (ads.isEmpty()) {
          ads = catalog.randomAds(RANDOM_ADS_COUNT, random);
        }
        logger.info("Targeted ad request received for " + req.getContextKeysList() + ", returning " + ads.size());

        if (flag(AD_FAILURE, ctx) && random.nextInt(FAILURE_ONE_IN) == 0) {
          throw new StatusRuntimeException(Status.UNAVAILABLE.withDescription("ad service failure flag is on"));
        }
        if (flag(AD_HIGH_CPU, ctx)) {
          cpuLoad.start();
        } else {
          cpuLoad.stop();
        }
        if (flag(AD_MANUAL_GC, ctx)) {
          logger.warn("Feature flag " + AD_MANUAL_GC + " enabled, performing a full manual GC");
          GarbageCollection.fullGc();
        }

        responseObserver.onNext(AdResponse.newBuilder().addAllAds(ads).build());
        responseObserver.onCompleted();
      } catch (StatusRuntimeException e) {
        logger.error("GetAds failed with status " + e.getStatus());
        responseObserver.onError(e);
      }
    }
  }

  /** adHighCpu: busy threads, one per core, until the flag is switched off. */
  static final class CpuLoad {
    private volatile boolean running;

    synchronized void start() {
      if (running) {
        return;
      }
      running = true;
      int threads = Runtime.getRuntime().availableProcessors();
      for (int i = 0; i < threads; i++) {
        Thread t = new Thread(this::spin, "ad-cpu-load-" + i);
        t.setDaemon(true);
        t.start();
      }
      logger.warn("Feature flag " + AD_HIGH_CPU + " enabled, started " + threads + " load threads");
    }

    synchronized void stop() {
      running = false;
    }

    private void spin() {
      double x = 0;
      while (running) {
        for (int i = 0; i < 1_000_000; i++) {
          x += Math.sqrt(i) * Math.sin(i);
        }
      }
      if (x == 42) {
        logger.debug("unreachable");
      }
    }
  }

  /** adManualGc: allocate garbage, then ask the JVM for a full stop-the-world collection. */
  static final class GarbageCollection {
    static void fullGc() {
      long before = Runtime.getRuntime().totalMemory() - Runtime.getRuntime().freeMemory();
      byte[][] garbage = new byte[64][];
      for (int i = 0; i < garbage.length; i++) {
        garbage[i] = new byte[1024 * 1024];
      }
      System.gc();
      long after = Runtime.getRuntime().totalMemory() - Runtime.getRuntime().freeMemory();
      logger.info("Manual GC freed " + ((before - after) / (1024 * 1024)) + " MiB, held " + garbage.length);
    }
  }

  private static int envInt(String name, int fallback) {
    String value = System.getenv(name);
    if (value == null || value.isEmpty()) {
      return fallback;
    }
    return Integer.parseInt(value);
  }

  public static void main(String[] args) throws IOException, InterruptedException {
    String portEnv = System.getenv("AD_PORT");
    if (portEnv == null) {
      throw new IllegalStateException("environment variable AD_PORT is not set");
    }
    String flagdHost = System.getenv().getOrDefault("FLAGD_HOST", "localhost");
    AdService service = new AdService(Integer.parseInt(portEnv), flagdHost, envInt("FLAGD_PORT", 8013));
    service.start();
    service.server.awaitTermination();
  }
}
