"""Scores for the panes, computed by the same scorer that scores agents (:mod:`scoring.score`).

The running score and the per-fault stage progress are never estimated by the UI: they
are :func:`scoring.score.score_events` over the events so far (throttled by the screens,
computed in a worker). This module adds what the panes need on top of a
:class:`~scoring.score.RunScore`:

* :func:`stage_times`: the run time at which each fault reached correlation,
  localization and repair, so a replay can show progress at any playhead from the final
  score;
* :func:`stage_success_series`: stage-wise success over time (the share of the faults
  injected so far that had reached each stage), for the scorecard's chart;
* :class:`Scorer`: score_events with the app model loaded once (loading Train Ticket's
  model costs about 0.2 s, more than scoring a short run) and, once it is ready, the no-op
  counterfactual of the run's schedule (:meth:`Scorer.use_schedule` computes it in a
  background thread, or takes it from the cache): until then repair credit is provisional,
  as ``marathon score --no-counterfactual`` marks it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.bundle.events import Event
from scoring.counterfactual import Counterfactual
from scoring.explain import score_and_explainer
from scoring.score import RunScore

if TYPE_CHECKING:
    from scoring.explain import FaultTrail

STAGES = ("corr", "loc", "rep")
"""Correlation, localization, repair (DESIGN section 8), in order."""

StageTimes = dict[str, tuple[float | None, float | None, float | None]]
"""Fault id -> run times (seconds) at which it reached corr, loc and rep (None: not reached)."""


def stage_times(score: RunScore | None) -> StageTimes:
    """When each scored fault reached each stage (absolute run time, seconds)."""
    out: StageTimes = {}
    if score is None:
        return out
    for f in score.faults:
        def at(after: float | None, t0: float = f.t_inject) -> float | None:
            return None if after is None else t0 + after
        out[f.fault] = (at(f.detect_after) if f.correlated else None, at(f.localize_after) if f.localized else None,
                        at(f.repair_after) if f.repaired else None)
    return out


def stages_reached(times: tuple[float | None, float | None, float | None] | None, t: float) -> tuple[bool, ...]:
    """Which of (corr, loc, rep) a fault had reached by run time ``t``."""
    if times is None:
        return (False, False, False)
    return tuple(x is not None and x <= t + 1e-9 for x in times)


def stage_success_series(score: RunScore, end_t: float, points: int) -> dict[str, list[float]]:
    """Stage-wise success over time: at ``points`` evenly spaced run times in ``(0, end_t]``,
    the share of faults injected by then that had reached each stage.

    Returns:
        ``{"corr": [...], "loc": [...], "rep": [...]}``, each ``points`` values in 0..1.
    """
    times = stage_times(score)
    injected = sorted((f.t_inject, f.fault) for f in score.faults)
    out: dict[str, list[float]] = {s: [] for s in STAGES}
    for k in range(points):
        t = end_t * (k + 1) / points
        live = [fid for t0, fid in injected if t0 <= t]
        for i, stage in enumerate(STAGES):
            if not live:
                out[stage].append(0.0)
                continue
            hit = sum(1 for fid in live if (x := times[fid][i]) is not None and x <= t)
            out[stage].append(hit / len(live))
    return out


@dataclass
class ScoreResult:
    """A score of the events up to ``seq``, how long it took (wall seconds) and its stage times;
    ``trails`` builds every fault's evidence trail from the same scoring pass when called
    (:func:`scoring.explain.score_and_explainer`; the scorecard calls it after the reveal only)."""

    score: RunScore
    seq: int
    t: float
    elapsed_s: float
    stages: StageTimes
    trails: Callable[[], Mapping[str, FaultTrail]] | None = None


class Scorer:
    """Scores event prefixes of one run with :func:`scoring.score.score_events` (module docstring)."""

    def __init__(self) -> None:
        self._app: Any = None
        self._app_name: str | None = None
        self.counterfactual: Counterfactual | None = None
        """The no-op counterfactual scores use, once :meth:`use_schedule` has it."""
        self.counterfactual_error: str | None = None

    def use_app(self, name: str, model: Any) -> None:
        """Score with this app model (the one a bundle carries) instead of the installed ``name``."""
        self._app, self._app_name = model, name

    def use_schedule(self, app: str, seed: int, schedule_text: str, *, wait: bool = False,
                     cache: bool = True) -> None:
        """Compute the no-op counterfactual of the run's schedule in a background thread
        (:func:`engine.run.counterfactual.noop_counterfactual`; cached on disk), for the scores after it.

        Args:
            app, seed, schedule_text: the run's app, seed and schedule YAML.
            wait: compute it now, in this thread (tests and screenshots).
            cache: read and write the on-disk cache. A player's run passes False: the cache
                file names every fault and its probe times, in the clear, while the run is live.
        """
        def work() -> None:
            from engine.run.counterfactual import noop_counterfactual

            try:
                self.counterfactual = noop_counterfactual(app, seed, schedule_text, use_cache=cache)
            except Exception as exc:  # a schedule this version cannot replay: scores stay provisional
                self.counterfactual_error = f"{type(exc).__name__}: {exc}"

        if wait:
            work()
        else:
            threading.Thread(target=work, name="noop-counterfactual", daemon=True).start()

    def score(self, events: Sequence[Event]) -> ScoreResult | None:
        """Score ``events`` (a run's prefix); None before ``run.start`` or without any event."""
        if not events or events[0].kind != "run.start":
            return None
        name = str(events[0].payload.get("app"))
        if self._app_name != name:
            from engine.apps.model import load_app

            self._app = load_app(name)
            self._app_name = name
        started = time.perf_counter()
        result, trails = score_and_explainer(events, app=self._app, counterfactual=self.counterfactual)
        return ScoreResult(result, events[-1].seq, events[-1].t, time.perf_counter() - started, stage_times(result),
                           trails)
