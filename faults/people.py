"""Who ships changes to a service, and how they word them: one pool for every change.

An operator reads the build pipeline's log to find the change behind an incident. For that
to be a judgement about content and timing, not a lookup, every change a schedule ships --
a fault's change, its revert, a benign change and a benign revert -- is written by the
same people in the same style:

* **Teams.** A service's team is the set of authors of the catalog's change-driven faults
  that ship to it (the row's service: a flag change ships to the flag service), weighted by
  how many of them each wrote; a service no fault ships to gets the app's whole pool.
  Fault changes keep their catalog author (the catalog is the data); benign changes and
  every revert draw from the service's team with these weights, so in a run the share of
  an author's rows that belong to faults is the same for every author.
* **Summaries.** A benign change's commit subject comes from the same service's catalog
  subjects (verbatim or recombined: one subject's
  ``type(scope):`` prefix with another's body), so the words of a fault's subject are no
  marker of a fault. On a user app (a generated catalog, whose subjects are templates) a
  benign change takes subjects of its own pipeline-log kind only, so a template's KIND is
  the same on benign rows as on its faults' (:func:`subjects` with ``strict``).
  A revert is ``Revert "<subject>"`` (``git revert``'s default) for faults and benign
  changes alike.
* **Services.** Benign changes go to a service with the weight its catalog change-driven
  faults have, so the service of a row says nothing either.

Everything here is a pure function of the catalog (and a uniform draw given by the caller),
so a schedule and a run stay reproducible.
"""

from __future__ import annotations

import functools
import re
import zlib
from collections import Counter
from collections.abc import Sequence

from engine.apps.builds import CONFIG_SUFFIXES
from faults.spec import CHANGE_MECHANISMS, Catalog, FaultSpec, load_catalog

ROW_KIND = {"code-change": "code", "config-patch": "config", "feature-flag": "config", "scale": "scale",
            "resource-limit": "resources", "image": "image", "readiness-probe": "probe", "config-ref": "config",
            "service-change": "service", "liveness-probe": "probe"}
"""The pipeline log's ``kind`` of the row a change-driven fault's injection ships."""

_PREFIX = re.compile(r"^([a-z][a-z0-9-]*(?:\([^)]*\))?!?:)\s*(.+)$")


def row_service(spec: FaultSpec) -> str:
    """The service whose pipeline log shows a change-driven fault's change."""
    if spec.config is not None and spec.config.flag is not None:
        return spec.config.flag.service
    return spec.target


def row_kind(spec: FaultSpec) -> str:
    """The pipeline log's kind of a change-driven fault's row: a code change to a
    configuration file rolls out as configuration (no build)."""
    kind = ROW_KIND[spec.mechanism]
    if kind == "code" and spec.change is not None and spec.change.file.endswith(CONFIG_SUFFIXES):
        return "config"
    return kind


def _author_summary(spec: FaultSpec) -> tuple[str, str] | None:
    if spec.mechanism not in CHANGE_MECHANISMS:
        return None
    if spec.change is not None:
        return spec.change.author, spec.change.summary
    if spec.config is not None:
        return spec.config.author, spec.config.summary
    if spec.service_change is not None:
        return spec.service_change.author, spec.service_change.summary
    return None


def _changes(catalog: Catalog) -> list[tuple[str, str, str, str]]:
    """(row service, row kind, author, summary) of every change-driven fault."""
    out = []
    for spec in catalog.faults:
        got = _author_summary(spec)
        if got is not None:
            out.append((row_service(spec), row_kind(spec), got[0], got[1]))
    return out


def team(catalog: Catalog, service: str) -> tuple[list[str], list[float]]:
    """The authors who ship to ``service`` and their weights (summing to 1), in a stable order.

    Raises:
        ValueError: the catalog has no change-driven fault at all (no pool to draw from).
    """
    rows = _changes(catalog)
    if not rows:
        raise ValueError("the catalog has no change-driven fault: no authors to draw from")
    counts = Counter(a for s, _, a, _ in rows if s == service) or Counter(a for _, _, a, _ in rows)
    names = sorted(counts)
    total = sum(counts.values())
    return names, [counts[n] / total for n in names]


def pick(names: Sequence[str], weights: Sequence[float], u: float) -> str:
    """The name whose cumulative weight first exceeds ``u`` (a uniform draw in [0, 1))."""
    return names[pick_index(weights, u)]


def pick_index(weights: Sequence[float], u: float) -> int:
    """The index whose cumulative weight first exceeds ``u`` (a uniform draw in [0, 1))."""
    acc = 0.0
    for i, w in enumerate(weights):
        acc += w
        if u < acc:
            return i
    return len(weights) - 1


def row_kinds(catalog: Catalog) -> list[tuple[str, str]]:
    """(row service, row kind) of every change-driven fault: benign changes draw their kind
    from these, so the kind of a row says as little as its service."""
    return [(s, k) for s, k, _, _ in _changes(catalog)]


def shows_in_log(spec: FaultSpec) -> bool:
    """Whether a fault's change shows in the pipeline log (a change-driven fault)."""
    return _author_summary(spec) is not None


def author_for(catalog: Catalog, service: str, u: float) -> str:
    """An author of ``service``'s team for the uniform draw ``u``."""
    names, weights = team(catalog, service)
    return pick(names, weights, u)


def service_weights(catalog: Catalog, services: Sequence[str]) -> list[float]:
    """Weights (summing to 1) of ``services`` for a benign change: each service's count of
    change-driven catalog faults, plus a half so a service no fault ships to still gets some."""
    counts = Counter(s for s, _, _, _ in _changes(catalog))
    raw = [counts.get(s, 0) + 0.5 for s in services]
    total = sum(raw)
    return [r / total for r in raw]


def subjects(catalog: Catalog, service: str, kind: str | None = None, strict: bool = False) -> list[str]:
    """Catalog commit subjects a benign change to ``service`` is worded from: those of the
    changes that ship to the service, else the app's. With ``kind`` (a pipeline-log kind,
    :func:`row_kind`), those of the service's changes of that kind, else
    the app's of that kind with their service's name replaced by ``service``, else as
    without it (a re-tag reads like a release, a bigger limit like a right-sizing).

    With ``strict`` (a user app's generated catalog), never a subject of another kind: the
    list is empty when the catalog has no change of ``kind``. A generic catalog words every
    fault of one template alike (``release: X v0.10.7`` is always an image row), so a benign
    config row worded as a release would be told from the faults by its kind alone."""
    rows = _changes(catalog)
    if kind is not None:
        own = sorted({summ for s, k, _, summ in rows if s == service and k == kind})
        if own:
            return own
        other = sorted({summ.replace(s, service) for s, k, _, summ in rows if k == kind})
        if other or strict:
            return other
    got = sorted({summ for s, _, _, summ in rows if s == service})
    return got or sorted({summ for _, _, _, summ in rows}) or ["chore: tidy up"]


def word(pool: Sequence[str], u1: float, u2: float, u3: float) -> str:
    """A commit subject from ``pool``: verbatim when ``u1 < 0.5``, else the ``type(scope):``
    prefix of one subject with the body of another (each chosen by a uniform draw)."""
    first = pool[min(int(u2 * len(pool)), len(pool) - 1)]
    if u1 < 0.5 or len(pool) < 2:
        return first
    second = pool[min(int(u3 * len(pool)), len(pool) - 1)]
    m1, m2 = _PREFIX.match(first), _PREFIX.match(second)
    if m1 is None or m2 is None:
        return first
    return f"{m1.group(1)} {m2.group(2)}"


def revert_subject(summary: str) -> str:
    """The subject ``git revert`` gives the revert of a commit with subject ``summary``."""
    return f'Revert "{summary}"'


@functools.cache
def _shipped(app: str) -> Catalog | None:
    try:
        return load_catalog(app)
    except (FileNotFoundError, ValueError):
        return None


def revert_author(app: str, spec: FaultSpec, t: float) -> str:
    """Who reverts a fault's change at run time ``t``: a member of the row service's team,
    chosen by a hash of (fault id, second) so a run stays reproducible; the fault's own
    author when ``app`` has no shipped catalog."""
    cat = _shipped(app)
    own = _author_summary(spec)
    if cat is None or not _changes(cat):
        return own[0] if own else "platform-team"
    u = zlib.crc32(f"{spec.id}:{int(t)}".encode()) / 2**32
    return author_for(cat, row_service(spec), u)
