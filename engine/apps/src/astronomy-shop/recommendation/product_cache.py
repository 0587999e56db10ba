"""Product ids for recommendations, with the faulty cache of recommendationCacheFailure.

Healthy path: every request asks the product catalog for the full list (ListProducts) and
uses the ids as they are.

With the flag on, a module-level "cache" of ids is used instead. On a cache miss (about half
of the requests) the catalog is asked again and the cache is extended by the fresh ids plus
40% of what it already held, so it grows about 1.4x per miss and is never pruned: memory
and per-request work grow until the pod is OOM-killed (500Mi limit in the manifest).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Sequence

from opentelemetry import trace

logger = logging.getLogger("recommendation.cache")
tracer = trace.get_tracer("recommendation")

# Share of requests that miss the faulty cache and grow it.
CACHE_MISS_RATE = 0.5
# Growth per miss: fresh ids plus this share of the current cache.
CACHE_GROWTH = 0.4

FetchIds = Callable[[], Sequence[str]]


class ProductIdCache:
    """Holds the faulty cache; thread-safe enough for the demo's GIL-bound server."""

    def __init__(self, fetch_ids: FetchIds, rng: random.Random | None = None) -> None:
        self._fetch_ids = fetch_ids
        self._rng = rng or random.Random()
        self._cached_ids: list[str] = []
        self._first_run = True

    @property
    def size(self) -> int:
        return len(self._cached_ids)

    def product_ids(self, cache_enabled: bool) -> list[str]:
        """Ids of every product, through the faulty cache when ``cache_enabled``."""
        span = trace.get_current_span()
        if not cache_enabled:
            span.set_attribute("app.recommendation.cache_enabled", False)
            return list(self._fetch_ids())

        span.set_attribute("app.recommendation.cache_enabled", True)
        if self._first_run or self._rng.random() < CACHE_MISS_RATE:
            self._first_run = False
            span.set_attribute("app.cache_hit", False)
            logger.info("get_product_list: cache miss")
            fresh = list(self._fetch_ids())
            keep = int(len(self._cached_ids) * CACHE_GROWTH)
            self._cached_ids = self._cached_ids + fresh + self._cached_ids[:keep]
        else:
            span.set_attribute("app.cache_hit", True)
            logger.info("get_product_list: cache hit")
        span.set_attribute("app.recommendation.cache_size", len(self._cached_ids))
        return self._cached_ids

    def reset(self) -> None:
        """Drop the cache (used when the flag is switched off again)."""
        if self._cached_ids:
            logger.info("dropping %d cached product ids", len(self._cached_ids))
        self._cached_ids = []
        self._first_run = True


def choose_recommendations(
    all_ids: Sequence[str],
    exclude: Sequence[str],
    max_responses: int,
    rng: random.Random,
) -> list[str]:
    """Up to ``max_responses`` distinct ids, drawn at random, none of them in ``exclude``.

    Duplicates in ``all_ids`` (the faulty cache holds many) are collapsed first, keeping
    first-seen order, so the sample is uniform over distinct products.
    """
    if max_responses <= 0:
        return []
    excluded = set(exclude)
    seen: set[str] = set()
    candidates: list[str] = []
    for pid in all_ids:
        if pid in excluded or pid in seen:
            continue
        seen.add(pid)
        candidates.append(pid)
    if len(candidates) <= max_responses:
        rng.shuffle(candidates)
        return candidates
    return rng.sample(candidates, max_responses)
