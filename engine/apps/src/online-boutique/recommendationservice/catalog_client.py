"""Client of hipstershop.ProductCatalogService used by the recommender.

The catalog address comes from PRODUCT_CATALOG_SERVICE_ADDR ("productcatalogservice:3550"
in the manifest). The recommender lists the whole catalog on every request; there is no
cache, so a slow catalog makes every product and cart page slow.
"""

import logging
import os
import time

import grpc

import demo_pb2
import demo_pb2_grpc

logger = logging.getLogger("recommendationservice-server")

ADDR_ENV = "PRODUCT_CATALOG_SERVICE_ADDR"

# Deadline of one ListProducts call, seconds.
LIST_TIMEOUT_S = 2.0
# Extra attempts after the first on UNAVAILABLE (a catalog pod restarting).
RETRIES = 2
RETRY_BACKOFF_S = 0.05

# Codes worth another attempt; anything else is returned to the caller at once.
RETRYABLE = (grpc.StatusCode.UNAVAILABLE,)


class CatalogError(Exception):
    """The catalog could not be listed; carries the gRPC status code."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class ProductCatalogClient:
    def __init__(self, addr=None):
        self.addr = addr or os.environ.get(ADDR_ENV, "")
        if not self.addr:
            raise ValueError(f"{ADDR_ENV} environment variable not set")
        logger.info(f"product catalog address: {self.addr}")
        self.channel = grpc.insecure_channel(self.addr)
        self.stub = demo_pb2_grpc.ProductCatalogServiceStub(self.channel)

    def list_product_ids(self):
        """Returns the ids of every product in the catalog, in catalog order.

        Raises:
            CatalogError: the catalog did not answer within the deadline, after retries.
        """
        attempt = 0
        while True:
            try:
                response = self.stub.ListProducts(demo_pb2.Empty(), timeout=LIST_TIMEOUT_S)
                return [p.id for p in response.products]
            except grpc.RpcError as err:
                code = err.code()
                if code in RETRYABLE and attempt < RETRIES:
                    attempt += 1
                    logger.warning(f"ListProducts {code.name}, retry {attempt}/{RETRIES}")
                    time.sleep(RETRY_BACKOFF_S * attempt)
                    continue
                raise CatalogError(code, f"ListProducts failed: {code.name}: {err.details()}") from err

    def close(self):
        self.channel.close()
