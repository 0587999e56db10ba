"""recommendationservice: hipstershop.RecommendationService over gRPC.

ListRecommendations lists the catalog, drops the products the shopper is looking at (the
product page's id, or the ids in the cart) and returns a random sample of the rest. The
frontend resolves every returned id with GetProduct and shows the first four.
"""

import json
import logging
import os
import random
import sys
import time
from concurrent import futures

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

import demo_pb2
import demo_pb2_grpc
from catalog_client import CatalogError, ProductCatalogClient

DEFAULT_PORT = "8080"

# How many ids one response carries at most.
MAX_RESPONSES = 5


class JSONFormatter(logging.Formatter):
    def format(self, record):
        return json.dumps(
            {
                "timestamp": self.formatTime(record),
                "severity": record.levelname,
                "name": record.name,
                "message": record.getMessage(),
            }
        )


def get_json_logger(name):
    log = logging.getLogger(name)
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(JSONFormatter())
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    return log


logger = get_json_logger("recommendationservice-server")


def pick_recommendations(catalog_ids, exclude_ids, max_responses=MAX_RESPONSES, rng=random):
    """Samples up to max_responses ids from catalog_ids that are not in exclude_ids.

    The sample keeps no duplicates and never contains an excluded id; with fewer
    candidates than max_responses it returns all of them, in random order.
    """
    excluded = set(exclude_ids)
    candidates = [pid for pid in dict.fromkeys(catalog_ids) if pid not in excluded]
    num_return = min(max_responses, len(candidates))
    indices = rng.sample(range(len(candidates)), num_return)
    return [candidates[i] for i in indices]


class RecommendationService(demo_pb2_grpc.RecommendationServiceServicer):
    def __init__(self, catalog):
        self.catalog = catalog

    def ListRecommendations(self, request, context):
        try:
            catalog_ids = self.catalog.list_product_ids()
        except CatalogError as err:
            logger.error(f"[Recv ListRecommendations] {err}")
            context.abort(err.code, str(err))
        if not catalog_ids:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, "the product catalog is empty")

        prod_list = pick_recommendations(catalog_ids, request.product_ids)
        logger.info(
            "[Recv ListRecommendations] user_id={} excluded={} product_ids={}".format(
                request.user_id, len(request.product_ids), prod_list
            )
        )
        response = demo_pb2.ListRecommendationsResponse()
        response.product_ids.extend(prod_list)
        return response

    def Check(self, request, context):
        return health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.SERVING)

    def Watch(self, request, context):
        context.set_code(grpc.StatusCode.UNIMPLEMENTED)
        return health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.UNIMPLEMENTED)


def serve():
    port = os.environ.get("PORT", DEFAULT_PORT)
    catalog = ProductCatalogClient()

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=10))
    service = RecommendationService(catalog)
    demo_pb2_grpc.add_RecommendationServiceServicer_to_server(service, server)
    health_pb2_grpc.add_HealthServicer_to_server(service, server)

    logger.info(f"listening on port: {port}")
    server.add_insecure_port(f"[::]:{port}")
    server.start()
    try:
        while True:
            time.sleep(10000)
    except KeyboardInterrupt:
        server.stop(0)
        catalog.close()


if __name__ == "__main__":
    logger.info("initializing recommendationservice")
    if os.environ.get("DISABLE_PROFILER"):
        logger.info("Profiler disabled.")
    serve()
