"""The operator tools: typed, JSON-Schema'd, tiered, and routed through the policy layer.

Every operator -- a built-in agent, an LLM, an external harness, the human at the
terminal -- sees the system only through these tools (DESIGN section 7):

* **read**: ``get_alerts``, ``get_topology``, ``kubectl_get``, ``kubectl_describe``,
  ``query_logs``, ``query_metrics`` (PromQL over the run's Prometheus, :mod:`engine.operate.promquery`),
  ``code_search``, ``get_deploy_history``, ``get_time``;
* **report**: ``report_incident``, ``report_rca``, ``resolve_incident``;
* **act**: ``restart_pod``, ``scale_deployment``, ``rollback``, ``deploy_patch``,
  ``set_config``, ``patch_service``, ``set_image``, ``rollout_restart``, ``set_resources``,
  ``set_probe`` -- each must name an open incident and passes the policy layer;
* **workspace**: ``workspace_list``, ``workspace_read``, ``workspace_write`` -- the
  operator's own notes, confined to its workspace.

Arguments are pydantic models, so each tool has a JSON Schema usable for LLM function
calling (:func:`tool_schemas`). :meth:`ToolBox.call` never raises: before a tool's model
sees them, arguments are bounded and checked by :func:`engine.operate.toolargs.bound_arguments`
(caps: 64 KiB per string argument, a ``deploy_patch`` diff up to 1 MiB, ``workspace_write``
text up to 256 KiB, 1 MiB + 64 KiB per call, 6 levels of nesting, 64 keys per object, 500
items per list, 64-bit integers, finite numbers, no lone surrogates, no control characters
except ``\\n``, ``\\t``, ``\\r`` in free text); malformed arguments come back as an error
result naming the argument (``invalid arguments for set_config: value: lone surrogate
U+D800 at character 3``). Every call is recorded as a ``tool.call`` event with its bounded
arguments (a rejected value over a cap or not representable in JSON as an
``{"$unrecorded": ...}`` marker), target set, policy decision and result; an executed act
call also as ``action.executed``. A call that came in as a Kubernetes API write
(:mod:`engine.serve.kubeapi`) also records the raw request (``request``: user, method, path,
content type, body; bounded by :func:`engine.operate.toolargs.bound_request`). Recording is
replayable: calling again with the recorded ``tool``, ``args``, ``tokens`` and ``request`` on
the same state records the same ``tool.call``.

Answers are cut at :data:`MAX_OUTPUT_CHARS` characters (``... [N more characters truncated]``),
except those of ``query_logs`` and ``code_search``, which are paged: a ``page`` argument reads
the next slice of the same answer, each page a normal call (costed and recorded like any other),
and every page but the last ends saying which page to ask for next (:func:`page_of`). An
omitted ``page`` is not recorded, so the calls of an operator that never pages record as they
did before paging existed.

Every result carries the run time it was answered at (:attr:`ToolResult.t`); ``get_time``
reads the clock: run time, cadence, invocation number, time to the next invocation.

``code_search`` regular expressions run on RE2 (linear time: no pattern can stall a run);
RE2 has no backreferences or lookaround, and such patterns are refused with an error.

Modeled run time per call (:data:`COST_S`): read 5 s, report 3 s, act 10 s, workspace
1 s -- the time a person or agent spends issuing the call and reading its answer, so a
busy operator is slower on the virtual clock, as it would be live. ``get_time`` costs 1 s
(:attr:`ToolSpec.cost_s`): a glance at a clock, not an investigation. ``query_metrics``
costs a read's 5 s like ``kubectl_get`` and ``query_logs``: typing a query and reading a
panel is the same kind of look as a ``kubectl get``.

Nothing here reads ground truth: tools see the substrate (cluster, series, logs, traces,
source, pipeline log), the alert history and the operator's own workspace and reports.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from alerts.history import AlertHistory
from alerts.promql.storage import Storage
from engine.apps.model import Probe, Resources
from engine.operate.policy import Decision, IncidentBook, Policy
from engine.operate.promquery import MAX_QUERY_CHARS, run_query
from engine.operate.toolargs import (
    bound_arguments,
    bound_request,
    format_problems,
    marker,
    normalize_tokens,
    printable,
    recorded_tool_name,
)
from engine.operate.workspace import Workspace, WorkspaceError
from engine.sim.k8s import EPOCH
from engine.substrate import Substrate, SubstrateError

Tier = Literal["read", "report", "act", "workspace"]
COST_S: dict[str, float] = {"read": 5.0, "report": 3.0, "act": 10.0, "workspace": 1.0}
MAX_OUTPUT_CHARS = 12_000
"""Tool outputs are truncated to this many characters (a screenful of context for an LLM); the
answers of :data:`PAGED_TOOLS` are cut into pages of this many characters instead (:func:`page_of`)."""
MAX_PAGE = 10_000
"""The highest ``page`` a paged tool takes (a 1 MB answer is 84 pages)."""
CATEGORIES = ("code-bug", "configuration", "runtime", "infrastructure")
MAX_QUERY_TIME_S = 10_000_000.0
"""``query_metrics`` times are run times within about 115 days of the start (a run is hours)."""

ENV_VAR_NAME = re.compile(r"[ -<>-~]+")
"""What a Kubernetes 1.34+ API server accepts as an env var name: printable ASCII other than
``=`` (``validation.IsRelaxedEnvVarName``, ``k8s.io/apimachinery/pkg/util/validation``; the
simulated cluster answers as v1.36)."""


class ToolArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


PAGE_DESCRIPTION = ("the page of a long answer to read: an answer over 12,000 characters is cut into pages of "
                    "12,000 characters, and each page ends saying which page it is, of how many, and the page to "
                    "ask for next (default: the first page)")


class GetAlertsArgs(ToolArgs):
    state: Literal["any", "pending", "firing", "resolved"] = Field("any", description="current state filter")
    since_s: float | None = Field(None, description="only alerts active at or after this run time, seconds")
    alertname: str | None = Field(None, description="only this alert rule")
    service: str | None = Field(None, description="only alerts whose service/deployment/pod label names it")
    limit: int = Field(50, ge=1, le=500)


class GetTopologyArgs(ToolArgs):
    window_s: float = Field(300.0, ge=60, le=1800, description="trace window, seconds")


KubeKind = Literal["pods", "deployments", "replicasets", "statefulsets", "services", "nodes", "events", "endpoints",
                   "endpointslices", "configmaps", "secrets"]
_KIND_API = {"pods": "Pod", "deployments": "Deployment", "replicasets": "ReplicaSet", "statefulsets": "StatefulSet",
             "services": "Service", "nodes": "Node", "events": "Event", "endpoints": "Endpoints",
             "endpointslices": "EndpointSlice", "configmaps": "ConfigMap", "secrets": "Secret"}


class KubectlGetArgs(ToolArgs):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, serialize_by_alias=True)

    kind: KubeKind
    name: str | None = Field(None, description="one object by name")
    selector: dict[str, str] | None = Field(None, description="label selector, e.g. {\"app\": \"frontend\"}")
    output: Literal["table", "wide", "yaml", "json", "name"] = "table"
    limit: int | None = Field(None, ge=1, le=500, description="at most this many objects (the API's list "
                                                              "chunking); the answer ends with a continue token "
                                                              "when more are left")
    continue_: str | None = Field(None, alias="continue", max_length=2000,
                                  description="the continue token of the previous page, to read the next one")


class KubectlDescribeArgs(ToolArgs):
    kind: Literal["pods", "deployments", "replicasets", "statefulsets", "services", "nodes"]
    name: str


class QueryLogsArgs(ToolArgs):
    deployment: str | None = Field(None, description="every pod of this deployment (one of deployment/pod)")
    pod: str | None = Field(None, description="one pod")
    grep: str | None = Field(None, description="keep lines containing this text (case-insensitive)")
    tail: int = Field(100, ge=1, le=1000, description="last N lines per pod")
    previous: bool = Field(False, description="the previous (crashed) container's logs")
    since_s: float | None = Field(None, gt=0, le=86400, description="only lines of the last N seconds "
                                                                     "(kubectl logs --since)")
    page: int | None = Field(None, ge=1, le=MAX_PAGE, exclude_if=lambda v: v is None,
                             description=PAGE_DESCRIPTION)


class QueryMetricsArgs(ToolArgs):
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS,
                       description="a PromQL expression (Prometheus 2.42), e.g. "
                                   "sum by (service) (rate(http_requests_total{code=~\"5..\"}[5m]))")
    time: float | None = Field(None, ge=-MAX_QUERY_TIME_S, le=MAX_QUERY_TIME_S,
                               description="instant query at this run time, seconds (default: now); not with "
                                           "start/end/step")
    start: float | None = Field(None, ge=-MAX_QUERY_TIME_S, le=MAX_QUERY_TIME_S,
                                description="range query from this run time, seconds")
    end: float | None = Field(None, ge=-MAX_QUERY_TIME_S, le=MAX_QUERY_TIME_S,
                              description="range query to this run time, seconds (default: now)")
    step: float | None = Field(None, gt=0, le=MAX_QUERY_TIME_S,
                               description="range query resolution, seconds (default: a multiple of the 15 s "
                                           "scrape interval giving at most 120 points; at most 11,000 points)")


class CodeSearchArgs(ToolArgs):
    service: str
    ref: Literal["deployed", "head"] = Field("deployed", description="the revision the pods run (deployed), or "
                                                                     "the repository head patches apply to")
    pattern: str | None = Field(None, description="text or regular expression to find (at most 64 KiB); omit to "
                                                  "read a file")
    path: str | None = Field(None, description="limit to files whose path contains this; alone, prints the file")
    regex: bool = Field(False, description="treat pattern as an RE2 regular expression (Python-like syntax; no "
                                           "backreferences or lookaround)")
    context: int = Field(2, ge=0, le=10, description="lines of context around each match")
    max_matches: int = Field(40, ge=1, le=200)
    page: int | None = Field(None, ge=1, le=MAX_PAGE, exclude_if=lambda v: v is None,
                             description=PAGE_DESCRIPTION)


class DeployHistoryArgs(ToolArgs):
    service: str | None = None
    limit: int = Field(20, ge=1, le=200)


class ReportIncidentArgs(ToolArgs):
    alerts: list[str] = Field(min_length=1, description="alert ids (A-12) or fingerprints from get_alerts")
    title: str = Field(min_length=3, max_length=200)


class ReportRcaArgs(ToolArgs):
    incident: str
    service: str = Field(description="the faulty service")
    category: Literal["code-bug", "configuration", "runtime", "infrastructure"]
    artifact: str = Field(min_length=1, description="the responsible change id, config key, image, flag, ...")
    summary: str = Field(min_length=3, max_length=2000)


class ResolveIncidentArgs(ToolArgs):
    incident: str


class RestartPodArgs(ToolArgs):
    pod: str
    incident: str


class ScaleArgs(ToolArgs):
    deployment: str
    replicas: int = Field(ge=0, le=20)
    incident: str


class RollbackArgs(ToolArgs):
    deployment: str
    revision: int | None = Field(None, ge=1, description="default: the previous revision")
    incident: str


class DeployPatchArgs(ToolArgs):
    service: str
    diff: str = Field(min_length=10, description="a unified diff (git diff format) against the repository head "
                                                 "(code_search with ref=head shows it); at most 1 MiB")
    summary: str = Field(min_length=3, max_length=200, description="commit subject")
    incident: str


class SetConfigArgs(ToolArgs):
    service: str
    key: str = Field(min_length=1, description="env var name (for flagd: a feature flag name)")
    value: str | None = Field(None, description="new value (for flagd: a variant); null unsets the env var")
    incident: str


class PatchServiceArgs(ToolArgs):
    service: str
    selector: dict[str, str] | None = Field(None, description="the new spec.selector (replaces the old one)")
    target_port: int | None = Field(None, ge=1, le=65535, description="the new targetPort of the Service's port")
    incident: str


class SetImageArgs(ToolArgs):
    deployment: str
    image: str = Field(min_length=1, max_length=512, description="the new image of the deployment's container "
                                                                 "(repository:tag or repository@sha256:digest), "
                                                                 "as kubectl set image takes it")
    incident: str


class RolloutRestartArgs(ToolArgs):
    deployment: str = Field(description="the deployment (or statefulset) whose pods are all replaced, one by one")
    incident: str


class SetResourcesArgs(ToolArgs):
    deployment: str
    resources: Resources = Field(description="the container's new requests and limits, both whole (kubectl set "
                                             "resources): e.g. {\"requests\": {\"cpu\": \"100m\", \"memory\": "
                                             "\"64Mi\"}, \"limits\": {\"memory\": \"128Mi\"}}")
    incident: str


class ProbeSpecArgs(Probe):
    """:class:`engine.apps.model.Probe` with its defaults validated, so an omitted field records
    as the float it is (``0.0``, not ``0``) and a replayed call records the same arguments."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False, validate_default=True)


class SetProbeArgs(ToolArgs):
    deployment: str
    probe: Literal["readiness", "liveness"]
    spec: ProbeSpecArgs | None = Field(description="the new probe (type http/grpc/tcp/exec, port, path, "
                                                   "initial_delay_s, period_s, timeout_s, failure_threshold); "
                                                   "null removes it")
    incident: str


class WorkspaceListArgs(ToolArgs):
    prefix: str = ""


class WorkspaceReadArgs(ToolArgs):
    path: str


class WorkspaceWriteArgs(ToolArgs):
    path: str
    text: str = Field(description="the text (at most 256 KiB per call; a workspace file holds at most 1 MB)")
    append: bool = False


class GetTimeArgs(ToolArgs):
    pass


@dataclass
class ToolResult:
    """What a tool call returns to the operator."""

    ok: bool
    output: str = ""
    error: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    denied: bool = False
    t: float | None = None
    """Run time the call was answered at, seconds (its modeled cost is spent afterwards)."""

    def text(self) -> str:
        """The result as the operator reads it."""
        if self.ok:
            return self.output
        return f"ERROR: {self.error}"


@dataclass(frozen=True)
class ToolSpec:
    """One tool: name, tier, argument model, description, and its modeled cost (None: the tier's)."""

    name: str
    tier: Tier
    args: type[ToolArgs]
    description: str
    cost_s: float | None = None

    @property
    def cost(self) -> float:
        """Modeled run time of one call, seconds."""
        return COST_S[self.tier] if self.cost_s is None else self.cost_s


TOOLS: dict[str, ToolSpec] = {t.name: t for t in [
    ToolSpec("get_alerts", "read", GetAlertsArgs,
             "Cumulative alert history: every alert instance with id, state, labels, times and summary."),
    ToolSpec("get_topology", "read", GetTopologyArgs,
             "Service call graph from traces: calls/s, error share and latency per caller -> callee edge."),
    ToolSpec("kubectl_get", "read", KubectlGetArgs,
             "kubectl get in the application's namespace. Events come sorted by last timestamp "
             "(kubectl get events --sort-by=.lastTimestamp: newest at the bottom); when a list does not fit "
             "(or `limit` is given) it is paged like the API's list chunking -- for events the newest page "
             "first -- and the answer says so and gives the `continue` token of the next page. Secrets show "
             "their names, type and key names only: values are withheld."),
    ToolSpec("kubectl_describe", "read", KubectlDescribeArgs, "kubectl describe, with the object's recent events."),
    ToolSpec("query_logs", "read", QueryLogsArgs, "Recent log lines of a deployment's pods or one pod (grep-able)."),
    ToolSpec("query_metrics", "read", QueryMetricsArgs,
             "PromQL over the run's Prometheus (the scraped kube-state-metrics, container and HTTP series, "
             "ALERTS and recording rules) as of now: an instant query (time) or a range query (start, end, "
             "step), answered as Prometheus' HTTP API answers (data: status, resultType, result with "
             "[unix_seconds, \"value\"] samples; errors as errorType and error) with a table and, for ranges, a "
             "sparkline per series. Times are run time in seconds; at most 100 series come back."),
    ToolSpec("code_search", "read", CodeSearchArgs,
             "Search (or read) the source of the revision a service is running, or of its repository head."),
    ToolSpec("get_deploy_history", "read", DeployHistoryArgs,
             "The build pipeline's log of changes: id, time, service, kind, revision, author, summary."),
    ToolSpec("get_time", "read", GetTimeArgs,
             "The run clock: run time (seconds and m:ss), the invocation cadence, your current invocation number "
             "and the run time until the next invocation. Costs 1 s of run time.", cost_s=1.0),
    ToolSpec("report_incident", "report", ReportIncidentArgs,
             "Open an incident grouping alerts that share one cause. Returns the incident id."),
    ToolSpec("report_rca", "report", ReportRcaArgs,
             "Root cause of an incident: the faulty service, fault category and responsible artifact."),
    ToolSpec("resolve_incident", "report", ResolveIncidentArgs,
             "Declare an incident repaired (premature declarations are counted)."),
    ToolSpec("restart_pod", "act", RestartPodArgs, "Delete a pod; its controller replaces it."),
    ToolSpec("scale_deployment", "act", ScaleArgs, "Set a deployment's replica count."),
    ToolSpec("rollback", "act", RollbackArgs, "Roll a deployment back to a revision (default: the previous)."),
    ToolSpec("deploy_patch", "act", DeployPatchArgs,
             "Ship a unified diff through the build pipeline: applied to the repository head, built, rolled out."),
    ToolSpec("set_config", "act", SetConfigArgs,
             "Set (or unset) an env var of a deployment and roll it out; for flagd, set a feature flag's variant."),
    ToolSpec("patch_service", "act", PatchServiceArgs,
             "kubectl patch service: set a Service's pod selector and/or targetPort (the container port its "
             "endpoints use)."),
    ToolSpec("set_image", "act", SetImageArgs,
             "kubectl set image: roll a deployment out on another image (e.g. the one a previous ReplicaSet "
             "runs) without a build."),
    ToolSpec("set_resources", "act", SetResourcesArgs,
             "kubectl set resources: roll a deployment out with new container requests and limits."),
    ToolSpec("set_probe", "act", SetProbeArgs,
             "Set (or remove) a deployment's readiness or liveness probe and roll it out."),
    ToolSpec("rollout_restart", "act", RolloutRestartArgs,
             "kubectl rollout restart: replace every pod of a deployment with a fresh one, rolling, with the same "
             "pod template (a new ReplicaSet)."),
    ToolSpec("workspace_list", "workspace", WorkspaceListArgs, "List files in your workspace."),
    ToolSpec("workspace_read", "workspace", WorkspaceReadArgs, "Read a file from your workspace."),
    ToolSpec("workspace_write", "workspace", WorkspaceWriteArgs, "Write (or append to) a file in your workspace."),
]}


class KubeReadArgs(ToolArgs):
    verb: Literal["get", "list", "watch", "log", "metrics"]
    resource: str = Field(min_length=1, max_length=300, description="plural[.group][/name], e.g. pods/cart-1")


API_TOOLS: dict[str, ToolSpec] = {t.name: t for t in [
    ToolSpec("kube_read", "read", KubeReadArgs,
             "A read of the run's Kubernetes API (kubectl get, describe, logs, top, get -w: one per request "
             "the server answers from the cluster): recorded with its raw request and charged a read's "
             "modeled run time, as a typed read is. The answer went over the API, not into this result."),
]}
"""Tools only the Kubernetes API calls (with its raw request): not offered to operators as tools
(:func:`tool_schemas`, MCP, the palette), since they are the API's own accounting."""


def tool_schemas(tiers: tuple[str, ...] = ("read", "report", "act", "workspace")) -> list[dict[str, Any]]:
    """Tools in the OpenAI function-calling format (``{"type": "function", "function": {...}}``)."""
    out = []
    for spec in TOOLS.values():
        if spec.tier not in tiers:
            continue
        schema = spec.args.model_json_schema()
        schema.pop("title", None)
        out.append({"type": "function", "function": {"name": spec.name, "description": f"[{spec.tier}] "
                                                     f"{spec.description}", "parameters": schema}})
    return out


def _clip(text: str) -> str:
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    return text[:MAX_OUTPUT_CHARS] + f"\n... [{len(text) - MAX_OUTPUT_CHARS} more characters truncated]"


PAGED_TOOLS = ("query_logs", "code_search")
"""Tools whose long answers are paged (a ``page`` argument) instead of truncated."""


def page_of(text: str, page: int | None) -> tuple[str, dict[str, int]]:
    """Page ``page`` (1-based; None: the first) of a paged tool's whole answer ``text``.

    Pages are consecutive slices of :data:`MAX_OUTPUT_CHARS` characters (a page may start or end
    inside a line), so the pages of one answer joined give it back whole. A page of a longer
    answer ends with a line ``... [...]`` saying which page it is, of how many, and which
    ``page`` to ask for next; the first page's line begins as the truncation line of an unpaged
    tool (``... [N more characters truncated``), and an answer that fits is returned unchanged.
    Each page is a separate call: costed, recorded, and answered from the system as it is then,
    so log lines written between two calls shift the later pages (no snapshot is kept between
    calls, as ``kubectl logs`` keeps none; the simulator does not model the API's consistent
    list snapshots either).

    Returns:
        (the page's text, ``{"page": k, "pages": n, "chars": len(text)}``; empty when ``page``
        is None and the answer fits on one page).

    Raises:
        ValueError: ``page`` past the last page (the message gives the number of pages).
    """
    size = MAX_OUTPUT_CHARS
    pages = max(1, -(-len(text) // size))
    if page is not None and page > pages:
        raise ValueError(f"page {page} is past the end: this answer has {pages} page{'s' if pages > 1 else ''} "
                         f"({len(text)} characters, {size} a page); the last is page={pages}")
    k = page or 1
    if pages == 1:
        return text, ({} if page is None else {"page": 1, "pages": 1, "chars": len(text)})
    lo, hi = (k - 1) * size, min(len(text), k * size)
    where = f"page {k} of {pages}, characters {lo + 1}-{hi} of {len(text)}"
    if k == 1:
        note = f"{len(text) - hi} more characters truncated: {where}; next: the same call with page=2"
    elif k < pages:
        note = f"{where}; {len(text) - hi} more characters; next: the same call with page={k + 1}"
    else:
        note = f"{where}: the last page"
    return text[lo:hi] + f"\n... [{note}]", {"page": k, "pages": pages, "chars": len(text)}


def _table(rows: list[list[str]]) -> str:
    if not rows:
        return ""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("   ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows)


def _mmss(t: float) -> str:
    sign = "-" if t < 0 else ""
    t = abs(t)
    return f"{sign}{int(t // 60)}:{int(t % 60):02d}"


class RunPort(Protocol):
    """The tools' one port to a run: what :class:`ToolBox` reads and drives, and nothing more.

    The run loop (:class:`engine.run.orchestrator.Orchestrator`) implements it. Operators never
    hold a tool box: they reach it through :class:`engine.operate.invocation.Invocation`.
    """

    @property
    def now(self) -> float:
        """Run time, seconds."""
        ...

    @property
    def over(self) -> bool:
        """True once the run has ended (calls are refused)."""
        ...

    @property
    def cadence_s(self) -> float:
        """Operator invocation interval, run-time seconds."""
        ...

    @property
    def next_invocation_t(self) -> float:
        """Run time of the next invocation, seconds."""
        ...

    @property
    def in_invocation(self) -> bool:
        """True while the operator's invocation is running (false for calls between invocations)."""
        ...

    @property
    def sim(self) -> Substrate:
        """The cluster the tools read and act on."""
        ...

    @property
    def alert_history(self) -> AlertHistory | None:
        """The cumulative alert history (None when the run has no alert source)."""
        ...

    @property
    def metrics(self) -> Storage | None:
        """The run's Prometheus storage as of now (the embedded evaluator's: scraped series,
        ``ALERTS``, recording rules); None when the run has no embedded evaluator."""
        ...

    def spend(self, seconds: float) -> None:
        """Let ``seconds`` of run time pass (a call's modeled cost)."""
        ...

    def emit(self, kind: str, payload: dict[str, Any]) -> Any:
        """Record one event in the run's stream."""
        ...


class ToolBox:
    """Executes tool calls for one operator of one run (module docstring).

    Args:
        run: the run's port (the substrate, the alert history, the event stream, the clock).
        operator: the operator's name, recorded with each call.
        workspace: the operator's workspace.
    """

    def __init__(self, run: RunPort, operator: str, workspace: Workspace) -> None:
        self.run = run
        self.operator = operator
        self.workspace = workspace
        self.incidents = IncidentBook()
        self.policy = Policy(run.sim.app, self._flag_readers)
        self.invocation = 0
        self.spend_time = True
        self._handlers: dict[str, Callable[[Any], ToolResult]] = {
            "get_alerts": self._get_alerts,
            "get_topology": self._get_topology,
            "kubectl_get": self._kubectl_get,
            "kubectl_describe": self._kubectl_describe,
            "query_logs": self._query_logs,
            "query_metrics": self._query_metrics,
            "code_search": self._code_search,
            "get_deploy_history": self._deploy_history,
            "get_time": self._get_time,
            "report_incident": self._report_incident,
            "report_rca": self._report_rca,
            "resolve_incident": self._resolve_incident,
            "restart_pod": self._restart_pod,
            "scale_deployment": self._scale,
            "rollback": self._rollback,
            "deploy_patch": self._deploy_patch,
            "set_config": self._set_config,
            "patch_service": self._patch_service,
            "set_image": self._set_image,
            "rollout_restart": self._rollout_restart,
            "set_resources": self._set_resources,
            "set_probe": self._set_probe,
            "kube_read": self._kube_read,
            "workspace_list": self._ws_list,
            "workspace_read": self._ws_read,
            "workspace_write": self._ws_write,
        }

    # ----------------------------------------------------------------- dispatch

    def call(self, name: str, args: Any = None, *, tokens: Any = 0, request: Any = None) -> ToolResult:
        """Run one tool call end to end: bound, parse, decide, execute, record, spend time.

        Args:
            name: the tool's name.
            args: an object of arguments, JSON text of one, or None; anything else is
                rejected (and recorded) as malformed.
            tokens: model tokens the operator spent on this call (normalized by
                :func:`engine.operate.toolargs.normalize_tokens`; what is recorded).
            request: the raw Kubernetes API request this call came in as (``user``, ``method``,
                ``path``, ``content_type``, ``body``), recorded with the call as ``request``
                (bounded by :func:`engine.operate.toolargs.bound_request`); None for a typed call.

        Never raises: unknown tools and malformed arguments return an error result (and are
        recorded); so does a defect in a tool or in recording.
        """
        try:
            return self._call(name, args, normalize_tokens(tokens),
                              None if request is None else bound_request(request))
        except Exception as exc:  # the tool layer must never take the run down (module docstring)
            return ToolResult(False, error=f"internal error in the tool layer: {type(exc).__name__}: "
                                           f"{printable(str(exc))[:300]}", t=self._clock())

    def _clock(self) -> float | None:
        try:
            return float(self.run.now)
        except Exception:
            return None

    def _call(self, name: Any, args: Any, tokens: int, request: dict[str, Any] | None = None) -> ToolResult:
        if self.run.over:
            return ToolResult(False, error="the run has ended; no more tool calls are accepted", t=self.run.now)
        now = self.run.now
        tool = recorded_tool_name(name)
        spec = TOOLS.get(tool)
        if spec is None and request is not None:
            spec = API_TOOLS.get(tool)
        recorded, problems = bound_arguments(tool, args)
        if spec is None:
            hint = " (the name given was not a short printable string)" if tool.startswith("$unrecorded-") else ""
            result = ToolResult(False, error=f"unknown tool {tool!r}{hint}; tools: {', '.join(TOOLS)}", t=now)
            self._record(tool, "unknown", recorded, (), False, "unknown tool", result, tokens, request)
            return result
        if problems:
            result = ToolResult(False, error=format_problems(tool, problems), t=now)
            self._record(tool, spec.tier, recorded, (), False, "invalid arguments", result, tokens, request)
            return result
        try:
            parsed = spec.args.model_validate(recorded)
        except ValidationError as exc:
            problems = [f"{'.'.join(printable(str(p))[:80] for p in e['loc']) or 'arguments'}: "
                        f"{printable(str(e['msg']))[:200]}" for e in exc.errors()]
            result = ToolResult(False, error=format_problems(tool, problems), t=now)
            self._record(tool, spec.tier, recorded, (), False, "invalid arguments", result, tokens, request)
            return result
        targets: tuple[str, ...] = ()
        decision: Decision | None = None
        if spec.tier == "act":
            targets, why = self._targets(tool, parsed)
            if why is not None:
                decision = Decision(False, why, targets)
            else:
                decision = self.policy.decide(tool, targets, getattr(parsed, "incident", None), self.incidents,
                                              self.run.now)
            if not decision.allowed:
                result = ToolResult(False, error=f"denied by policy: {decision.reason}", denied=True, t=now)
                self._record(tool, spec.tier, parsed.model_dump(), targets, False, decision.reason, result, tokens,
                             request)
                self._spend(spec)
                return result
        paged = False
        try:
            result = self._handlers[tool](parsed)
            if result.ok and tool in PAGED_TOOLS:
                result.output, info = page_of(result.output, getattr(parsed, "page", None))
                result.data.update(info)
                paged = True
        except (SubstrateError, WorkspaceError, KeyError, ValueError) as exc:
            result = ToolResult(False, error=str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc))
        except Exception as exc:  # a defect in a tool must not take the run down; the operator sees it
            result = ToolResult(False, error=f"internal error in {tool}: {type(exc).__name__}: {exc}")
        result.output = result.output if paged else _clip(result.output)
        result.error = _clip(result.error) if result.error is not None else None
        result.t = now
        reason = decision.reason if decision else "read-only" if spec.tier != "report" else "report"
        self._record(tool, spec.tier, parsed.model_dump(), targets, True, reason, result, tokens, request)
        if spec.tier == "act" and result.ok:
            self._emit_safely("action.executed", {
                "tool": tool, "args": parsed.model_dump(), "targets": list(targets), "operator": self.operator,
                **{k: v for k, v in result.data.items() if k in ("change", "revision")}})
        self._spend(spec)
        return result

    def _spend(self, spec: ToolSpec) -> None:
        if self.spend_time:
            self.run.spend(spec.cost)

    def _emit_safely(self, kind: str, payload: dict[str, Any]) -> bool:
        try:
            self.run.emit(kind, payload)
            return True
        except Exception:  # a defect: the call must still answer; the gap shows in the bundle
            return False

    def _record(self, name: str, tier: str, args: Any, targets: tuple[str, ...], allowed: bool, reason: str,
                result: ToolResult, tokens: int, request: dict[str, Any] | None = None) -> None:
        summary = result.output if result.ok else f"ERROR: {result.error}"
        payload = {
            "tool": name, "tier": tier, "args": args, "targets": list(targets), "allowed": allowed,
            "reason": reason, "ok": result.ok, "result": summary[:400], "tokens": tokens,
            "operator": self.operator, "invocation": self.invocation,
            "in_invocation": self.run.in_invocation,
        }
        if request is not None:
            payload["request"] = request
        if not self._emit_safely("tool.call", payload):
            # The bounded form is always canonical JSON; if recording still failed, record that the
            # arguments could not be, rather than nothing.
            payload["args"] = marker(printable(repr(args)[:10_000]), "the arguments could not be recorded")
            payload["result"] = printable(summary[:400])
            self._emit_safely("tool.call", payload)

    # ----------------------------------------------------------------- targets

    def _pods(self) -> dict[str, str]:
        return {p["metadata"]["name"]: p["metadata"]["labels"]["app"] for p in self.run.sim.objects("Pod")}

    def _targets(self, name: str, args: Any) -> tuple[tuple[str, ...], str | None]:
        """Target set of an act call from its typed arguments, or a reason it has none."""
        if name == "restart_pod":
            owner = self._pods().get(args.pod)
            if owner is None:
                return (), f'pods "{args.pod}" not found'
            return (owner,), None
        if name in ("scale_deployment", "rollback", "set_image", "rollout_restart", "set_resources", "set_probe"):
            return (args.deployment,), None
        if name == "set_config" and args.service == "flagd":
            return self.policy.targets_for_flag(args.key), None
        return (args.service,), None

    def _flag_readers(self, flag: str) -> list[str]:
        sim = self.run.sim
        out = []
        for svc in sim.app.services:
            if svc.name == "flagd" or not svc.in_application:
                continue
            try:
                files = sim.source_files(svc.name)
            except SubstrateError:
                continue
            if any(flag in text for text in files.values()):
                out.append(svc.name)
        return out

    # ----------------------------------------------------------------- read

    def _now(self) -> datetime:
        return EPOCH + timedelta(seconds=self.run.now)

    def _get_alerts(self, a: GetAlertsArgs) -> ToolResult:
        history = self.run.alert_history
        if history is None:
            return ToolResult(True, "No alert source is attached to this run.", data={"alerts": []})
        insts = history.query(state=None if a.state == "any" else a.state, rule=a.alertname, since=a.since_s)
        if a.service:
            insts = [i for i in insts if any(i.labels.get(k, "").startswith(a.service)
                                             for k in ("service", "deployment", "pod", "statefulset"))]
        insts = insts[-a.limit:]
        rows = [["ID", "STATE", "ALERT", "SEVERITY", "SINCE", "LABELS", "SUMMARY"]]
        data = []
        for i in insts:
            labels = {k: v for k, v in i.labels.items() if k not in ("alertname", "severity")}
            lab = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
            rows.append([f"A-{i.id}", i.state, i.rule, i.labels.get("severity", ""), _mmss(i.active_at), lab,
                         i.annotations.get("summary", "")[:120]])
            data.append({"id": f"A-{i.id}", "fingerprint": i.fingerprint, "alertname": i.rule, "state": i.state,
                         "labels": i.labels, "active_at": i.active_at, "fired_at": i.fired_at,
                         "ended_at": i.ended_at, "summary": i.annotations.get("summary", "")})
        text = _table(rows) if data else "No alerts match."
        return ToolResult(True, f"run time {_mmss(self.run.now)}\n{text}", data={"alerts": data})

    def _get_topology(self, a: GetTopologyArgs) -> ToolResult:
        edges = sorted(self.run.sim.topology(a.window_s), key=lambda e: (e.caller, e.callee))
        rows = [["CALLER", "CALLEE", "CALLS/S", "ERRORS", "MEAN LATENCY"]]
        for e in edges:
            rows.append([e.caller, e.callee, f"{e.rps:.2f}", f"{100 * e.error_share:.2f}%",
                         f"{e.mean_latency_ms:.0f}ms"])
        return ToolResult(True, f"call graph from traces, last {int(a.window_s)} s\n" + _table(rows),
                          data={"edges": [e.__dict__ for e in edges]})

    def _kubectl_get(self, a: KubectlGetArgs) -> ToolResult:
        from engine.kubectl import printers as kubectl
        from engine.kubectl.paging import list_page, page_token

        kind = _KIND_API[a.kind]
        ns = self.run.sim.app.namespace
        objects = self.run.sim.objects(kind)
        if a.name is not None:
            text = kubectl.get(kind, objects, output=a.output, now=self._now(), selector=a.selector, name=a.name,
                               namespace=ns, sort_by=".lastTimestamp" if kind == "Event" else None)
            return ToolResult(True, text)
        items = kubectl.select(kind, objects, selector=a.selector, namespace=ns)
        page = list_page(kind, items, a.limit, a.continue_)

        def render(chunk: list[dict[str, Any]], token: str | None, remaining: int) -> str:
            text = kubectl.get(kind, chunk, output=a.output, now=self._now(), namespace=ns,
                               sort_by=".lastTimestamp" if kind == "Event" else None,
                               list_meta={"continue": token, "remainingItemCount": remaining} if token else None)
            if token is None or a.output in ("json", "yaml"):
                return text  # a List carries its continue token and remainingItemCount in metadata
            older = " older" if kind == "Event" else ""
            return (text + f"-- {len(chunk)} {a.kind} shown, {remaining} more{older} not shown; next page: "
                           f"kubectl_get kind={a.kind} continue={token}\n")

        chunk, rest = page.items, page.rest
        text = render(chunk, page_token(kind, chunk, rest), len(rest))
        budget = MAX_OUTPUT_CHARS - 200
        while len(text) > budget and len(chunk) > 1:
            keep = max(1, min(len(chunk) - 1, int(len(chunk) * budget / len(text))))
            chunk, rest = chunk[:keep], chunk[keep:] + rest
            text = render(chunk, page_token(kind, chunk, rest), len(rest))
        return ToolResult(True, text, data={"continue": page_token(kind, chunk, rest), "remaining": len(rest),
                                            "items": len(chunk)})

    def _kubectl_describe(self, a: KubectlDescribeArgs) -> ToolResult:
        from engine.kubectl import describe as kubectl

        kind = _KIND_API[a.kind]
        sim = self.run.sim
        objects = [o for o in sim.objects(kind) if o["metadata"]["name"] == a.name]
        if not objects:
            raise SubstrateError(f'Error from server (NotFound): {a.kind} "{a.name}" not found')
        events = sim.events()
        lease = None
        if kind == "Node":  # kubectl describe node reads the node's Lease too
            with contextlib.suppress(SubstrateError):
                lease = next((o for o in sim.objects("Lease") if o["metadata"]["name"] == a.name), None)
        return ToolResult(True, kubectl.describe(kind, objects[0], events, now=self._now(), pods=sim.objects("Pod"),
                                                 replicasets=sim.objects("ReplicaSet"), lease=lease))

    def _query_logs(self, a: QueryLogsArgs) -> ToolResult:
        if (a.deployment is None) == (a.pod is None):
            raise ValueError("give exactly one of deployment or pod")
        pods = self._pods()
        if a.pod is not None:
            names = [a.pod]
        else:
            names = sorted(p for p, owner in pods.items() if owner == a.deployment)
            if a.deployment not in {s.name for s in self.run.sim.app.services}:
                raise SubstrateError(f'deployments.apps "{a.deployment}" not found')
            if not names:
                return ToolResult(True, f"deployment {a.deployment} has no pods")
        chunks = []
        for name in names:
            head = f"==> pod/{name}{' (previous)' if a.previous else ''} <=="
            try:
                # Without grep or since only the tail is needed; otherwise the retained file.
                lines = self.run.sim.logs(name, previous=a.previous, tail=None if a.grep else a.tail,
                                          since=None if a.since_s is None else self.run.now - a.since_s)
            except SubstrateError as exc:
                if a.pod is not None and 'not found' in str(exc) and str(exc).startswith("pods "):
                    raise
                # What kubectl prints for a container without logs (the kubelet's BadRequest).
                chunks.append(f"{head}\nError from server (BadRequest): {exc}")
                continue
            if a.grep:
                needle = a.grep.lower()
                lines = [ln for ln in lines if needle in ln.lower()]
            lines = lines[-a.tail:]
            chunks.append(head + "\n" + ("\n".join(lines) if lines else "(no matching lines)"))
        return ToolResult(True, "\n\n".join(chunks))

    def _query_metrics(self, a: QueryMetricsArgs) -> ToolResult:
        answer = run_query(self.run.metrics, a.query, float(self.run.now), time=a.time, start=a.start, end=a.end,
                           step=a.step)
        if answer.ok:
            return ToolResult(True, answer.text, data=answer.body)
        return ToolResult(False, error=answer.error, data=answer.body)

    def _code_search(self, a: CodeSearchArgs) -> ToolResult:
        sim = self.run.sim
        files = sim.head_files(a.service) if a.ref == "head" else sim.source_files(a.service)
        if not files:
            return ToolResult(True, f"{a.service} has no source in the build pipeline (a third-party image)")
        paths = sorted(p for p in files if a.path is None or a.path in p)
        if a.pattern is None:
            if a.path is None:
                return ToolResult(True, "files:\n" + "\n".join(sorted(files)))
            if not paths:
                raise ValueError(f"no file matching {a.path!r} in {a.service}; files: {', '.join(sorted(files))}")
            path = paths[0]
            numbered = "\n".join(f"{i:4d}  {line}" for i, line in enumerate(files[path].split("\n"), 1))
            return ToolResult(True, f"==> {a.service}:{path} <==\n{numbered}")
        rx = _compile_search(a.pattern, regex=a.regex)
        out: list[str] = []
        count = 0
        for path in paths:
            lines = files[path].split("\n")
            for i, line in enumerate(lines):
                if not rx.search(line):
                    continue
                count += 1
                if count > a.max_matches:
                    break
                lo, hi = max(0, i - a.context), min(len(lines), i + a.context + 1)
                block = [f"{path}:{j + 1}{':' if j == i else '-'} {lines[j]}" for j in range(lo, hi)]
                out.append("\n".join(block))
        if not out:
            return ToolResult(True, f"no matches for {a.pattern!r} in {a.service}")
        more = f"\n... more than {a.max_matches} matches" if count > a.max_matches else ""
        return ToolResult(True, "\n--\n".join(out) + more)

    def _kube_read(self, a: KubeReadArgs) -> ToolResult:
        return ToolResult(True, f"{a.verb} {a.resource}: answered over the Kubernetes API")

    def _get_time(self, a: GetTimeArgs) -> ToolResult:
        run = self.run
        now, cadence = float(run.now), float(run.cadence_s)
        nxt = float(run.next_invocation_t)
        data = {"t": now, "mmss": _mmss(now), "cadence_s": cadence, "invocation": self.invocation,
                "in_invocation": run.in_invocation, "next_invocation_t": nxt,
                "to_next_invocation_s": max(0.0, nxt - now)}
        inv = f"invocation {self.invocation}" if self.invocation else "no invocation yet"
        return ToolResult(True, f"run time {_mmss(now)} ({now:g} s); {inv}; invoked every {cadence:g} s; next "
                                f"invocation at {_mmss(nxt)}, in {_mmss(max(0.0, nxt - now))}", data=data)

    def _deploy_history(self, a: DeployHistoryArgs) -> ToolResult:
        recs = self.run.sim.deploy_history(a.service)[-a.limit:]
        rows = [["CHANGE", "SUBMITTED", "DEPLOYED", "SERVICE", "KIND", "REVISION", "STATUS", "AUTHOR", "SUMMARY"]]
        for r in recs:
            rows.append([r.id, _mmss(r.t_submitted), _mmss(r.t_deployed) if r.t_deployed is not None else "-",
                         r.service, r.kind, str(r.revision or "-"), r.status, r.author, r.summary])
        text = _table(rows) if recs else "no changes yet"
        return ToolResult(True, text, data={"changes": [{"id": r.id, "service": r.service, "kind": r.kind,
                                                         "revision": r.revision, "commit": r.commit,
                                                         "image": r.image, "summary": r.summary}
                                                        for r in recs]})

    # ----------------------------------------------------------------- report

    def _resolve_alerts(self, refs: list[str]) -> list[Any]:
        history = self.run.alert_history
        if history is None:
            raise ValueError("no alerts to report: this run has no alert source")
        by_id = {f"A-{i.id}": i for i in history.instances}
        found = []
        for ref in refs:
            inst = by_id.get(ref.strip().upper()) or by_id.get(f"A-{ref.strip()}")
            if inst is None:
                matches = [i for i in history.instances if i.fingerprint == ref.strip()]
                inst = matches[-1] if matches else None
            if inst is None:
                raise ValueError(f"unknown alert {ref!r}: use ids (A-12) or fingerprints from get_alerts")
            found.append(inst)
        return found

    def _report_incident(self, a: ReportIncidentArgs) -> ToolResult:
        insts = self._resolve_alerts(a.alerts)
        incident = f"INC-{len(self.incidents.incidents) + 1:04d}"
        self.incidents.incidents[incident] = {"alerts": [f"A-{i.id}" for i in insts], "title": a.title,
                                              "resolved": False}
        self.run.emit("report.incident", {"incident": incident, "alerts": [f"A-{i.id}" for i in insts],
                                          "fingerprints": [i.fingerprint for i in insts], "title": a.title,
                                          "operator": self.operator})
        return ToolResult(True, f"opened {incident}: {a.title} ({len(insts)} alerts)", data={"incident": incident})

    def _known_incident(self, incident: str) -> None:
        if incident not in self.incidents.incidents:
            known = ", ".join(self.incidents.incidents) or "none"
            raise ValueError(f"unknown incident {incident!r} (yours: {known})")

    def _report_rca(self, a: ReportRcaArgs) -> ToolResult:
        self._known_incident(a.incident)
        if a.service not in {s.name for s in self.run.sim.app.services}:
            raise ValueError(f"unknown service {a.service!r}")
        self.run.emit("report.rca", {"incident": a.incident, "service": a.service, "category": a.category,
                                     "artifact": a.artifact, "summary": a.summary, "operator": self.operator})
        return ToolResult(True, f"root cause recorded for {a.incident}: {a.service} ({a.category}, {a.artifact})")

    def _resolve_incident(self, a: ResolveIncidentArgs) -> ToolResult:
        self._known_incident(a.incident)
        if self.incidents.incidents[a.incident].get("resolved"):
            raise ValueError(f"{a.incident} is already resolved")
        self.incidents.incidents[a.incident]["resolved"] = True
        self.run.emit("report.resolved", {"incident": a.incident, "operator": self.operator})
        return ToolResult(True, f"{a.incident} declared resolved")

    # ----------------------------------------------------------------- act

    def _restart_pod(self, a: RestartPodArgs) -> ToolResult:
        self.run.sim.restart_pod(a.pod)
        return ToolResult(True, f'pod "{a.pod}" deleted')

    def _scale(self, a: ScaleArgs) -> ToolResult:
        self.run.sim.scale(a.deployment, a.replicas)
        return ToolResult(True, f"deployment.apps/{a.deployment} scaled to {a.replicas}")

    def _rollback(self, a: RollbackArgs) -> ToolResult:
        rec = self.run.sim.rollback(a.deployment, a.revision)
        return ToolResult(True, f"deployment.apps/{a.deployment} rolled back (now revision {rec.revision}, "
                                f"{rec.id})", data={"change": rec.id, "revision": rec.revision})

    def _deploy_patch(self, a: DeployPatchArgs) -> ToolResult:
        import whatthepatch

        sim = self.run.sim
        files = sim.head_files(a.service)  # a patch is a commit on the repository head
        ahead = sim.commits_ahead(a.service)
        stale = (f"\nhint: the repository head is {ahead} commit{'s' if ahead != 1 else ''} ahead of the deployed "
                 "revision; see get_deploy_history") if ahead else ""
        try:
            patches = list(whatthepatch.parse_patch(a.diff))
        except Exception as exc:  # the library raises several types for garbage input
            raise ValueError(f"error: corrupt patch: {exc}") from None
        if not patches or all(p.changes is None for p in patches):
            raise ValueError("error: no valid patches in input (expected a unified diff with ---/+++ headers "
                             "and @@ hunks)")
        changed: dict[str, str] = {}
        for p in patches:
            path = _strip_ab(p.header.new_path if p.header and p.header.new_path not in (None, "/dev/null")
                             else p.header.old_path if p.header else None)
            if path is None:
                raise ValueError("error: patch without file names")
            base = changed.get(path, files.get(path))
            if base is None:
                raise ValueError(f"error: {path}: does not exist in {a.service}'s source at the repository head"
                                 + stale)
            try:
                lines = whatthepatch.apply_diff(p, base.split("\n"))
            except Exception as exc:
                raise ValueError(f"error: patch failed: {path}\nerror: {path}: patch does not apply ({exc})"
                                 + stale) from None
            changed[path] = "\n".join(lines if isinstance(lines, list) else lines[0])
        rec = sim.deploy_change(a.service, files=changed, summary=a.summary, author=self.operator)
        return ToolResult(True, f"{rec.id}: {rec.detail or 'submitted'}; it rolls out when the build finishes",
                          data={"change": rec.id})

    def _set_config(self, a: SetConfigArgs) -> ToolResult:
        sim = self.run.sim
        if a.service == "flagd":
            from engine.sim.remedy import set_flag as _set_flag

            flag_file = "demo.flagd.json"
            files = sim.head_files("flagd")  # the flag change is committed on the head, like any change
            if flag_file not in files:
                raise ValueError("flagd has no flag file")
            if a.value is None:
                raise ValueError("a flag needs a variant value (e.g. off)")
            doc = json.loads(files[flag_file])
            spec = doc.get("flags", {}).get(a.key)
            if spec is None:
                raise ValueError(f"unknown flag {a.key!r}; flags: {', '.join(sorted(doc.get('flags', {})))}")
            if a.value not in spec.get("variants", {}):
                raise ValueError(f"flag {a.key} has no variant {a.value!r}; variants: "
                                 f"{', '.join(spec.get('variants', {}))}")
            rec = _set_flag(sim, "flagd", flag_file, a.key, a.value, f"flags: {a.key}={a.value}", self.operator)
        else:
            if not ENV_VAR_NAME.fullmatch(a.key):
                raise ValueError(f'The Deployment "{a.service}" is invalid: spec.template.spec.containers[0].env.name: '
                                 f"Invalid value: {json.dumps(a.key)}: a valid environment variable name must consist "
                                 "only of printable ASCII characters other than '='")
            rec = sim.deploy_change(a.service, env={a.key: a.value},
                                    summary=f"config: {'unset ' + a.key if a.value is None else a.key + '=' + a.value}",
                                    author=self.operator)
        return ToolResult(True, f"{rec.id}: {a.service} {a.key} set; rolling out", data={"change": rec.id})

    def _patch_service(self, a: PatchServiceArgs) -> ToolResult:
        if a.selector is None and a.target_port is None:
            raise ValueError("give a selector or a target_port")
        rec = self.run.sim.patch_service(a.service, selector=a.selector, target_port=a.target_port,
                                         author=self.operator)
        return ToolResult(True, f"service/{a.service} patched ({rec.id}: {rec.summary})", data={"change": rec.id})

    def _set_image(self, a: SetImageArgs) -> ToolResult:
        rec = self.run.sim.deploy_change(a.deployment, image=a.image, summary=f"set image {a.image}",
                                         author=self.operator)
        return ToolResult(True, f"deployment.apps/{a.deployment} image updated ({rec.id}); rolling out",
                          data={"change": rec.id})

    def _rollout_restart(self, a: RolloutRestartArgs) -> ToolResult:
        rec = self.run.sim.rollout_restart(a.deployment, author=self.operator)
        return ToolResult(True, f"deployment.apps/{a.deployment} restarted ({rec.id})", data={"change": rec.id})

    def _set_resources(self, a: SetResourcesArgs) -> ToolResult:
        parts = [f"{side} " + ",".join(f"{k}={v}" for k, v in getattr(a.resources, side).model_dump().items()
                                       if v is not None) for side in ("requests", "limits")]
        rec = self.run.sim.deploy_change(a.deployment, resources=a.resources,
                                         summary=f"set resources: {'; '.join(parts)}", author=self.operator)
        return ToolResult(True, f"deployment.apps/{a.deployment} resource requirements updated ({rec.id}); rolling "
                                "out", data={"change": rec.id})

    def _set_probe(self, a: SetProbeArgs) -> ToolResult:
        what = "removed" if a.spec is None else "set"
        spec = None if a.spec is None else Probe.model_validate(a.spec.model_dump())
        summary = f"{a.probe} probe {what}"
        if a.probe == "readiness":
            rec = self.run.sim.deploy_change(a.deployment, readiness_probe=spec, summary=summary,
                                             author=self.operator)
        else:
            rec = self.run.sim.deploy_change(a.deployment, liveness_probe=spec, summary=summary,
                                             author=self.operator)
        return ToolResult(True, f"deployment.apps/{a.deployment} {a.probe} probe {what} ({rec.id}); rolling out",
                          data={"change": rec.id})

    # ----------------------------------------------------------------- workspace

    def _ws_list(self, a: WorkspaceListArgs) -> ToolResult:
        files = self.workspace.files(a.prefix)
        return ToolResult(True, "\n".join(files) if files else "(empty)", data={"files": files})

    def _ws_read(self, a: WorkspaceReadArgs) -> ToolResult:
        return ToolResult(True, self.workspace.read(a.path))

    def _ws_write(self, a: WorkspaceWriteArgs) -> ToolResult:
        size = self.workspace.append(a.path, a.text) if a.append else self.workspace.write(a.path, a.text)
        return ToolResult(True, f"wrote {a.path} ({size} bytes)")


class _Re2Search:
    """A case-insensitive RE2 pattern with the ``search(line)`` the matcher needs."""

    def __init__(self, pattern: str) -> None:
        import re2  # google-re2

        options = re2.Options()
        options.case_sensitive = False
        options.log_errors = False  # the operator gets the error; stderr stays quiet
        options.max_mem = 32 << 20
        try:
            self._rx = re2.compile(pattern, options)
        except re2.error as exc:
            why = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else exc
            raise ValueError(f"invalid or unsupported regular expression {pattern[:200]!r}: {why} (RE2 syntax: no "
                             "backreferences or lookaround)") from None

    def search(self, text: str) -> bool:
        return self._rx.search(text) is not None


def _compile_search(pattern: str, *, regex: bool) -> Any:
    """A case-insensitive matcher: RE2 for regular expressions (linear time), Python's ``re``
    for literal text (an escaped literal cannot backtrack)."""
    if regex:
        return _Re2Search(pattern)
    return re.compile(re.escape(pattern), re.IGNORECASE)


def _strip_ab(path: str | None) -> str | None:
    if path is None:
        return None
    return path[2:] if path.startswith(("a/", "b/")) else path
