package hipstershop;

import hipstershop.Demo.Ad;
import hipstershop.Demo.AdRequest;
import hipstershop.Demo.AdResponse;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.services.HealthStatusManager;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * adservice: hipstershop.AdService over gRPC. GetAds returns the ads of the categories in
 * the request's context keys, or random ads when none match. The frontend waits 100 ms
 * for the answer and renders the page without a banner when it does not come.
 */
public final class AdService {

  private static final Logger logger = LogManager.getLogger(AdService.class);

  private static final int DEFAULT_PORT = 9555;

  /** At most this many context keys are looked up per request. */
  private static final int MAX_CONTEXT_KEYS = 10;

  /** Seconds the server waits for in-flight calls on shutdown (grace period is 5 s). */
  private static final int SHUTDOWN_GRACE_S = 4;

  private final AdCatalog catalog = new AdCatalog(new SecureRandom());
  private final HealthStatusManager healthMgr = new HealthStatusManager();
  private Server server;

  private void start() throws IOException {
    int port = portFromEnv();
    server =
        ServerBuilder.forPort(port)
            .addService(new AdServiceImpl(catalog))
            .addService(healthMgr.getHealthService())
            .build()
            .start();
    logger.info("Ad Service started, listening on " + port + " with " + catalog.size() + " ads");
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  System.err.println("*** shutting down gRPC ads server since JVM is shutting down");
                  AdService.this.stop();
                  System.err.println("*** server shut down");
                }));
    healthMgr.setStatus("", ServingStatus.SERVING);
  }

  private static int portFromEnv() {
    String value = System.getenv("PORT");
    if (value == null || value.isEmpty()) {
      return DEFAULT_PORT;
    }
    try {
      return Integer.parseInt(value.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("PORT must be a number, got '" + value + "'", e);
    }
  }

  private void stop() {
    if (server != null) {
      healthMgr.clearStatus("");
      try {
        server.shutdown().awaitTermination(SHUTDOWN_GRACE_S, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        server.shutdownNow();
      }
    }
  }

  private void blockUntilShutdown() throws InterruptedException {
    if (server != null) {
      server.awaitTermination();
    }
  }

  static final class AdServiceImpl extends hipstershop.AdServiceGrpc.AdServiceImplBase {

    private final AdCatalog catalog;

    AdServiceImpl(AdCatalog catalog) {
      this.catalog = catalog;
    }

    /**
     * Retrieves ads based on context provided in the request {@code AdRequest}.
     *
     * @param req the request containing context.
     * @param responseObserver the stream observer which gets notified with the value of
     *     {@code AdResponse}
     */
    @Override
    public void getAds(AdRequest req, StreamObserver<AdResponse> responseObserver) {
      try {
        List<Ad> allAds = selectAds(req.getContextKeysList());
        AdResponse reply = AdResponse.newBuilder().addAllAds(allAds).build();
        responseObserver.onNext(reply);
        responseObserver.onCompleted();
      } catch (StatusRuntimeException e) {
        logger.log(Level.WARN, "GetAds Failed with status {}", e.getStatus());
        responseObserver.onError(e);
      } catch (RuntimeException e) {
        logger.log(Level.ERROR, "GetAds failed", e);
        responseObserver.onError(
            Status.INTERNAL.withDescription("ad selection failed").withCause(e).asRuntimeException());
      }
    }

    /**
     * Ads of every known category among the keys (deduplicated, in key order); random ads
     * when there are no keys or none of them is a known category.
     */
    List<Ad> selectAds(List<String> contextKeys) {
      if (contextKeys.size() > MAX_CONTEXT_KEYS) {
        throw Status.INVALID_ARGUMENT
            .withDescription("at most " + MAX_CONTEXT_KEYS + " context keys are accepted")
            .asRuntimeException();
      }
      Set<Ad> selected = new LinkedHashSet<>();
      logger.info("received ad request (context_words=" + contextKeys + ")");
      for (String key : contextKeys) {
        Collection<Ad> ads = catalog.getAdsByCategory(key);
        selected.addAll(ads);
      }
      if (selected.isEmpty()) {
        // Serve random ads.
        return catalog.getRandomAds();
      }
      return new ArrayList<>(selected);
    }
  }

  /** Main launches the server from the command line. */
  public static void main(String[] args) throws IOException, InterruptedException {
    logger.info("AdService starting.");
    final AdService service = new AdService();
    service.start();
    service.blockUntilShutdown();
  }
}
