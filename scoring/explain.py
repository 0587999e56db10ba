"""The scorer's evidence trail, per fault: why each stage was earned or not.

:func:`explain_events` scores a run exactly as :func:`scoring.score.score_events` does (the
same pass: :func:`scoring.score._score`) and keeps, for every injected fault, what that pass
read and decided, as a :class:`FaultTrail`:

* **alerts**: every alert instance that supports the fault (:mod:`scoring.attribution`) --
  direct or propagated and why (it names the target, is a pod of the target, calls the target
  via a path of the call graph), its active interval against the fault's window plus
  :data:`scoring.attribution.GRACE_S` -- and a few that look related but did not count (they
  name the fault's service path but were active outside the window, or their route is not in
  the fault's scope);
* **incidents**: the incident that correlates it and why (its alerts' support counts, the
  purity rule, the RCA that named the target), its duplicates, and every incident that held
  alerts supporting the fault but was judged to be about another fault or none, with the reason;
* **RCA**: the reports on the correlating incident, which one counted and what it matched, or
  why none did;
* **repair**: the acts on the fault's services, the probe's samples as runs of passing and
  failing, each recovery judged with every gate's verdict and reason, and what the no-op
  counterfactual's probe showed over the same soak.

Every trail is JSON-able (:meth:`FaultTrail.to_dict`) and renders as indented lines
(:func:`trail_lines`) for ``marathon score --faults`` and the terminal app's scorecard. Times
are seconds of run time; the lines show them as ``m:ss`` (:func:`fmt_t`). Nothing here changes
a score: the numbers are the :class:`~scoring.score.RunScore` of the same pass.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from engine.bundle.events import Event
from scoring.attribution import GRACE_S, FaultWindow, callers_of, workload_of
from scoring.clock import fmt_clock
from scoring.counterfactual import Counterfactual
from scoring.gates import GATES, MIN_SOAK_S, SOAK_S, soak_end
from scoring.score import (
    FORMULA_VERSION,
    PURITY,
    FaultScore,
    IncidentRecord,
    RunScore,
    _Alert,
    _app_of,
    _Assignment,
    _Attempt,
    _end,
    _Fault,
    _Judged,
    _live,
    _route_services,
    _sample_at,
    _score,
    _why,
)

KEY_LABELS = ("service", "deployment", "statefulset", "pod", "handler", "route", "severity")
"""The alert labels a trail shows (besides ``alertname``)."""
MAX_UNCOUNTED = 12
"""At most this many related-looking alerts that did not count are listed per fault."""


fmt_t = fmt_clock
"""Run time as ``m:ss`` (``h:mm:ss`` from an hour); ``-`` for None (:func:`scoring.clock.fmt_clock`)."""


# ---------------------------------------------------------------------------------------------- the trail


@dataclass
class AlertEvidence:
    """One alert instance as the scorer related it to a fault.

    Attributes:
        counted: it supports the fault (:func:`scoring.attribution.candidates`).
        how: ``direct``, ``propagated`` or None (not related by its labels).
        why: how its labels relate to the fault (``names the target (service=x)``, ``pod x of
            the target``, ``x calls the target via x -> y``, or why not).
        when: its active interval against the fault's window plus grace.
        incidents: the incidents that reference it.
    """

    id: str
    rule: str
    labels: dict[str, str]
    active_at: float
    ended_at: float | None
    counted: bool
    how: str | None
    why: str
    when: str
    incidents: list[str] = field(default_factory=list)


@dataclass
class IncidentEvidence:
    """One incident that held alerts supporting the fault, and what the scorer made of it.

    Attributes:
        role: ``correlates`` (it correlates this fault), ``duplicate`` (about this fault,
            another incident correlates it), ``other fault`` (judged to be about ``about``) or
            ``no fault`` (about none: spurious).
        supporting: how many of its alerts support this fault at its report time.
        support: fault id -> how many of its alerts support that fault (faults live at its report).
        reason: why it was (or was not) judged to be about this fault.
    """

    incident: str
    t: float
    role: str
    about: str | None
    alerts: int
    supporting: int
    support: dict[str, int]
    reason: str


@dataclass
class RcaEvidence:
    """A root-cause report on the correlating incident."""

    incident: str
    t: float
    service: str
    category: str
    artifact: str
    counted: bool
    """It is the report that decides localization (the latest inside the fault's window)."""
    note: str


@dataclass
class ActEvidence:
    """An executed act on one of the fault's services inside its window."""

    t: float
    tool: str
    targets: list[str]
    probe_failing: bool | None
    """Whether the fault's probe was failing when it executed (None: no sample yet)."""
    after_localization: bool | None
    """Whether it followed localization (None: never localized)."""
    note: str


@dataclass
class ProbeRun:
    """A run of consecutive probe samples with the same verdict."""

    ok: bool
    start: float
    end: float
    samples: int


@dataclass
class GateEvidence:
    """One repair gate's verdict (None: not judged) and the reason."""

    gate: str
    verdict: bool | None
    reason: str


@dataclass
class RecoveryEvidence:
    """One recovery of the fault's probe after an act on it, as the repair stage judged it.

    Attributes:
        streak_start: the first passing sample after a failing one.
        t_pass: the sample taken as the recovery (later than ``streak_start`` when a gate
            failed for earlier samples of the same passing streak).
        soak_until: the last sample of the held soak (None: the soak did not hold).
        last_failing: the last failing sample before the streak.
        acts: ``tool@m:ss`` of the acts that qualify (on the fault, while its probe failed).
        noop: what the no-op run's probe showed over the same soak (None: no counterfactual).
        noop_failing, noop_samples: its failing and total samples over that soak.
    """

    streak_start: float
    t_pass: float
    credited: bool
    soak_until: float | None
    last_failing: float | None
    acts: list[str]
    gates: list[GateEvidence]
    noop: str | None
    noop_failing: int = 0
    noop_samples: int = 0


@dataclass
class FaultTrail:
    """The evidence trail of one fault (module docstring). Times in seconds of run time."""

    fault: str
    title: str
    target: str
    services: list[str]
    outcome: str
    t_inject: float
    t_revert: float | None
    window_end: float
    """The end of the judging window (the revert, or where the events stop)."""
    stages: dict[str, bool]
    headline: list[str]
    """A few lines that say why the fault scored what it did."""
    alerts: list[AlertEvidence] = field(default_factory=list)
    uncounted: list[AlertEvidence] = field(default_factory=list)
    uncounted_more: int = 0
    """Related-looking alerts that did not count beyond :data:`MAX_UNCOUNTED`."""
    incidents: list[IncidentEvidence] = field(default_factory=list)
    rcas: list[RcaEvidence] = field(default_factory=list)
    rca_note: str = ""
    acts: list[ActEvidence] = field(default_factory=list)
    probe: list[ProbeRun] = field(default_factory=list)
    recoveries: list[RecoveryEvidence] = field(default_factory=list)
    repair_note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Explained:
    """A run's score and every fault's trail (``trails`` in the order of ``score.faults``)."""

    score: RunScore
    trails: dict[str, FaultTrail]

    def to_dict(self) -> dict[str, Any]:
        return {fid: t.to_dict() for fid, t in self.trails.items()}


def explain_events(events: Sequence[Event], *, app: Any = None, counterfactual: Counterfactual | None = None,
                   integrity: str = "sealed", formula: str = FORMULA_VERSION) -> Explained:
    """Score one run and explain every fault's score (module docstring).

    Args and errors as :func:`scoring.score.score_events`; ``Explained.score`` equals what it returns.
    """
    score, explain = score_and_explainer(events, app=app, counterfactual=counterfactual, integrity=integrity,
                                         formula=formula)
    return Explained(score, explain())


def score_and_explainer(events: Sequence[Event], *, app: Any = None, counterfactual: Counterfactual | None = None,
                        integrity: str = "sealed",
                        formula: str = FORMULA_VERSION) -> tuple[RunScore, Callable[[], dict[str, FaultTrail]]]:
    """The score, and a function that builds the trails from the same pass when called (the
    terminal app scores often and explains only when asked). Args as :func:`explain_events`."""
    score, judged = _score(events, _app_of(events, app, formula), counterfactual, integrity, formula)
    cache: dict[str, FaultTrail] = {}

    def explain() -> dict[str, FaultTrail]:
        if not cache:
            cache.update(trails(score, judged))
        return cache

    return score, explain


def trails(score: RunScore, judged: _Judged) -> dict[str, FaultTrail]:
    """Every fault's trail from one scoring pass, in the order of ``score.faults``."""
    ctx = _Context(judged)
    return {fs.fault: ctx.trail(fs) for fs in score.faults}


# ---------------------------------------------------------------------------------------------- building it


class _Context:
    def __init__(self, judged: _Judged) -> None:
        self.j = judged
        self.run = judged.run
        model = judged.model
        self.names = [s.name for s in model.services]
        self.edges = [(str(a), str(b)) for a, b in (tuple(e) for e in self.run.meta.get("edges", model.edges()))]
        self.route_of_handler = {(r.entry.service, r.entry.operation): r.name for r in model.routes}
        self.incidents_of: dict[str, list[str]] = {}
        for inc in self.run.incidents:
            for a in inc.alerts:
                self.incidents_of.setdefault(a, []).append(inc.incident)
        self.workloads = {aid: workload_of(a.labels, self.names) for aid, a in self.run.alerts.items()}
        self.down: dict[str, list[str]] = {}
        for a, b in self.edges:
            self.down.setdefault(a, []).append(b)
        self.paths: dict[tuple[str, str], list[str]] = {}

    # ------------------------------------------------------------------ alerts

    def _path(self, src: str, target: str) -> list[str]:
        """A shortest call path ``src -> ... -> target`` along the call graph's edges (memoised)."""
        if (src, target) not in self.paths:
            self.paths[src, target] = self._bfs(src, target)
        return self.paths[src, target]

    def _bfs(self, src: str, target: str) -> list[str]:
        down = self.down
        prev: dict[str, str] = {}
        queue = deque([src])
        seen = {src}
        while queue:
            cur = queue.popleft()
            if cur == target:
                out = [cur]
                while out[-1] != src:
                    out.append(prev[out[-1]])
                return out[::-1]
            for nxt in sorted(down.get(cur, [])):
                if nxt not in seen:
                    seen.add(nxt)
                    prev[nxt] = cur
                    queue.append(nxt)
        return [src, target]

    def _relation(self, a: _Alert, w: FaultWindow) -> tuple[str | None, str]:
        """How the alert's labels relate to the fault (as :func:`scoring.attribution.relation`), and why."""
        name = self.workloads.get(a.id)
        if name is None:
            return None, "names no service of the app"
        label = next((f"{k}={a.labels[k]}" for k in ("deployment", "statefulset", "service")
                      if a.labels.get(k) == name), None)
        named = label or f"pod {a.labels.get('pod', '?')}"
        if name == w.target:
            return "direct", (f"names the target ({label})" if label else f"{named} of the target")
        if name in w.services:
            return "direct", f"{'names' if label else 'is'} {label or named}, a service the fault acts on"
        if name not in callers_of(w.target, self.edges):
            return None, f"{name} does not call the target"
        handler = a.labels.get("handler")
        if handler and w.scope:
            route = self.route_of_handler.get((name, handler))
            if route is not None and route not in w.scope:
                return None, f"its route {route} is not in the fault's scope ({', '.join(w.scope)})"
        return "propagated", f"{name} calls the target via {' -> '.join(self._path(name, w.target))}"

    def _when(self, a: _Alert, w: FaultWindow, counted: bool) -> str:
        end = "still active" if a.ended_at is None else fmt_t(a.ended_at)
        window = f"{fmt_t(w.t_inject)}-{fmt_t(w.t_revert) if w.t_revert is not None else 'end'}"
        grace = f" (+{fmt_t(GRACE_S)} grace)" if w.t_revert is not None else ""
        if counted:
            w_end = w.t_revert + GRACE_S if w.t_revert is not None else float("inf")
            inside = a.active_at >= w.t_inject and a.ended_at is not None and a.ended_at <= w_end
            where = "inside" if inside else "overlapping"
            return f"active {fmt_t(a.active_at)}-{end}, {where} the window {window}{grace}"
        side = "before" if a.ended_at is not None and a.ended_at < w.t_inject else "after"
        return f"active {fmt_t(a.active_at)}-{end}, {side} the window {window}{grace}"

    def _alert(self, a: _Alert, w: FaultWindow, counted: bool, how: str | None, why: str) -> AlertEvidence:
        labels = {k: a.labels[k] for k in KEY_LABELS if k in a.labels}
        return AlertEvidence(a.id, a.labels.get("alertname", "?"), labels, a.active_at, a.ended_at, counted,
                             how, why, self._when(a, w, counted) if how is not None or counted else "",
                             self.incidents_of.get(a.id, []))

    def alerts(self, fid: str, f: _Fault) -> tuple[list[AlertEvidence], list[AlertEvidence], int]:
        counted: list[AlertEvidence] = []
        uncounted: list[AlertEvidence] = []
        more = 0
        w = f.window
        for a in sorted(self.run.alerts.values(), key=lambda x: (x.active_at, x.id)):
            if fid in a.support:
                how = a.support[fid]
                why = self._relation(a, w)[1]
                counted.append(self._alert(a, w, True, how, why))
                continue
            how2, why = self._relation(a, w)
            if how2 is None and not why.startswith("its route"):
                continue
            if len(uncounted) >= MAX_UNCOUNTED:
                more += 1
                continue
            if how2 is not None:
                why = f"{why}, but active outside the window"
            uncounted.append(self._alert(a, w, False, how2, why))
        return counted, uncounted, more

    # ------------------------------------------------------------------ incidents

    def _fault_label(self, fid: str) -> str:
        g = self.run.faults.get(fid)
        return f"{fid} (on {g.window.target})" if g is not None else fid

    def _counts(self, note: _Assignment) -> str:
        ranked = sorted(note.support.items(), key=lambda kv: (-kv[1], kv[0]))
        parts = [f"{n} support {fid}" for fid, n in ranked[:3]]
        if len(ranked) > 3:
            parts.append(f"{len(ranked) - 3} more faults")
        return f"{_n(note.alerts, 'alert')}: " + ", ".join(parts) if parts else \
            f"{_n(note.alerts, 'alert')}, none supporting a live fault"

    def _reason(self, inc: IncidentRecord, fid: str, f: _Fault, note: _Assignment | None) -> str:
        need = PURITY * (note.alerts if note else len(inc.alerts))
        pct = f"{PURITY:.0%}"
        if note is None or note.alerts == 0:
            return "none of its alerts were recorded by the run"
        counts = self._counts(note)
        mine = note.support.get(fid, 0)
        if not _live(f, inc.t):
            live = f"{fmt_t(f.window.t_inject)}-{fmt_t(f.window.t_revert) if f.window.t_revert is not None else 'end'}"
            return (f"reported at {fmt_t(inc.t)}, when this fault was not live ({live}): its alerts count only for "
                    f"faults live at the report; {counts}")
        if note.chosen == fid:
            if note.rca is not None:
                return (f"its RCA at {fmt_t(note.rca[0])} names {note.rca[1]}, the target, and {mine} of its "
                        f"{note.alerts} alerts support this fault (at least {pct}); {counts}")
            why = (f"no RCA naming an eligible fault's target, so its alerts decide: {counts}; this fault has the "
                   f"most alerts that began after its injection ({note.causal.get(fid, 0)})")
            return why
        other = note.chosen
        below = mine < need
        purity = (f"{mine} of {note.alerts} support this fault, below the {pct} purity (needs {need:g})" if below
                  else f"{mine} of {note.alerts} support this fault (eligible too)")
        if other is None:
            return f"judged to be about no fault: no fault has {pct} of its alerts; {purity}; {counts}"
        if note.rca is not None:
            return (f"judged to be about {self._fault_label(other)}: its RCA at {fmt_t(note.rca[0])} names "
                    f"{note.rca[1]}; {note.support.get(other, 0)} of {note.alerts} alerts support {other}; {purity}")
        rcas = [r for r in inc.rcas]
        if not below and rcas:
            last = rcas[-1]
            tail = (f"its latest RCA at {fmt_t(last[0])} names {last[1]}"
                    + (", after this fault's window" if last[1] == f.window.target and last[0] > _end(f, self.run)
                       else ", not this fault's target"))
        elif not below:
            tail = "no RCA on it names this fault's target"
        else:
            named = [r for r in inc.rcas if r[1] == f.window.target and r[0] <= _end(f, self.run)]
            tail = (f"its RCA at {fmt_t(named[-1][0])} names {f.window.target}, this fault's target, but an RCA "
                    f"decides only among faults at least {pct} of its alerts support") if named else ""
        ranking = self._ranking(note, other, fid)
        return (f"judged to be about {self._fault_label(other)} by its alerts: {purity}"
                + (f"; {tail}" if tail else "") + (f"; {ranking}" if not below else f"; {counts}"))

    def _ranking(self, note: _Assignment, other: str, fid: str) -> str:
        """Which tie-break of :func:`scoring.score.assign_incidents` put ``other`` before ``fid``."""
        g, f = self.run.faults[other].window, self.run.faults[fid].window
        keys: list[tuple[str, object, object, str, str]] = [
            (text, a, b, str(a), str(b)) for text, a, b in (
                ("more of its alerts began after its injection", note.causal.get(other, 0), note.causal.get(fid, 0)),
                ("more of its alerts support it", note.support.get(other, 0), note.support.get(fid, 0)),
                ("more of its alerts name it directly", note.direct.get(other, 0), note.direct.get(fid, 0)))]
        keys.append(("it was injected later (ties so far)", g.t_inject, f.t_inject, fmt_t(g.t_inject),
                     fmt_t(f.t_inject)))
        keys.append(("its id sorts later (ties so far)", other, fid, other, fid))
        for text, a, b, shown_a, shown_b in keys:
            if a != b:
                return f"{other} won: {text}: {shown_a} vs {shown_b}"
        return f"{other} won the tie-break"

    def incidents(self, fid: str, f: _Fault, fs: FaultScore) -> list[IncidentEvidence]:
        mine = {aid for aid, a in self.run.alerts.items() if fid in a.support}
        out: list[IncidentEvidence] = []
        for inc in self.run.incidents:
            held = [a for a in inc.alerts if a in mine]
            if inc.fault != fid and not held:
                continue
            note = self.run.assignments.get(inc.incident)
            if inc.fault == fid:
                role = "correlates" if inc.role == "credited" else "duplicate"
            else:
                role = "other fault" if inc.fault is not None else "no fault"
            reason = self._reason(inc, fid, f, note)
            if role == "duplicate" and fs.incident:
                reason = f"also about this fault, but {fs.incident} correlates it (it localizes, or came first); " \
                         + reason
            supporting = note.support.get(fid, 0) if note else 0
            out.append(IncidentEvidence(inc.incident, inc.t, role, inc.fault, len(inc.alerts), supporting,
                                        dict(note.support) if note else {}, reason))
        return out

    # ------------------------------------------------------------------ RCA

    def rcas(self, f: _Fault, fs: FaultScore) -> tuple[list[RcaEvidence], str]:
        inc = next((i for i in self.run.incidents if i.incident == fs.incident), None)
        if inc is None:
            others = [i for i in self.run.incidents for r in i.rcas if r[1] == f.window.target and i.fault != fs.fault]
            if others:
                names = ", ".join(sorted({i.incident for i in others}))
                return [], (f"no incident correlates this fault; RCAs naming {f.window.target} were filed on "
                            f"{names}, which were judged to be about other faults (see incidents)")
            return [], "no incident correlates this fault, so no RCA could localize it"
        end = _end(f, self.run)
        inside = [r for r in inc.rcas if r[0] <= end]
        counted = inside[-1] if inside else None
        refs = {str(x) for x in f.payload.get("artifact_refs", [f.payload["artifact"]["ref"]])}
        out = []
        for r in inc.rcas:
            t, service, category, artifact = r
            if r[0] > end:
                note = f"filed after the fault's window ({fmt_t(end)}): not counted"
            elif r is not counted:
                note = "replaced by a later RCA"
            else:
                parts = ["names the target" if service == f.window.target else f"names {service}, not the target "
                         f"{f.window.target}",
                         "category " + ("matches" if category == f.payload["category"] else
                                        f"does not match ({f.payload['category']})"),
                         "artifact " + ("matches" if artifact in refs else
                                        f"does not match ({', '.join(sorted(refs, key=len)[:3])})")]
                note = "counts: " + "; ".join(parts)
            out.append(RcaEvidence(inc.incident, t, service, category, artifact, r is counted, note))
        if not inc.rcas:
            summary = f"no RCA was filed on {inc.incident}"
        elif counted is None:
            summary = f"every RCA on {inc.incident} was filed after the fault's window ({fmt_t(end)})"
        elif fs.localized:
            t_loc = f.window.t_inject + (fs.localize_after or 0.0)
            summary = f"localized at {fmt_t(t_loc)} (first naming {f.window.target} in the final run of RCAs)"
        else:
            summary = f"the latest RCA inside the window names {counted[1]}, not {f.window.target}"
        return out, summary

    # ------------------------------------------------------------------ repair

    def acts(self, f: _Fault, fs: FaultScore) -> list[ActEvidence]:
        w = f.window
        end = _end(f, self.run)
        t_loc = w.t_inject + fs.localize_after if fs.localized and fs.localize_after is not None else None
        out = []
        for a in self.run.acts:
            if not (a.targets & f.services and w.t_inject <= a.t < end):
                continue
            probe = _sample_at(f.probes, a.t)
            failing = None if probe is None else not probe
            after = None if t_loc is None else a.t >= t_loc
            notes = ["probe failing" if failing else ("probe passing: not a remedy" if failing is False
                                                      else "no probe sample yet")]
            notes.append("before any localization" if after is None else
                         ("after localization" if after else f"before localization at {fmt_t(t_loc)}"))
            out.append(ActEvidence(a.t, a.tool, sorted(a.targets), failing, after, "; ".join(notes)))
        return out

    @staticmethod
    def probe_runs(samples: Sequence[tuple[float, bool]]) -> list[ProbeRun]:
        out: list[ProbeRun] = []
        for t, ok in samples:
            if out and out[-1].ok == ok:
                out[-1].end = t
                out[-1].samples += 1
            else:
                out.append(ProbeRun(ok, t, t, 1))
        return out

    def _gate_reason(self, gate: str, verdict: bool | None, f: _Fault, at: _Attempt, t_loc: float | None,
                     noop: tuple[int, int] | None) -> str:
        cf = self.j.counterfactual
        if verdict is False:
            if gate == "soak":
                return self._soak_failure(f, at)
            if gate == "restart" and not any(abs(k - at.streak_start) < 1e-6 for k in f.checks):
                return "no restart check recorded for this recovery (repair.check)"
            if gate == "restart":
                return _why(gate, at.gates, t_loc) + f" ({f.checks[at.streak_start][1]})"
            if gate == "counterfactual" and noop is not None:
                return _why(gate, at.gates, t_loc) + f" (no-op probe failing at {noop[0]} of {noop[1]} samples)"
            return _why(gate, at.gates, t_loc)
        if verdict is None:
            if at.gates.get("soak") is False:
                return "not judged: the soak did not hold"
            if cf is None and gate in ("counterfactual", "blast_radius", "data"):
                return "not judged: no counterfactual (provisional)"
            return "not judged"
        act = at.acts[-1] if at.acts else None
        route = (f.payload.get("probe") or {}).get("route")
        return {
            "ordered": (f"{act.tool} at {fmt_t(act.t)} on {', '.join(sorted(act.targets))} while the probe failed"
                        + (f", after localization at {fmt_t(t_loc)}" if t_loc is not None else "")) if act else "",
            "soak": f"the probe passed at every sample {fmt_t(at.t_pass)}-{fmt_t(at.t_credit)}",
            "slo": f"route {route}'s error share and p95 inside its SLO over the soak" if route
            else "no route probe: nothing to judge",
            "counterfactual": (f"the no-op run's probe was still failing ({noop[0]} of {noop[1]} samples)"
                               if noop else "the no-op run's probe was still failing"),
            "replicas": f"at {fmt_t(at.t_credit)} at least the pre-fault {int(f.payload.get('replicas_before', 1))} "
                        "replica(s) desired and ready",
            "blast_radius": "no risky act in the window, or no other route worse than in the no-op run",
            "data": "no store lost its data more often than in the no-op run",
            "restart": "the probe still passed after a restart of the target's pods (repair.check)",
        }[gate]

    def _soak_failure(self, f: _Fault, at: _Attempt) -> str:
        """Why a recovery's soak did not hold: the revert came too soon, the probe failed again, or
        the events stop before its end."""
        window = soak_end(at.t_pass, f.window.t_revert)
        if window is None:
            return (f"the revert at {fmt_t(f.window.t_revert)} came less than {fmt_t(MIN_SOAK_S)} after the "
                    "recovery: no soak possible")
        end = window[0]
        again = next((t for t, ok in f.probes if at.t_pass <= t <= end + 1e-9 and not ok), None)
        if again is not None:
            return f"the probe failed again at {fmt_t(again)}, before the soak's end at {fmt_t(end)}"
        return f"the soak to {fmt_t(end)} was not observed to its end (the events stop at {fmt_t(self.run.end_t)})"

    def recoveries(self, fid: str, f: _Fault, fs: FaultScore) -> list[RecoveryEvidence]:
        t_loc = f.window.t_inject + fs.localize_after if fs.localized and fs.localize_after is not None else None
        cf = self.j.counterfactual
        out = []
        for at in self.run.attempts.get(fid, []):
            hi = at.t_credit if at.t_credit is not None else at.t_pass + SOAK_S
            noop_text = None
            noop: tuple[int, int] | None = None
            if cf is not None:
                samples = [(t, ok) for t, ok in cf.probes.get(fid, []) if at.t_pass - 1e-9 <= t <= hi + 1e-9]
                failing = sum(1 for _, ok in samples if not ok)
                noop = (failing, len(samples))
                noop_text = (f"no-op run: probe failing at {failing} of {len(samples)} samples "
                             f"{fmt_t(at.t_pass)}-{fmt_t(hi)}" if samples else
                             f"no-op run: no probe sample {fmt_t(at.t_pass)}-{fmt_t(hi)}")
            last_failing = max((t for t, ok in f.probes if not ok and t < at.streak_start), default=None)
            gates = [GateEvidence(g, at.gates.get(g), self._gate_reason(g, at.gates.get(g), f, at, t_loc, noop))
                     for g in GATES]
            out.append(RecoveryEvidence(at.streak_start, at.t_pass, at.credited, at.t_credit, last_failing,
                                        [f"{a.tool}@{fmt_t(a.t)}" for a in at.acts], gates, noop_text,
                                        noop[0] if noop else 0, noop[1] if noop else 0))
        return out

    def masking(self, f: _Fault, fs: FaultScore, acts: Sequence[ActEvidence]) -> str:
        """Why the probe may not have recovered though the act was right: other faults live after the
        first act whose scope holds the probe's route or whose target the route reaches (the probe
        fails while any of them is live), as ``; meanwhile ...`` or ""."""
        route = (f.payload.get("probe") or {}).get("route")
        if not route:
            return ""
        on_route = _route_services(self.j.model, str(route))
        first = min(a.t for a in acts)
        end = _end(f, self.run)
        others = [g for gid, g in self.run.faults.items() if gid != fs.fault
                  and (route in g.window.scope or g.window.target in on_route)
                  and g.window.t_inject <= end
                  and (g.window.t_revert is None or g.window.t_revert > first)]
        if not others:
            return ""
        named = ", ".join(f"{g.window.key} (on {g.window.target}, live {fmt_t(g.window.t_inject)}-"
                          f"{fmt_t(g.window.t_revert) if g.window.t_revert is not None else 'end'})" for g in others)
        return f"; meanwhile other faults on its probe's route {route} were live: {named}"

    # ------------------------------------------------------------------ the whole trail

    def trail(self, fs: FaultScore) -> FaultTrail:
        f = self.run.faults[fs.fault]
        alerts, uncounted, more = self.alerts(fs.fault, f)
        incidents = self.incidents(fs.fault, f, fs)
        rcas, rca_note = self.rcas(f, fs)
        acts = self.acts(f, fs)
        recoveries = self.recoveries(fs.fault, f, fs)
        t = FaultTrail(fs.fault, fs.title, fs.target, fs.services, fs.outcome, fs.t_inject, fs.t_revert,
                       _end(f, self.run), {"corr": fs.correlated, "loc": fs.localized, "rep": fs.repaired}, [],
                       alerts, uncounted, more, incidents, rcas, rca_note, acts, self.probe_runs(f.probes),
                       recoveries)
        t.repair_note = _repair_note(fs, acts, recoveries)
        if acts and not recoveries and not fs.repaired:
            t.repair_note += self.masking(f, fs, acts)
        t.headline = _headline(fs, t)
        return t


def _n(k: int, word: str) -> str:
    return f"{k} {word}{'' if k == 1 else 's'}"


def _repair_note(fs: FaultScore, acts: Sequence[ActEvidence], recoveries: Sequence[RecoveryEvidence]) -> str:
    if fs.repaired:
        return (f"credited: recovery at {fmt_t(fs.t_inject + (fs.repair_after or 0.0))}, soak held to "
                f"{fmt_t(fs.credit_t)}, every gate passed")
    if not acts:
        return "no act on the fault's services while it was live"
    if not recoveries:
        return "the probe did not recover after an act on the fault"
    denied = []
    for rec in recoveries:
        failed = [f"{g.gate} ({g.reason})" for g in rec.gates if g.verdict is False]
        denied.append(f"recovery at {fmt_t(rec.t_pass)}: " + ("; ".join(failed) or "not credited"))
    return "denied: " + " | ".join(denied)


def _headline(fs: FaultScore, t: FaultTrail) -> list[str]:
    out = []
    if fs.correlated:
        inc = next((i for i in t.incidents if i.role == "correlates"), None)
        out.append(f"correlated by {fs.incident}" + (f": {inc.reason}" if inc else ""))
    else:
        elsewhere = [i for i in t.incidents if i.role in ("other fault", "no fault")]
        if elsewhere:
            out.append(f"not correlated: {len(t.alerts)} alerts support it, but every incident holding them was "
                       "judged to be about another fault or none:")
            out += [f"  {i.incident}: {i.reason}" for i in elsewhere[:3]]
        elif t.alerts:
            out.append(f"not correlated: {len(t.alerts)} alerts support it, but no incident holds any of them")
        else:
            out.append("not correlated: no alert supports it")
    if fs.correlated:
        out.append(("localized: " if fs.localized else "not localized: ") + t.rca_note)
    out.append(("repaired: " if fs.repaired else "not repaired: ") + t.repair_note)
    return out


# ---------------------------------------------------------------------------------------------- rendering


def _labels(labels: Mapping[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in labels.items())


def trail_lines(t: FaultTrail, *, indent: str = "  ") -> list[str]:
    """The trail as indented readable lines (``marathon score --faults``, the scorecard)."""
    i1, i2 = indent, indent * 2
    stages = " ".join(f"{k}{'+' if v else '-'}" for k, v in t.stages.items())
    window = f"{fmt_t(t.t_inject)}-{fmt_t(t.t_revert) if t.t_revert is not None else 'end'}"
    lines = [f"{t.fault} on {t.target}: {t.outcome} ({stages}); live {window}"
             + (f"; services {', '.join(t.services)}" if t.services != [t.target] else "")]
    lines += [f"{i1}{h}" for h in t.headline]
    lines.append(f"{i1}alerts supporting it: {len(t.alerts)}")
    for a in t.alerts:
        lines.append(f"{i2}{a.id} {a.rule} {_labels(a.labels)} -- {a.how}: {a.why}; {a.when}"
                     + (f"; in {', '.join(a.incidents)}" if a.incidents else "; in no incident"))
    if t.uncounted:
        lines.append(f"{i1}related-looking alerts that did not count: {len(t.uncounted) + t.uncounted_more}")
        for a in t.uncounted:
            lines.append(f"{i2}{a.id} {a.rule} {_labels(a.labels)} -- {a.why}" + (f"; {a.when}" if a.when else ""))
        if t.uncounted_more:
            lines.append(f"{i2}... and {t.uncounted_more} more")
    lines.append(f"{i1}incidents: {len(t.incidents) or 'none held its alerts'}")
    for inc in t.incidents:
        about = f" -> {inc.about}" if inc.about and inc.role == "other fault" else ""
        lines.append(f"{i2}{inc.incident} at {fmt_t(inc.t)} [{inc.role}{about}]: {inc.reason}")
    lines.append(f"{i1}RCA: {t.rca_note}")
    for r in t.rcas:
        lines.append(f"{i2}{r.incident} at {fmt_t(r.t)}: {r.service} / {r.category} / {r.artifact} -- {r.note}")
    lines.append(f"{i1}repair: {t.repair_note}")
    for act in t.acts:
        lines.append(f"{i2}act {act.tool} at {fmt_t(act.t)} on {', '.join(act.targets)} -- {act.note}")
    if t.probe:
        runs = ", ".join(f"{'passing' if p.ok else 'failing'} {fmt_t(p.start)}-{fmt_t(p.end)} ({p.samples})"
                         for p in t.probe)
        lines.append(f"{i2}probe: {runs}")
    for rec in t.recoveries:
        head = (f"recovery at {fmt_t(rec.t_pass)}" + (f" (streak from {fmt_t(rec.streak_start)})"
                                                      if rec.t_pass != rec.streak_start else "")
                + f": last failing {fmt_t(rec.last_failing)}, soak "
                + (f"held to {fmt_t(rec.soak_until)}" if rec.soak_until is not None else "did not hold")
                + f" -- {'credited' if rec.credited else 'denied'}")
        lines.append(f"{i2}{head}")
        for g in rec.gates:
            mark = {True: "pass", False: "FAIL", None: "n/a "}[g.verdict]
            lines.append(f"{i2}{indent}{mark} {g.gate}: {g.reason}")
        if rec.noop:
            lines.append(f"{i2}{indent}{rec.noop}")
    return lines
