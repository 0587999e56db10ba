"""Proof by re-execution: ``marathon verify --replay BUNDLE``.

A sealed bundle proves only that nobody changed it after the seal; a forger who recomputes
the hash chain and reseals gets a bundle :func:`engine.bundle.format.verify` calls intact. Replay
closes that: the embedded simulator is deterministic, so the recorded schedule, seed and
rule pack, re-run with the recorded operator tool calls (arguments, and the run times and
stream positions they were made at; model transcripts are not needed), must reproduce
every recorded event exactly and so the same chain head. An edited probe result, alert or
action -- however carefully re-chained and resealed -- is reported as the first event that
differs, with both versions.

What is re-executed and what is taken from the record:

* every event the engine emits (faults, changes, alerts, probes, health, restart checks,
  reports and actions produced by tool calls) is recomputed;
* a built-in scripted operator (:data:`engine.operate.operators.SCRIPTED_OPERATORS`: noop, runbook, oracle, the
  adversaries) is re-executed itself, so its calls are recomputed too and an oracle run
  relabelled ``runbook`` does not replay;
* any other operator's ``tool.call`` (an LLM agent, an external agent, a player) is
  re-issued through the same :class:`engine.operate.tools.ToolBox` and policy (``call(tool, args,
  tokens=tokens, request=request)``; ``request`` is the raw Kubernetes API request of a call that
  came in through ``--kube-api``), at the same point of the stream: inside the invocation it was made in,
  or -- for a player's calls from the terminal -- at the same stream position between
  steps. Replay then proves that the events follow from those calls, not who made them:
  that rests on the seal's signature (:mod:`engine.bundle.keys`);
* ``llm.call`` and ``agent.end`` are re-emitted from the record: they describe the model and
  the operator's own bookkeeping, which replay cannot recompute (a forged token count
  changes only the cost columns);
* the inputs the score reads are re-derived and compared: ``counterfactual.json`` (the
  no-op run, re-simulated without the cache), ``catalog.yaml``, and for a shipped app
  ``app.yaml`` and the rule pack against this installation.

Not replayable: runs whose alerts came from an external Prometheus (``prometheus=URL``), and
runs on another substrate than the embedded simulator. A bundle sealed by another engine
version replays with the installed one (``run.start``'s ``engine`` is taken from the record)
and the report says so; a difference then may be the engine's, not a forgery.

Each result is remembered per bundle head (:mod:`engine.bundle.replaystatus`), so the
scorer's :func:`engine.bundle.replaystatus.replay_status` can mark leaderboard rows
``verified`` or ``diverged`` without importing the run side.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from engine.bundle import replaystatus
from engine.bundle.events import Event
from engine.bundle.format import BundleError, open_bundle, verify
from engine.bundle.layout import APP_FILE, CATALOG_FILE, COUNTERFACTUAL_FILE, RULES_DIR, schedule_digest
from engine.inputs.safeyaml import parse_yaml

OPERATOR_EMITTED = frozenset({"llm.call", "agent.end"})
"""Kinds an operator emits itself (re-emitted from the record)."""
_PLAYER_OPERATORS = ("human", "human-practice")


class _Diverged(BaseException):
    """Raised inside the replayed run at the first difference (a BaseException, so no
    catch-all in a tool handler can swallow it)."""


class _Done(BaseException):
    """Raised once every recorded event is reproduced (an incomplete run stops there)."""


@dataclass
class ReplayReport:
    """What :func:`replay` found.

    Attributes:
        path: the bundle replayed.
        ok: every recorded event reproduced, the chain head identical, the inputs match.
        events: events compared (the seal event excluded).
        reproduced: events reproduced before the first difference.
        first_difference: the first differing event, in words (None when none differs).
        problems: every other problem (inputs that differ, not replayable, ...).
        notes: facts that are not problems (another engine version, ...).
        head_recorded: the bundle's head (the seal event's hash).
        head_replayed: the head the replay reproduces (the seal event rechained on the
            replayed stream).
        wall_s: wall seconds the replay took.
    """

    path: Path
    ok: bool = False
    events: int = 0
    reproduced: int = 0
    first_difference: str | None = None
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    head_recorded: str = ""
    head_replayed: str = ""
    wall_s: float = 0.0

    def format(self) -> str:
        lines = [f"{self.path}: {'REPLAYS CLEAN' if self.ok else 'DOES NOT REPLAY'}",
                 f"  events     {self.reproduced} of {self.events} reproduced",
                 f"  head       {self.head_recorded or '-'} (recorded)",
                 f"             {self.head_replayed or '-'} (replayed)",
                 f"  wall       {self.wall_s:.1f} s"]
        lines += [f"  note       {n}" for n in self.notes]
        if self.first_difference:
            lines.append(f"  FIRST DIFFERENCE: {self.first_difference}")
        lines += [f"  PROBLEM: {p}" for p in self.problems]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "ok": self.ok, "events": self.events, "reproduced": self.reproduced,
                "first_difference": self.first_difference, "problems": list(self.problems),
                "notes": list(self.notes), "head_recorded": self.head_recorded, "head_replayed": self.head_replayed,
                "wall_s": round(self.wall_s, 3)}


@dataclass
class _Item:
    """One thing the operator did: a tool call to re-issue, or an event to re-emit."""

    start: int
    """Stream position (seq) of the first event it produced."""
    event: Event
    in_invocation: bool


def _items(events: list[Event]) -> list[_Item]:
    player = str(events[0].payload.get("operator")) in _PLAYER_OPERATORS
    out: list[_Item] = []
    for i, ev in enumerate(events):
        if ev.kind == "tool.call":
            start = i - 1 if i > 0 and events[i - 1].kind.startswith("report.") else i
            inside = ev.payload.get("in_invocation")
            out.append(_Item(start, ev, bool(inside) if isinstance(inside, bool) else not player))
        elif ev.kind in OPERATOR_EMITTED:
            out.append(_Item(i, ev, True))
    return out


def _describe(seq: int, want: Event | None, got: Event | None) -> str:
    def short(ev: Event | None) -> str:
        if ev is None:
            return "nothing"
        text = json.dumps(ev.payload, sort_keys=True, ensure_ascii=False)
        return f"{ev.kind} at t={ev.t:g}: {text[:300]}{'...' if len(text) > 300 else ''}"

    if want is not None and got is not None and want.kind == got.kind and want.t == got.t:
        keys = sorted(k for k in set(want.payload) | set(got.payload) if want.payload.get(k) != got.payload.get(k))
        diff = "; ".join(f"{k}: recorded {json.dumps(want.payload.get(k), ensure_ascii=False)[:120]}, replayed "
                         f"{json.dumps(got.payload.get(k), ensure_ascii=False)[:120]}" for k in keys[:4])
        return f"events.jsonl line {seq + 1} (seq {seq}), {want.kind} at t={want.t:g}: {diff}"
    return f"events.jsonl line {seq + 1} (seq {seq}): recorded {short(want)}; replayed {short(got)}"


class _Driver:
    """Feeds the recorded operator items into a replayed run and compares every event."""

    def __init__(self, recorded: list[Event], run: Any, replay_calls: bool = True) -> None:
        self.recorded = recorded
        self.run = run
        self.items = _items(recorded) if replay_calls else []
        self.next = 0
        self.busy = False
        self.matched = 0
        self.difference: str | None = None

    # -- comparison

    def compare(self, ev: Event) -> None:
        seq = ev.seq
        want = self.recorded[seq] if seq < len(self.recorded) else None
        if want is None or (want.t, want.kind, want.payload) != (ev.t, ev.kind, ev.payload):
            self.difference = _describe(seq, want, ev)
            raise _Diverged()
        self.matched = seq + 1
        if self.matched == len(self.recorded):
            raise _Done()

    # -- the operator's items

    def _due(self, inside: bool) -> _Item | None:
        if self.next >= len(self.items):
            return None
        item = self.items[self.next]
        if item.in_invocation != inside or item.start != len(self.run.stream.events) \
                or abs(item.event.t - self.run.now) > 1e-6:
            return None
        return item

    def _issue(self, item: _Item) -> None:
        self.next += 1
        p = item.event.payload
        if item.event.kind == "tool.call":
            tokens = p.get("tokens", 0)
            self.run.tools.call(str(p.get("tool")), p.get("args"), tokens=tokens if isinstance(tokens, int) else 0,
                                request=p.get("request"))
        else:
            self.run.emit(item.event.kind, p)

    def hook(self) -> None:
        """A point where a player's call could have come in (the orchestrator calls it)."""
        if self.busy:
            return
        while (item := self._due(False)) is not None:
            self.busy = True
            try:
                self._issue(item)
            finally:
                self.busy = False

    def stop(self) -> float | None:
        """Run time of the next player call (the loop stops there)."""
        for item in self.items[self.next:]:
            if not item.in_invocation:
                return item.event.t
        return None

    def invoke(self, inv: Any) -> None:
        """The replayed operator's invocation: re-issue the items recorded inside it."""
        while (item := self._due(True)) is not None:
            self._issue(item)


@dataclass
class _ReplayOperator:
    name: str
    invoke_fn: Callable[[Any], None]

    def invoke(self, inv: Any) -> None:
        self.invoke_fn(inv)


def _schedule(bundle: Any, start: dict[str, Any], report: ReplayReport) -> Any:
    from faults.schedule import parse_schedule

    text = bundle.schedule_text
    if schedule_digest(text) != start.get("schedule_sha256"):
        report.problems.append("schedule.yaml does not match run.start's schedule_sha256")
    return parse_schedule(parse_yaml(text), f"{report.path}:schedule.yaml")


def _check_inputs(bundle: Any, start: dict[str, Any], report: ReplayReport) -> str:
    """Compare the carried inputs with this installation; returns the rules to replay with."""
    from alerts.rules import PACKS, pack_identity
    from engine.apps.model import builtin_app_path

    names = set(bundle.names())
    app = str(start.get("app"))
    if APP_FILE in names:
        try:
            shipped = builtin_app_path(app).read_text(encoding="utf-8")
        except KeyError:
            report.notes.append(f"{app} is not a shipped app: its app model is taken as recorded")
        else:
            if shipped != bundle.read_text(APP_FILE):
                report.problems.append(f"{APP_FILE} differs from the shipped {app} model this engine simulates")
    pack = start.get("rule_pack")
    rules = "paper"
    if isinstance(pack, dict):
        carried = {n[len(RULES_DIR) + 1:]: hashlib.sha256(bundle.read_bytes(n)).hexdigest()
                   for n in names if n.startswith(f"{RULES_DIR}/")}
        if carried and carried != pack.get("files"):
            report.problems.append(f"the rule files in {RULES_DIR}/ differ from the digests run.start records")
        name = str(pack.get("pack"))
        if name in PACKS:
            rules = name
            if pack_identity(name) != {k: pack.get(k) for k in ("pack", "id", "files")}:
                report.problems.append(f"run.start's rule pack {pack.get('id')} differs from this installation's "
                                       f"{name} pack")
        else:
            report.problems.append("replaying a run with a user's rule file is not supported yet")
    return rules


def _check_derived(bundle: Any, start: dict[str, Any], report: ReplayReport) -> None:
    from engine.run.counterfactual import noop_counterfactual
    from engine.run.sealinputs import catalog_entries

    names = set(bundle.names())
    app, text = str(start.get("app")), bundle.schedule_text
    if CATALOG_FILE in names:
        try:
            if parse_yaml(bundle.read_text(CATALOG_FILE)) != catalog_entries(app, text):
                report.problems.append(f"{CATALOG_FILE} differs from this engine's catalog entries for the schedule")
        except (KeyError, ValueError, yaml.YAMLError) as exc:
            report.problems.append(f"{CATALOG_FILE}: cannot be compared: {exc}")
    if COUNTERFACTUAL_FILE in names:
        try:
            carried = bundle.read_json(COUNTERFACTUAL_FILE)
            carried.pop("engine", None)
            carried.pop("reference", None)  # names the no-op run's head, which covers the engine's identity
            fresh = noop_counterfactual(app, int(start["seed"]), text, use_cache=False).to_dict()
            fresh.pop("reference", None)
            if json.loads(json.dumps(fresh)) != carried:
                keys = sorted(k for k in fresh if json.loads(json.dumps(fresh.get(k))) != carried.get(k))
                report.problems.append(f"{COUNTERFACTUAL_FILE} differs from the re-simulated no-op run "
                                       f"({', '.join(keys) or 'extra keys'})")
        except (KeyError, TypeError, ValueError, BundleError) as exc:
            report.problems.append(f"{COUNTERFACTUAL_FILE}: cannot be compared: {exc}")


def replay(path: str | Path, *, remember: bool = True) -> ReplayReport:
    """Re-execute a bundle and compare (module docstring).

    Args:
        path: a sealed bundle or sealed run directory.
        remember: record the result for :func:`engine.bundle.replaystatus.replay_status`.

    Raises:
        engine.bundle.format.NotARunError, engine.bundle.format.BundleError: not a readable bundle.
    """
    from engine.run.sealinputs import carried_inputs

    t0 = time.monotonic()
    report = ReplayReport(Path(path))
    check = verify(path)
    if not check.ok or not check.sealed:
        report.problems.append("the bundle does not verify: " + (str(check.problems[0]) if check.problems
                                                                  else "not sealed"))
        report.wall_s = time.monotonic() - t0
        return report
    bundle = open_bundle(path)
    events = bundle.events
    seal_ev = events[-1]
    recorded = events[:-1]
    report.events = len(recorded)
    report.head_recorded = seal_ev.hash
    start = recorded[0].payload
    if start.get("substrate", "sim") != "sim":
        report.problems.append(f"recorded on substrate {start.get('substrate')!r}: only embedded-simulator runs "
                               "replay")
    if isinstance(start.get("rule_pack"), dict) is False and start.get("rule_pack") is not None:
        report.problems.append("run.start's rule_pack is malformed")
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(carried_inputs(bundle, str(start.get("app")), str(path)))
        except (ValueError, yaml.YAMLError) as exc:  # AppModelError, CatalogError: a carried input is broken
            report.problems.append(f"the inputs the bundle carries do not load: {exc}")
            report.wall_s = time.monotonic() - t0
            return report
        return _replay_run(bundle, recorded, seal_ev, start, report, t0, remember)


def _replay_run(bundle: Any, recorded: list[Event], seal_ev: Event, start: dict[str, Any], report: ReplayReport,
                t0: float, remember: bool) -> ReplayReport:
    """The re-execution of :func:`replay`, with the bundle's inputs in place."""
    from engine.run.identity import engine_identity
    from engine.run.orchestrator import Orchestrator

    engine = start.get("engine")
    mine = engine_identity()
    if engine != mine:
        report.notes.append(f"sealed by engine {_label(engine)}, replayed on {_label(mine)}: a difference may be "
                            "the engine's")
    try:
        schedule = _schedule(bundle, start, report)
    except (ValueError, yaml.YAMLError) as exc:
        report.problems.append(f"the schedule does not load: {exc}")
        report.wall_s = time.monotonic() - t0
        return report
    rules = _check_inputs(bundle, start, report)
    alert_source = "embedded" if start.get("rule_pack") is not None else None
    if report.problems and any("not supported" in p or "substrate" in p for p in report.problems):
        report.wall_s = time.monotonic() - t0
        return report
    operator_name = str(start.get("operator", "replay"))
    holder: dict[str, _Driver] = {}
    operator: Any = _ReplayOperator(operator_name, lambda inv: holder["d"].invoke(inv))
    from engine.operate.operators import SCRIPTED_OPERATORS

    scripted = operator_name in SCRIPTED_OPERATORS
    if scripted:  # deterministic code: run the operator itself, so a relabelled run cannot pass
        from engine.operate.operators import make_operator

        operator = make_operator(operator_name)
        report.notes.append(f"{operator_name} is a built-in scripted operator: re-executed itself, not its recorded "
                            "calls")
    run = Orchestrator(schedule, seed=int(start["seed"]), operator=operator,
                       clock=str(start.get("clock", "virtual")), speed=float(start.get("speed", 1.0)),
                       alert_source=alert_source, cadence_s=float(start.get("cadence_s", 60.0)), rules=rules)
    run.engine_info = engine if isinstance(engine, dict) else run.engine_info
    driver = _Driver(recorded, run, replay_calls=not scripted)
    holder["d"] = driver
    run.replay_hook = driver.hook
    run.replay_stop = driver.stop
    run.stream.subscribe(driver.compare)
    try:
        run.start()
        while not run.finished:
            run.advance_to(min(run.now + 15.0, run.end_t))
        if driver.matched < len(recorded):
            driver.difference = _describe(driver.matched, recorded[driver.matched], None)
    except _Done:
        pass
    except _Diverged:
        pass
    report.reproduced = driver.matched
    report.first_difference = driver.difference
    if driver.difference is None and driver.matched == len(recorded):
        last = run.stream.events[len(recorded) - 1]
        report.head_replayed = Event.digest(last.hash, seal_ev.seq, seal_ev.t, "seal", seal_ev.payload)
        if report.head_replayed != seal_ev.hash:
            report.problems.append("the replayed chain does not end in the recorded head")
    _check_derived(bundle, start, report)
    report.ok = report.first_difference is None and not report.problems and report.head_replayed == seal_ev.hash
    report.wall_s = time.monotonic() - t0
    if remember:
        replaystatus.remember(seal_ev.hash, ok=report.ok, first_difference=report.first_difference,
                              problems=report.problems)
    return report


def _label(engine: Any) -> str:
    if not isinstance(engine, dict):
        return "(unrecorded)"
    return f"{engine.get('version', '?')}+{str(engine.get('code_sha256', ''))[:8]}"

