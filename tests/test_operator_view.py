"""Operators see only an operator view: nothing reachable from an Invocation leads to ground truth.

The walk follows every attribute (``__dict__`` and slots), container item, bound method
(``__self__``) and closure cell reachable from the invocation an operator is handed, and fails
on any fault spec, schedule, fault record or instance, orchestrator, tool box, recorder, event
stream, substrate, or a ground-truth event. Module globals and classes are not followed (code,
not run state). The oracle's ``truth`` handle is the one visible exception.
"""

from __future__ import annotations

import contextlib
import types
from collections import deque
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pytest

from engine.bundle.events import Event, EventStream
from engine.operate.invocation import Invocation
from engine.operate.operators import GROUND_TRUTH_OPERATORS, make_operator
from engine.operate.tools import ToolBox
from engine.run.orchestrator import FaultRecord, GroundTruthHandle, Orchestrator
from engine.run.recorder import HiddenRecorder, RunRecorder
from engine.substrate import Substrate
from faults.generator import generate
from faults.schedule import BenignChange, Schedule, ScheduledFault
from faults.spec import FaultSpec

GROUND_TRUTH_KINDS = {"fault.inject", "fault.revert", "probe.result", "repair.check", "run.end"}
FORBIDDEN: tuple[type, ...] = (FaultSpec, Schedule, ScheduledFault, BenignChange, FaultRecord, Orchestrator,
                               GroundTruthHandle, ToolBox, HiddenRecorder, RunRecorder, EventStream, Substrate)


def forbidden(obj: Any) -> str | None:
    if isinstance(obj, FORBIDDEN):
        return type(obj).__name__
    if type(obj).__name__ == "FaultInstance":
        return "FaultInstance"
    if isinstance(obj, Event) and obj.kind in GROUND_TRUTH_KINDS:
        return f"a {obj.kind} event"
    return None


def children(obj: Any) -> list[tuple[str, Any]]:
    """(step, child) for everything one step from ``obj``."""
    if isinstance(obj, (str, bytes, int, float, bool, complex, type(None), type, types.ModuleType,
                        types.FunctionType, types.BuiltinFunctionType, types.CodeType)):
        out: list[tuple[str, Any]] = []
        if isinstance(obj, types.FunctionType):
            for name, cell in zip(obj.__code__.co_freevars, obj.__closure__ or (), strict=True):
                with contextlib.suppress(ValueError):  # an empty cell
                    out.append((f"<closure {name}>", cell.cell_contents))
            out.extend((f"<default {i}>", d) for i, d in enumerate(obj.__defaults__ or ()))
        return out
    if isinstance(obj, types.MethodType):
        return [(".__self__", obj.__self__), (".__func__", obj.__func__)]
    if isinstance(obj, dict):
        return [(f"[{k!r}]", v) for k, v in obj.items()] + [(f"<key {k!r}>", k) for k in obj]
    if isinstance(obj, (list, tuple, set, frozenset, deque)):
        return [(f"[{i}]", v) for i, v in enumerate(obj)]
    out = []
    attrs = getattr(obj, "__dict__", None)
    if isinstance(attrs, dict):
        out.extend((f".{k}", v) for k, v in attrs.items())
    for cls in type(obj).__mro__:
        for slot in getattr(cls, "__slots__", ()):
            if isinstance(slot, str) and hasattr(obj, slot):
                out.append((f".{slot}", getattr(obj, slot)))
    return out


def leaks(root: Any, *, skip: frozenset[str] = frozenset(), min_visited: int = 50) -> list[str]:
    """Paths from ``root`` to forbidden objects (breadth first, each object once); the walk
    must see at least ``min_visited`` objects (or the walker is broken)."""
    seen: set[int] = set()
    queue: deque[tuple[str, Any]] = deque([("inv", root)])
    found: list[str] = []
    visited = 0
    while queue:
        path, obj = queue.popleft()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        visited += 1
        why = forbidden(obj)
        if why is not None:
            found.append(f"{path}: {why}")
            continue
        for step, child in children(obj):
            if path == "inv" and step.lstrip(".") in skip:
                continue
            queue.append((path + step, child))
    assert visited >= min_visited, f"the walk saw only {visited} objects: the walker is broken"
    return found


@dataclass
class Capture:
    """Delegates to a registered operator and keeps the invocations it was handed, once faults are live."""

    inner: Any
    name: str = ""
    captured: list[Invocation] = field(default_factory=list)
    ground_truth: ClassVar[bool] = False

    def __post_init__(self) -> None:
        self.name = self.inner.name

    def invoke(self, inv: Invocation) -> None:
        self.inner.invoke(inv)
        if len(self.captured) < 3 and inv.number in (8, 14, 20):
            self.captured.append(inv)


@dataclass
class CaptureTruth(Capture):
    ground_truth: ClassVar[bool] = True


@pytest.fixture(scope="module")
def schedule() -> Schedule:
    return generate("online-boutique", 1, "short-5")


@pytest.mark.parametrize("name", ["noop", "runbook", "alert-spam", "random-act"])
def test_nothing_reachable_from_an_invocation_is_ground_truth(schedule: Schedule, name: str) -> None:
    op = Capture(make_operator(name))
    run = Orchestrator(schedule, operator=op)
    run.run()
    assert any(r.instance is not None for r in run.faults.values())
    assert len(op.captured) == 3
    for inv in op.captured:
        assert inv.truth is None
        assert inv.alerts, "the walk must cover a real alert history"
        assert leaks(inv) == []


@pytest.mark.parametrize("name", GROUND_TRUTH_OPERATORS)
def test_ground_truth_only_through_the_explicit_handle(schedule: Schedule, name: str) -> None:
    op = CaptureTruth(make_operator(name))
    run = Orchestrator(schedule, operator=op)
    run.run()
    inv = op.captured[-1]
    assert isinstance(inv.truth, GroundTruthHandle)
    assert leaks(inv, skip=frozenset({"truth"})) == []
    assert any(p.startswith("inv.truth") for p in leaks(inv)), "the handle does lead to ground truth"


def test_the_walker_finds_the_old_path_through_the_tool_box(schedule: Schedule) -> None:
    """What the view replaced: an invocation holding the tool box reaches the orchestrator."""
    run = Orchestrator(schedule)
    run.start()
    assert leaks({"tools": run.tools}, min_visited=1) == ["inv['tools']: ToolBox"]
    assert "inv['tools']['run']: Orchestrator" in leaks({"tools": vars(run.tools)}, min_visited=1)


def test_an_operator_records_only_its_own_event_kinds(schedule: Schedule) -> None:
    errors: list[str] = []

    @dataclass
    class Forger:
        name: str = "forger"

        def invoke(self, inv: Invocation) -> None:
            for kind in ("fault.inject", "repair.check", "action.executed", "alert.firing"):
                try:
                    inv.record(kind, {"fault": "x"})
                except ValueError as exc:
                    errors.append(str(exc))
            inv.record("agent.end", {"invocation": inv.number, "operator": self.name, "reason": "done"})

    run = Orchestrator(schedule, operator=Forger())
    run.advance_to(200.0)
    assert len(errors) == 4 * 3 and all("may record only" in e for e in errors)
    kinds = [e.kind for e in run.stream.events]
    assert kinds.count("agent.end") == 3 and "action.executed" not in kinds
    assert not [e for e in run.stream.events if e.kind == "fault.inject" and e.payload.get("fault") == "x"]


def test_an_operator_error_ends_its_invocation_not_the_run(schedule: Schedule) -> None:
    @dataclass
    class Broken:
        name: str = "broken"

        def invoke(self, inv: Invocation) -> None:
            inv.call("get_time")
            raise RuntimeError("the operator's own defect")

    run = Orchestrator(schedule, operator=Broken())
    run.advance_to(200.0)
    ends = [e.payload for e in run.stream.events if e.kind == "agent.end"]
    assert len(ends) == 3 and all("RuntimeError: the operator's own defect" in e["reason"] for e in ends)
    assert run.now == pytest.approx(200.0)

    @dataclass
    class Quits:
        name: str = "quits"

        def invoke(self, inv: Invocation) -> None:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        Orchestrator(schedule, operator=Quits()).advance_to(120.0)


def test_ground_truth_is_decided_once_for_the_label_and_the_handle(schedule: Schedule) -> None:
    """An operator that turns its flag on after run.start gets no truth (and so no unlabelled oracle run)."""

    class Sneaky:
        name = "totally-honest-agent"

        def __init__(self) -> None:
            self.ground_truth = False
            self.saw: list[object] = []

        def invoke(self, inv: Invocation) -> None:
            self.ground_truth = True
            self.saw.append(inv.truth)

    op = Sneaky()
    run = Orchestrator(schedule, operator=op)
    run.advance_to(300.0)
    assert run.stream.events[0].payload["oracle"] is False
    assert op.saw and all(t is None for t in op.saw)


@pytest.mark.parametrize(("kind", "payload", "why"), [
    ("llm.call", {"tokens": -10**9}, "tokens must be a number from 0"),
    ("llm.call", {"cost_usd": -1000.0}, "cost_usd must be a number from 0"),
    ("llm.call", {"cost_usd": float("nan")}, "finite numbers"),
    ("llm.call", {"tokens": "lots"}, "payload.tokens"),
    ("llm.call", {"model": "x" * 100_000}, "at most 65,536"),
    ("llm.call", {"operator": "oracle"}, "operator must be"),
    ("agent.end", {"invocation": 99}, "invocation must be"),
])
def test_recorded_events_are_checked_like_reported_usage(schedule: Schedule, kind: str, payload: dict[str, Any],
                                                         why: str) -> None:
    errors: list[str] = []
    base = {"llm.call": {"model": "m", "prompt_tokens": 1, "completion_tokens": 1, "tokens": 2, "latency_s": 0.5,
                         "cost_usd": 0.01, "operator": "forger", "invocation": 1},
            "agent.end": {"invocation": 1, "operator": "forger", "reason": "done"}}[kind]

    @dataclass
    class Forger:
        name: str = "forger"

        def invoke(self, inv: Invocation) -> None:
            if inv.number != 1:
                return
            inv.record(kind, dict(base))  # the well-formed one is accepted
            try:
                inv.record(kind, {**base, **payload})
            except ValueError as exc:
                errors.append(str(exc))

    run = Orchestrator(schedule, operator=Forger())
    run.advance_to(70.0)
    assert len(errors) == 1 and why in errors[0], errors
    assert len([e for e in run.stream.events if e.kind == kind]) == 1


def test_a_kept_invocation_is_closed(schedule: Schedule) -> None:
    kept: list[Invocation] = []
    refused: list[str] = []

    @dataclass
    class Keeper:
        name: str = "keeper"

        def invoke(self, inv: Invocation) -> None:
            if kept:
                try:
                    kept[0].call("get_time")
                except RuntimeError as exc:
                    refused.append(str(exc))
            else:
                kept.append(inv)

    run = Orchestrator(schedule, operator=Keeper())
    run.advance_to(200.0)
    assert refused and all("invocation 1 is over" in r for r in refused)
    with pytest.raises(RuntimeError, match="is over"):
        kept[0].call("get_time")  # from another thread, after the invocation: refused, not a hang
