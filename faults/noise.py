"""Background alert noise: the seeded plan of what a healthy cluster keeps alerting on.

A real cluster is never quiet. Every schedule the generator makes carries a
:class:`BackgroundNoise` plan, drawn from the schedule's seed (its own random stream, so
the faults, benign changes and bursts of a seed are the same with or without it) and
recorded in the schedule file, so a bundle describes its noise and a replay reproduces it.
The simulator turns the plan into the series a real Prometheus would scrape
(:mod:`engine.sim.noise`); the alerts come from rules in the opt-in ``extended`` pack
(``alerts/pack/kube-prometheus.rules.yaml`` and ServiceErrorRate) evaluated on those series,
never from alerts injected as such. The paper pack (the leaderboard default) has none of
these rules and sees none of this noise -- it only sees the flaky service's errors if
they reach an entry route, which they do not (its callers retry).

What the plan holds, and why each is benign:

* **Watchdog** (kube-prometheus ``general.rules``): ``vector(1)``, always firing, so the
  alerting pipeline proves it is alive. Its labels name no workload.
* **KubeClientCertificateExpiration** (warning): a client certificate used against the
  API server expires in :attr:`CertExpiry.expires_in_s` (3 to 6.5 days at run start:
  inside kube-prometheus' 7-day warning, outside its 24-hour critical), on
  :attr:`CertExpiry.share` of the certificate-authenticated requests. Long-lived: it
  fires about 10 minutes into the run and stays. Labels: the API server's ``job``/``instance``.
* **KubeClientErrors** (warning, a control-plane warning): the API server's own client
  gets 503 on :attr:`ClientErrors.share` (1.5-4 %) of its requests from
  :attr:`ClientErrors.at` to :attr:`ClientErrors.until` -- the aggregated metrics API
  being unavailable now and then is the usual cause. Fires after 15 minutes above 1 %.
* **CPUThrottlingHigh** (info): the ``kube-rbac-proxy-main`` sidecar of the monitoring
  stack's kube-state-metrics pod, whose 20m CPU limit (kube-prometheus' manifest) CFS
  throttles in :attr:`Throttling.share` of its periods. kube-prometheus users see exactly
  this alert on its own sidecars on a default install ("67% throttling of CPU in namespace
  monitoring for container kube-rbac-proxy-main in pod kube-state-metrics-...":
  prometheus-operator/kube-prometheus issue #72, pull request #941).
  It lives in namespace ``monitoring``, outside the app: no app workload's name.
* **A flaky service** (:class:`Flaky`): a leaf app service (it calls no other service)
  whose :attr:`Flaky.handler` fails :attr:`FlakyEpisode.share` of its attempts during
  short episodes; its callers' client libraries retry, so no caller and no entry route
  sees an error, but its own ``http_requests_total{code="500"}`` does, and the extended
  pack's ServiceErrorRate fires, resolves and fires again (flapping).

**Never attributable to a fault** (:mod:`scoring.attribution`: an alert supports a fault
by scope and time). Watchdog, the certificate and client-error warnings carry no
``service``, ``deployment``, ``statefulset`` or ``pod`` label; the throttled pod's name
starts with no app workload's name, so no alert on it names an app workload. The flaky
service's episodes are placed only where no fault reaches it: an episode, plus the time its
alert takes to resolve (:data:`RESOLVE_S`), never meets the window (injection to
:data:`ATTRIBUTION_GRACE_S` after the revert) of a fault on the service, of a fault that
acts on it (its flag's or remedy's service, the caller or store of a runtime fault), or of
any zone outage (which strands every service with a pod in the lost zone). A leaf service
calls nothing, so no fault elsewhere propagates to it. No label marks the noise as noise:
an operator learns it as a real team does (it predates the faults, and it is not where
they are). An incident filed on noise alone supports no fault: it is spurious
(:mod:`scoring.score`).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from engine.apps.model import AppModel, load_app
from faults.spec import Catalog, FaultSpec

NOISE_VERSION = 1
"""Part of the noise stream's seed: a change to how noise is drawn bumps it."""

ATTRIBUTION_GRACE_S = 300
""":data:`scoring.attribution.GRACE_S`: an alert active this long after a revert still
supports the fault (faults must not import scoring; a test keeps the two equal)."""
RESOLVE_S = 420
"""Longest time after an episode ends until ServiceErrorRate has resolved, seconds: its
5-minute rate window must drain below 5 % (at most 300 s) plus two evaluations and slack."""
SAFETY_S = 60
"""Extra margin around a fault's window, seconds."""
EPISODE_S = (180, 360)
"""Flaky episodes last 3 to 6 minutes (assumption): long enough that ServiceErrorRate
(5-minute ratio above 5 % for 2 minutes) fires at the lowest share (12 %: above the
threshold for about 230 s), short enough to flap."""
EPISODE_GAP_S = (300, 600)
"""Quiet time between two flaky episodes, 5 to 10 minutes (assumption), drawn uniformly: the
5-minute ratio of a 30 % episode is below 5 % again 250 s after it ends, so the alert
resolves before the next one."""
MIN_HANDLER_RPS = 0.5
"""The flaky handler serves at least this many requests per second at the base load (the
extended rule's minimum is 0.1 requests/s)."""
THROTTLED_POD = ("kube-state-metrics", "kube-rbac-proxy-main")
"""The throttled workload of the monitoring stack and its container (kube-prometheus'
``kube-state-metrics`` deployment, ``kube-rbac-proxy-main`` sidecar, CPU limit 20m)."""
MONITORING_NAMESPACE = "monitoring"
"""kube-prometheus' namespace."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


class CertExpiry(_Strict):
    """A client certificate close to expiry, on a share of the API server's client-certificate requests."""

    client: str = Field(description="the certificate's subject (who authenticates with it)")
    expires_in_s: int = Field(gt=86_400, le=604_800, description="remaining lifetime at run time 0, seconds")
    share: float = Field(gt=0.01, le=0.2, description="share of certificate-authenticated requests using it")


class ClientErrors(_Strict):
    """5xx answers to the API server's own client, between ``at`` and ``until`` (run seconds)."""

    at: int = Field(ge=0)
    until: int = Field(gt=0)
    share: float = Field(gt=0.01, le=0.1, description="5xx share of its requests")


class Throttling(_Strict):
    """CFS throttling of a monitoring sidecar: ``share`` of its periods, swinging by ``swing``."""

    pod: str = Field(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
    container: str
    share: float = Field(gt=0.25, le=0.9, description="mean throttled share of CFS periods")
    swing: float = Field(ge=0, le=0.2, description="amplitude of its slow swing")
    period_s: int = Field(gt=0, description="period of the swing, seconds")


class FlakyEpisode(_Strict):
    """``share`` of the flaky handler's attempts fail from ``at`` for ``duration`` seconds."""

    at: int = Field(ge=0)
    duration: int = Field(gt=0)
    share: float = Field(gt=0.05, le=0.5)

    @property
    def end(self) -> int:
        return self.at + self.duration


class Flaky(_Strict):
    """A leaf service whose ``handler`` fails in episodes; its callers retry."""

    service: str
    handler: str
    episodes: tuple[FlakyEpisode, ...] = Field(strict=False)


class BackgroundNoise(_Strict):
    """One schedule's background noise (module docstring)."""

    version: int = NOISE_VERSION
    watchdog: bool = True
    cert: CertExpiry
    client_errors: ClientErrors
    throttling: Throttling
    flaky: Flaky | None = None


class _Fault(Protocol):
    """What planning needs of a scheduled fault (:class:`faults.schedule.ScheduledFault`)."""

    @property
    def at(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def fault(self) -> str: ...


def noise_rng(app: str, seed: int) -> np.random.Generator:
    """The noise's own random stream of (app, seed): independent of the fault draws."""
    entropy = [seed & 0xFFFFFFFF, seed >> 32, zlib.crc32(app.encode()), zlib.crc32(b"noise"), NOISE_VERSION]
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy)))


def handler_rps(app: AppModel) -> dict[tuple[str, str], float]:
    """Requests per second each (service, operation) serves at the app's base load, from the
    route shares and the calls' ``times`` (the static profile of :mod:`engine.sim.calltree`)."""
    out: dict[tuple[str, str], float] = {}

    def walk(service: str, op: str, rps: float, depth: int) -> None:
        out[(service, op)] = out.get((service, op), 0.0) + rps
        if depth > 32:
            return
        for call in app.service(service).operation(op).calls:
            walk(call.service, call.operation, rps * call.times, depth + 1)

    for route in app.routes:
        walk(route.entry.service, route.entry.operation, route.share * app.load.base_rps, 0)
    return out


def flaky_candidates(app: AppModel) -> list[tuple[str, str]]:
    """(service, handler) pairs that may be flaky: an instrumented app service that calls no
    other service, and one of its operations busy enough for the rule's minimum rate."""
    callers = {a for a, _ in app.edges()}
    rps = handler_rps(app)
    return sorted((s.name, op.name) for s in app.services
                  if s.role == "app" and s.protocol in ("http", "grpc") and s.name not in callers
                  for op in s.operations if rps.get((s.name, op.name), 0.0) >= MIN_HANDLER_RPS)


def reaches(spec: FaultSpec, service: str) -> bool:
    """Whether an alert naming ``service`` could support fault ``spec`` by scope, for a leaf
    ``service`` (module docstring): it is the target, or the fault acts on it directly, or
    the fault is a zone outage."""
    if spec.mechanism == "zone-outage" or spec.target == service or spec.remedy.service == service:
        return True
    if spec.config is not None and spec.config.flag is not None and spec.config.flag.service == service:
        return True
    return spec.runtime is not None and service in (spec.runtime.caller, spec.runtime.store)


def blocked(service: str, faults: Sequence[_Fault], catalog: Catalog) -> list[tuple[int, int]]:
    """Run-time intervals an episode on ``service`` (plus :data:`RESOLVE_S`) must not meet:
    each reaching fault's window to :data:`ATTRIBUTION_GRACE_S` after its revert, widened by
    :data:`SAFETY_S` on both sides."""
    specs = {f.id: f for f in catalog.faults}
    return sorted((f.at - SAFETY_S, f.end + ATTRIBUTION_GRACE_S + SAFETY_S) for f in faults
                  if f.fault in specs and reaches(specs[f.fault], service))


def _free(start: int, end: int, busy: Sequence[tuple[int, int]]) -> bool:
    return all(end + RESOLVE_S < a or b < start for a, b in busy)


def _episodes(rng: np.random.Generator, duration_s: int, busy: Sequence[tuple[int, int]]) -> list[FlakyEpisode]:
    out: list[FlakyEpisode] = []
    t = int(rng.integers(60, 181))
    while True:
        length = int(rng.integers(EPISODE_S[0], EPISODE_S[1] + 1))
        share = round(float(rng.uniform(0.12, 0.3)), 3)
        if t + length + RESOLVE_S > duration_s:
            break
        if _free(t, t + length, busy):
            out.append(FlakyEpisode(at=t, duration=length, share=share))
            t += length + int(rng.integers(EPISODE_GAP_S[0], EPISODE_GAP_S[1] + 1))
        else:
            # Move past the fault window that blocks this episode.
            t = min(b for a, b in busy if not (t + length + RESOLVE_S < a or b < t)) + 1
    return out


def plan(app: str | AppModel, seed: int, duration_s: int, faults: Sequence[_Fault] = (),
         catalog: Catalog | None = None) -> BackgroundNoise:
    """The background noise of a schedule (module docstring).

    Args:
        app: the app (name or model).
        seed: the schedule's seed.
        duration_s: the run's length, seconds.
        faults: the schedule's faults (anything with ``at``, ``end`` and ``fault``).
        catalog: the app's fault catalog (needed when ``faults`` is not empty).

    Returns:
        The plan; the same inputs give the same plan. ``flaky`` is None when the app has no
        candidate service (:func:`flaky_candidates`).

    Raises:
        ValueError: faults given without a catalog.
    """
    model = load_app(app) if isinstance(app, str) else app
    if faults and catalog is None:
        raise ValueError("planning noise around faults needs their catalog")
    rng = noise_rng(model.name, seed)
    cert = CertExpiry(client=str(rng.choice(["system:kube-scheduler", "system:kube-controller-manager",
                                             "system:kube-proxy"])),
                      expires_in_s=int(rng.integers(3 * 86_400, int(6.5 * 86_400))),
                      share=round(float(rng.uniform(0.03, 0.08)), 3))
    start = int(rng.integers(0, 300))
    errors = ClientErrors(at=start, until=max(duration_s, start + 1),
                          share=round(float(rng.uniform(0.015, 0.04)), 4))
    suffix = "".join(str(c) for c in rng.choice(list("bcdfghjklmnpqrstvwxz2456789"), size=5))
    pod_hash = "".join(str(c) for c in rng.choice(list("bcdfghjklmnpqrstvwxz2456789"), size=9))
    throttling = Throttling(pod=f"{THROTTLED_POD[0]}-{pod_hash}-{suffix}", container=THROTTLED_POD[1],
                            share=round(float(rng.uniform(0.35, 0.6)), 3), swing=round(float(rng.uniform(0, 0.08)), 3),
                            period_s=int(rng.integers(600, 1800)))
    flaky = None
    cands = flaky_candidates(model)
    if cands:
        assert catalog is not None or not faults
        busy_of = {c: blocked(c[0], faults, catalog) if catalog is not None else [] for c in cands}
        # The candidate a fault reaches least (so its episodes spread over the run), then the draw.
        order = rng.permutation(len(cands))
        best = min(range(len(cands)), key=lambda i: (sum(b - a for a, b in busy_of[cands[i]]), int(order[i])))
        service, handler = cands[best]
        flaky = Flaky(service=service, handler=handler, episodes=tuple(_episodes(rng, duration_s,
                                                                                 busy_of[cands[best]])))
    return BackgroundNoise(cert=cert, client_errors=errors, throttling=throttling, flaky=flaky)


def noise_problems(noise: BackgroundNoise, model: AppModel, duration_s: int) -> list[tuple[str, str]]:
    """What is wrong with a plan for ``model`` (where, message): an unknown or non-leaf flaky
    service or handler, an episode past the run, a throttled pod named like an app workload."""
    out: list[tuple[str, str]] = []
    names = model.service_names()
    if any(noise.throttling.pod.startswith(n + "-") for n in names):
        out.append(("noise.throttling.pod", f"{noise.throttling.pod!r} is named like a workload of {model.name}; "
                                            "noise must name no app workload"))
    if noise.client_errors.until <= noise.client_errors.at:
        out.append(("noise.client_errors.until", "must be after at"))
    fl = noise.flaky
    if fl is not None:
        if fl.service not in names:
            out.append(("noise.flaky.service", f"unknown service {fl.service!r}"))
        elif fl.service in {a for a, _ in model.edges()}:
            out.append(("noise.flaky.service", f"{fl.service} calls other services; a flaky service must be a leaf"))
        elif fl.handler not in [op.name for op in model.service(fl.service).operations]:
            out.append(("noise.flaky.handler", f"{fl.service} has no operation {fl.handler!r}"))
        for i, ep in enumerate(fl.episodes):
            if ep.end > duration_s:
                out.append((f"noise.flaky.episodes[{i}]", f"ends at {ep.end}s, after the run ({duration_s}s)"))
    return out


def describe(noise: BackgroundNoise) -> dict[str, Any]:
    """A short summary of a plan (for the schedule table and reports)."""
    return {"watchdog": noise.watchdog, "cert_client": noise.cert.client,
            "throttled": f"{MONITORING_NAMESPACE}/{noise.throttling.pod}",
            "flaky": None if noise.flaky is None else f"{noise.flaky.service} {noise.flaky.handler}",
            "flaky_episodes": 0 if noise.flaky is None else len(noise.flaky.episodes)}
