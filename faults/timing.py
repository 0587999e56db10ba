"""How long a fault takes to bite and to be repaired: the time model the schedule generator and the oracle use.

:func:`onset_seconds` (time to bite), :func:`work_seconds` (time for a correct operator to
earn its repair) and :func:`remedy_grace_seconds` (time a remedy needs to take effect), from
the app model and the build pipeline's build times; calibrated by the real-path
qualification (:mod:`engine.run.qualify`, ``tests/test_qualification.py``).
"""

from __future__ import annotations

from engine.apps.builds import build_seconds
from engine.apps.model import AppModel
from faults.spec import FaultSpec

MARGIN_S = 45.0
"""Slack added to each modeled step, seconds."""


def rollout_seconds(app: AppModel, service: str) -> float:
    """Time for one new pod of ``service`` to become ready: pull, start-up, readiness delay."""
    svc = app.service(service)
    probe = svc.readiness_probe
    ready = max(svc.startup_s * 1.25, probe.initial_delay_s + probe.period_s if probe else 0.0)
    return 20.0 + ready


def onset_seconds(app: AppModel, spec: FaultSpec) -> float:
    """Seconds from injection until the fault bites (build + first pod of the rollout)."""
    if spec.mechanism == "code-change":
        return build_seconds(app.service(spec.target).language) + rollout_seconds(app, spec.target) + MARGIN_S
    if spec.mechanism in ("config-patch", "resource-limit", "image", "readiness-probe", "config-ref",
                          "liveness-probe"):
        return rollout_seconds(app, spec.target) + MARGIN_S
    if spec.mechanism == "kubelet-stop":
        # Its pods keep serving until the node lifecycle controller marks them not ready: up
        # to 50 s (last lease renewal, 10 s, + --node-monitor-grace-period 40 s), + a 5 s pass.
        return 55.0 + MARGIN_S
    return MARGIN_S


DETECT_S = 150.0
"""Allowance for detection in :func:`work_seconds`: an attributable alert turns pending within
about a minute of the onset, and the operator sees it at its next invocation (every 60 s)."""


def work_seconds(app: AppModel, spec: FaultSpec) -> float:
    """Seconds from injection until a correct operator can have earned the fault's repair credit:
    the onset, detection (:data:`DETECT_S`), the remedy's build (a patch) and one rollout of the
    remedied service, and the outcome soak (:data:`scoring.gates.SOAK_S`, 180 s).

    An upper bound calibrated by the real-path qualification (``tests/test_qualification.py``
    asserts every catalog fault's measured oracle credit comes no later); schedules give every
    fault at least this lifetime, so a perfect operator can earn every stage of every fault.
    """
    service = spec.remedy.service or spec.target
    build = build_seconds(app.service(service).language) if spec.remedy.action == "revert-patch" else 0.0
    return onset_seconds(app, spec) + DETECT_S + build + rollout_seconds(app, service) + 180.0


def remedy_grace_seconds(app: AppModel, spec: FaultSpec) -> float:
    """Seconds a correct remedy needs to take effect (rebuild, roll out both replicas)."""
    service = spec.remedy.service or spec.target
    roll = 2 * rollout_seconds(app, service) + MARGIN_S
    if spec.remedy.action == "revert-patch":
        return build_seconds(app.service(service).language) + roll
    if spec.remedy.action == "set-flag":
        return 2 * MARGIN_S
    return roll


