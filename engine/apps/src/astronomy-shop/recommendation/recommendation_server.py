#!/usr/bin/python
"""Recommendation service: ListRecommendations suggests catalog products the shopper is
not already looking at. Serves gRPC on RECOMMENDATION_PORT; reads the catalog from
PRODUCT_CATALOG_ADDR and the recommendationCacheFailure flag from flagd.
"""

from __future__ import annotations

import logging
import os
import random
import signal
from concurrent import futures

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from openfeature import api
from openfeature.contrib.provider.flagd import FlagdProvider
from opentelemetry import metrics, trace

import demo_pb2
import demo_pb2_grpc
from product_cache import ProductIdCache, choose_recommendations

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s [%(name)s] %(message)s")
logger = logging.getLogger("recommendation")
tracer = trace.get_tracer("recommendation")
meter = metrics.get_meter("recommendation")
rec_svc_metrics = meter.create_counter(
    "app_recommendations_counter", unit="recommendations", description="Counts the total number of given recommendations"
)

# Recommendations returned per request; the frontend shows the first four.
MAX_RESPONSES = 5
# Deadline for the catalog call, seconds.
CATALOG_TIMEOUT_S = 2.0
CACHE_FLAG = "recommendationCacheFailure"


def must_env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise SystemExit(f"{name} environment variable must be set")
    return value


class RecommendationService(demo_pb2_grpc.RecommendationServiceServicer):
    def __init__(self, catalog_stub: demo_pb2_grpc.ProductCatalogServiceStub) -> None:
        self._catalog = catalog_stub
        self._rng = random.Random()
        self._cache = ProductIdCache(self._fetch_product_ids, self._rng)
        self._flags = api.get_client()

    def _fetch_product_ids(self) -> list[str]:
        response = self._catalog.ListProducts(demo_pb2.Empty(), timeout=CATALOG_TIMEOUT_S)
        return [product.id for product in response.products]

    def _cache_failure_enabled(self) -> bool:
        # A failed evaluation (flagd down) falls back to the default, off.
        try:
            return bool(self._flags.get_boolean_value(CACHE_FLAG, False))
        except Exception:  # noqa: BLE001 - any provider error means "use the default"
            logger.warning("evaluating %s failed, using False", CACHE_FLAG, exc_info=True)
            return False

    def ListRecommendations(self, request, context):  # noqa: N802 - gRPC method name
        span = trace.get_current_span()
        requested = list(request.product_ids)
        span.set_attribute("app.products.count", len(requested))

        cache_enabled = self._cache_failure_enabled()
        if not cache_enabled:
            self._cache.reset()
        try:
            all_ids = self._cache.product_ids(cache_enabled)
        except grpc.RpcError as err:
            logger.error("product catalog unavailable: %s", err.code())
            context.abort(grpc.StatusCode.UNAVAILABLE, f"product catalog unavailable: {err.code().name}")

        prod_list = choose_recommendations(all_ids, requested, MAX_RESPONSES, self._rng)
        span.set_attribute("app.filtered_products.count", len(prod_list))
        logger.info("Receive ListRecommendations for product ids:%s, returning %s", requested, prod_list)

        rec_svc_metrics.add(len(prod_list), {"recommendation.type": "catalog"})
        return demo_pb2.ListRecommendationsResponse(product_ids=prod_list)


def serve() -> None:
    port = must_env("RECOMMENDATION_PORT")
    catalog_addr = must_env("PRODUCT_CATALOG_ADDR")

    api.set_provider(
        FlagdProvider(
            host=os.environ.get("FLAGD_HOST", "localhost"),
            port=int(os.environ.get("FLAGD_PORT", "8013")),
            timeout=1,
        )
    )

    channel = grpc.insecure_channel(catalog_addr)
    catalog_stub = demo_pb2_grpc.ProductCatalogServiceStub(channel)

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=10))
    service = RecommendationService(catalog_stub)
    demo_pb2_grpc.add_RecommendationServiceServicer_to_server(service, server)

    health_servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    health_servicer.set("oteldemo.RecommendationService", health_pb2.HealthCheckResponse.SERVING)

    server.add_insecure_port(f"[::]:{port}")
    server.start()
    logger.info("Recommendation service listening on port %s, catalog at %s", port, catalog_addr)

    def shutdown(signum, _frame):
        logger.info("signal %s received, draining", signum)
        health_servicer.enter_graceful_shutdown()
        server.stop(grace=5)

    signal.signal(signal.SIGTERM, shutdown)
    server.wait_for_termination()


if __name__ == "__main__":
    serve()
