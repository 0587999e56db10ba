"""What an operator is handed every cadence: an :class:`Invocation`, the operator's whole view of the run.

The view holds the run time and cadence, the cumulative alert history, the application
model (services, edges, routes), the operator's persistent workspace and its own incidents,
and one way to act: :meth:`Invocation.call` (a tool call, through the policy layer, costing
run time) and :meth:`Invocation.record` (an event of the operator's own, such as a model
call). It has no path to the orchestrator, the fault schedule or the ground-truth events:

* the operator runs on its own thread (:func:`run_invocation`); every call, every record
  and every read of the clock is a request over an :class:`OperatorChannel`, answered by
  the run's thread, which alone holds the run. The two threads strictly alternate (the run
  waits while the operator thinks, the operator waits while the run executes its call),
  so a run is as deterministic as if the operator were called in line.
* the one exception is visible: an operator declaring ``ground_truth = True`` (the oracle,
  ``one-per-fault``: validation references, never ranked) receives :attr:`Invocation.truth`,
  the run's fault records and cluster. ``tests/test_operator_view.py`` walks every object
  reachable from an invocation and checks nothing else leads to ground truth.

This is a structural door, not a sandbox: Python code running in the engine's process can
always find any object it wants (``gc.get_objects()``, ``sys._current_frames()``). The view
keeps honest operators honest and makes a ground-truth read visible in the code; an
operator that must be isolated runs out of process, through ``marathon serve``.
"""

from __future__ import annotations

import copy
import json
import queue
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from alerts.history import AlertInstance
from engine.apps.model import AppModel
from engine.bundle.events import check_payload_types
from engine.operate.toolargs import printable
from engine.operate.tools import ToolResult
from engine.operate.workspace import Workspace
from engine.substrate import Substrate

OPERATOR_EVENT_KINDS = ("llm.call", "agent.end")
"""Event kinds an operator may record itself (:meth:`Invocation.record`): model calls and the
end of an invocation with its reason and spend. Everything else an operator does is recorded
by the tool layer."""
MAX_RECORD_BYTES = 64 * 1024
"""Largest payload an operator may record, as compact JSON (bytes): a model call's usage and
an invocation's end reason fit many times over."""
MAX_USAGE_TOKENS = 10_000_000
"""Most prompt (or completion) tokens one reported model call may claim: ten times today's
largest context windows, so a sum over a run stays an honest integer."""
MAX_USAGE_COST_USD = 1_000.0
"""Most US dollars one reported model call may cost (so sums stay finite)."""
MAX_USAGE_LATENCY_S = 3_600.0
"""Longest latency one reported model call may claim, seconds."""
_USAGE_LIMITS = {"prompt_tokens": MAX_USAGE_TOKENS, "completion_tokens": MAX_USAGE_TOKENS,
                 "tokens": 2 * MAX_USAGE_TOKENS, "cost_usd": MAX_USAGE_COST_USD, "latency_s": MAX_USAGE_LATENCY_S}


class Operator(Protocol):
    """What the run loop needs from an operator (see :mod:`engine.operate.operators`)."""

    name: str

    def invoke(self, inv: Invocation) -> None:
        """Act for one invocation; called every cadence."""
        ...


@dataclass
class NoopOperator:
    """Does nothing: the baseline every fault must fail against."""

    name: str = "noop"

    def invoke(self, inv: Invocation) -> None:
        return None


class GroundTruth(Protocol):
    """The oracle's explicit handle on the run's ground truth (validation operators only).

    Attributes:
        faults: fault id -> the run's record of it (spec, instance, probe samples, the services
            an act must target), in injection order.
        cluster: the substrate itself, unfiltered by the tools.
    """

    @property
    def faults(self) -> Mapping[str, Any]: ...

    @property
    def cluster(self) -> Substrate: ...


@dataclass(frozen=True)
class RunState:
    """The clock as the operator sees it at one moment.

    Attributes:
        now: run time, seconds.
        over: the run has ended: further calls are refused.
        next_invocation_t: run time of the next invocation, seconds.
    """

    now: float
    over: bool
    next_invocation_t: float


_DONE = ("done",)


class InvocationOver(RuntimeError):
    """A request on an invocation that has ended."""


class OperatorChannel:
    """A rendezvous between the operator's thread and the run's thread (module docstring).

    The operator side calls :meth:`ask` and blocks until the run side, looping in
    :meth:`serve`, has answered. Requests are tuples: ``("call", tool, args, tokens)``,
    ``("record", kind, payload)``, ``("state",)``, ``("incidents",)``.
    """

    def __init__(self, number: int = 0) -> None:
        self.number = number
        self._requests: queue.SimpleQueue[tuple[Any, ...]] = queue.SimpleQueue()
        self._replies: queue.SimpleQueue[tuple[bool, Any]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._closed = False

    def ask(self, request: tuple[Any, ...]) -> Any:
        """Send one request and wait for its answer (operator side). Requests from several
        threads are answered one at a time, each its own answer.

        Raises:
            InvocationOver: the invocation has ended (a kept ``Invocation`` is not a way back in).
            whatever the run side raised answering it.
        """
        with self._lock:
            if self._closed:
                raise InvocationOver(f"invocation {self.number} is over: its calls are refused")
            self._requests.put(request)
            ok, value = self._replies.get()
        if not ok:
            raise value
        return value

    def finish(self, error: BaseException | None) -> None:
        """The operator's invocation returned (or raised ``error``): no request is accepted after it."""
        with self._lock:
            self._closed = True
            self._requests.put((*_DONE, error))

    def serve(self, answer: Callable[[tuple[Any, ...]], Any]) -> BaseException | None:
        """Answer requests with ``answer`` until the operator finishes (run side); the error
        the operator raised, if any."""
        while True:
            request = self._requests.get()
            if request[:1] == _DONE:
                error: BaseException | None = request[1]
                return error
            try:
                self._replies.put((True, answer(request)))
            except Exception as exc:  # handed to the operator, which asked
                self._replies.put((False, exc))


@dataclass
class Invocation:
    """One operator invocation: the operator's view of the run (module docstring).

    Attributes:
        number: 1, 2, ... in run order.
        t: run time at invocation, seconds.
        alerts: the cumulative alert history (every instance so far, oldest first).
        new_alerts: instances that changed state since the previous invocation.
        workspace: the operator's persistent workspace.
        app: the application model: services, call edges, routes.
        cadence_s: the invocation interval, run-time seconds.
        run_dir: where the run is recorded (an agent versions its prompts and transcripts
            there), or None.
        operator: the operator's name, as its tool calls are recorded.
        truth: the run's ground truth, for an operator declaring ``ground_truth = True``
            only; None for every other operator.
    """

    number: int
    t: float
    alerts: list[AlertInstance]
    new_alerts: list[AlertInstance]
    workspace: Workspace
    app: AppModel
    cadence_s: float
    run_dir: Path | None
    operator: str
    channel: OperatorChannel = field(repr=False)
    truth: GroundTruth | None = None

    def call(self, tool: str, **args: Any) -> ToolResult:
        """Call a tool with keyword arguments (see :mod:`engine.operate.tools`); never raises."""
        return self.call_tool(tool, args)

    def call_tool(self, tool: str, args: Any = None, *, tokens: Any = 0) -> ToolResult:
        """Call a tool with an object of arguments (or JSON text of one), reporting the model
        tokens spent on it; what the tool layer's ``ToolBox.call`` returns."""
        result: ToolResult = self.channel.ask(("call", tool, args, tokens))
        return result

    def record(self, kind: str, payload: dict[str, Any]) -> None:
        """Record an event of the operator's own (one of :data:`OPERATOR_EVENT_KINDS`).

        Raises:
            ValueError: another kind.
        """
        self.channel.ask(("record", kind, payload))

    @property
    def state(self) -> RunState:
        """The clock now (it moves as tool calls cost run time)."""
        state: RunState = self.channel.ask(("state",))
        return state

    @property
    def now(self) -> float:
        """Run time now, seconds."""
        return self.state.now

    @property
    def over(self) -> bool:
        """True once the run has ended (further tool calls are refused)."""
        return self.state.over

    def incidents(self) -> dict[str, dict[str, object]]:
        """The operator's own incidents: id -> {alerts, title, resolved, ...} (a copy)."""
        book: dict[str, dict[str, object]] = self.channel.ask(("incidents",))
        return book


def check_record(kind: str, payload: Any, *, operator: str, invocation: int) -> None:
    """Check an event an operator records itself (:meth:`Invocation.record`), as the tool
    server checks reported usage.

    Raises:
        ValueError: another kind than :data:`OPERATOR_EVENT_KINDS`; a payload that is no JSON
            object of finite numbers, over :data:`MAX_RECORD_BYTES`, mistyped
            (:func:`engine.bundle.events.check_payload_types`), with usage out of bounds
            (negative, or over the ``MAX_USAGE_*`` limits), or naming another operator or
            invocation.
    """
    if kind not in OPERATOR_EVENT_KINDS:
        raise ValueError(f"an operator may record only {', '.join(OPERATOR_EVENT_KINDS)} events, not {kind!r}")
    if not isinstance(payload, dict):
        raise ValueError(f"a {kind} payload must be an object, not {type(payload).__name__}")
    try:
        size = len(json.dumps(payload, allow_nan=False, separators=(",", ":")).encode())
    except (TypeError, ValueError) as exc:
        raise ValueError(f"a {kind} payload must be JSON with finite numbers: {exc}") from None
    if size > MAX_RECORD_BYTES:
        raise ValueError(f"a {kind} payload is {size:,} bytes; at most {MAX_RECORD_BYTES:,}")
    problems = check_payload_types(kind, payload)
    if problems:
        raise ValueError(f"{kind}: " + "; ".join(problems))
    if payload.get("operator", operator) != operator:
        raise ValueError(f"{kind}: operator must be {operator!r}, not {payload.get('operator')!r}")
    if payload.get("invocation", invocation) != invocation:
        raise ValueError(f"{kind}: invocation must be {invocation}, not {payload.get('invocation')!r}")
    if kind == "llm.call":
        for key, limit in _USAGE_LIMITS.items():
            value = payload.get(key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= limit:
                raise ValueError(f"llm.call: {key} must be a number from 0 to {limit:g}, not {value!r}")


class RunSide(Protocol):
    """What :func:`run_invocation` needs from the run to answer an operator's requests."""

    def call_tool(self, tool: str, args: Any, tokens: Any) -> ToolResult: ...

    def record(self, kind: str, payload: dict[str, Any]) -> None: ...

    def state(self) -> RunState: ...

    def incidents(self) -> dict[str, dict[str, object]]: ...


def run_invocation(operator: Operator, inv: Invocation, run: RunSide) -> None:
    """Invoke ``operator`` on its own thread and answer its requests on this one until it returns.

    An ``Exception`` the operator raises ends its invocation, recorded as ``agent.end`` with
    reason ``internal error: ...``; the run goes on (a defect in an operator must not cost a
    marathon). Afterwards the invocation is closed: a kept reference raises :class:`InvocationOver`.

    Raises:
        KeyboardInterrupt, SystemExit: raised by the operator (re-raised here, on the run's thread).
    """

    def answer(request: tuple[Any, ...]) -> Any:
        what = request[0]
        if what == "call":
            return run.call_tool(request[1], request[2], request[3])
        if what == "record":
            kind, payload = request[1], request[2]
            check_record(kind, payload, operator=inv.operator, invocation=inv.number)
            run.record(kind, copy.deepcopy(payload))
            return None
        if what == "state":
            return run.state()
        if what == "incidents":
            return copy.deepcopy(run.incidents())
        raise ValueError(f"unknown request {what!r}")

    def body() -> None:
        error: BaseException | None = None
        try:
            operator.invoke(inv)
        except BaseException as exc:  # re-raised on the run's thread
            error = exc
        finally:
            inv.channel.finish(error)

    thread = threading.Thread(target=body, name=f"operator-{getattr(operator, 'name', '?')}-{inv.number}",
                              daemon=True)
    thread.start()
    error = inv.channel.serve(answer)
    thread.join()
    if isinstance(error, Exception):
        # A defect in an operator must not take the run down: the invocation ends with it recorded.
        run.record("agent.end", {"invocation": inv.number, "operator": inv.operator,
                                 "reason": f"internal error: {type(error).__name__}: {printable(str(error))[:300]}"})
    elif error is not None:
        raise error  # KeyboardInterrupt, SystemExit: the user stops the run
