"""A Kubernetes API server over a live :class:`~engine.substrate.Substrate` (aiohttp).

:class:`KubeAPIServer` serves what ``kubectl``, the official Python client and k9s use:

* ``/version``, ``/healthz``, legacy discovery (``/api``, ``/apis``, ``/api/v1``,
  ``/apis/<group>/<version>``, :mod:`engine.kube.resources`) for core/v1, apps/v1,
  events.k8s.io/v1, discovery.k8s.io/v1 and metrics.k8s.io/v1beta1 (chaos-mesh.org/v1alpha1
  when asked); ``/openapi/v2`` and ``/openapi/v3`` answer ``404`` (kubectl then says it cannot
  explain, as against a server without OpenAPI);
* get, list (``labelSelector``, ``fieldSelector`` on any field path, ``limit`` and ``continue``,
  ``resourceVersion``) and watch (``watch=1``: a chunked stream of JSON watch events,
  ``resourceVersion``, ``allowWatchBookmarks``, ``timeoutSeconds``, ``sendInitialEvents``) for
  namespaces, nodes, pods, services, endpoints, endpointslices, events (core/v1 and
  events.k8s.io/v1), configmaps, secrets, deployments, replicasets and statefulsets;
* server-side ``Table`` output (:mod:`engine.kube.tables`), also in watches;
* ``pods/log`` (``container``, ``tailLines``, ``previous``, ``sinceSeconds``, ``sinceTime``,
  ``limitBytes``, ``timestamps``, ``follow``) with the kubelet's error texts;
* ``metrics.k8s.io/v1beta1`` PodMetrics and NodeMetrics from :meth:`Substrate.scrape`
  (``kubectl top``);
* writes parsed into typed changes (:mod:`engine.kube.protocol`) and decided by a
  :class:`~engine.kube.protocol.Mutator`: PATCH/PUT of deployments, ``deployments/scale`` and
  ``statefulsets/scale``, PATCH of statefulsets (replicas only), services and nodes, DELETE of
  pods, and custom objects (Chaos Mesh) when served; the answer is the object re-read from the
  substrate. Without a Mutator every write is ``405 MethodNotAllowed``;
* the service proxy (``/api/v1/namespaces/<ns>/services/<name>[:<port>]/proxy/<path>``)
  delegated to a ``proxy`` callable;
* bearer-token authentication (``401 Unauthorized`` without it).

Change detection. The server keeps the last snapshot of every object and diffs it against the
substrate's objects (:meth:`KubeAPIServer.observe`, which a pacing loop calls after each
advance holding the lock, and which the server itself calls before answering when the
substrate's clock has moved, and twice a second while watches are open). Every object that
differs gets the next ``resourceVersion`` (one counter over all kinds, as etcd's revision);
objects gone are ``DELETED`` events; a pod replaced under the same name (a new uid) is a
``DELETED`` and an ``ADDED``. The newest :data:`WATCH_LOG` changes are kept for watches from a
``resourceVersion``; older ones answer ``410 Expired``.

Departures from a real kube-apiserver, by design:

* objects are computed, not stored: a write is a typed change executed by the Mutator (the
  simulator's controllers then act on it), never a stored object; ``metadata.generation``,
  ``managedFields`` and server-side apply are not modelled;
* a ``continue`` token lists the current objects after its key (a real server lists the
  snapshot the first page saw, until compaction);
* secrets are served with their data keys and empty values (the values are never served);
* field selectors accept any field path (a real server accepts only the fields each resource
  indexes) and ``Events`` carry no ``eventTime`` unless the substrate sets one;
* ``pods/log`` timestamps (``timestamps=true``) are the substrate's own (run time on its
  epoch), not moved by ``anchor_wall_clock``; ``follow`` polls the substrate, re-reading
  :data:`FOLLOW_LAG_S` behind its last read (traffic lines appear when their log window
  closes) and sending each line once, so lines may arrive out of order by up to that lag; it
  ends when the container restarts or the pod goes;
* NodeMetrics are the sums of the node's pods' container usage (a real metrics-server reads
  the node's root cgroup, system daemons included); a container's CPU is the rate of
  ``container_cpu_usage_seconds_total`` over the last ~30 s of run time the server sampled
  (the whole container lifetime until two samples exist).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import bisect
import copy
import json
import math
import re
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp import web

from engine.kube import patching, protobuf, tables
from engine.kube.protocol import ApiError, DeploymentChange, Mutator, NodeChange, ReadAudit, Requester
from engine.kube.resources import (
    AUTHORIZATION_GROUP,
    CHAOS_GROUP,
    CHAOS_RESOURCES,
    METRICS_GROUP,
    RESOURCES,
    REVIEWS,
    ServedResource,
    group_list,
    group_versions,
    resource_list,
)
from engine.kubectl.apiobjects import (
    Obj,
    fields_match,
    labels_match,
    link,
    parse_field_selector,
    parse_label_selector,
    served,
)
from engine.substrate import OBJECT_KINDS, Substrate, SubstrateError

MAX_BODY = 64 * 1024
"""Request bodies longer than this (bytes) are refused with ``413``."""
WATCH_LOG = 5_000
"""Changes kept for watches that start from a ``resourceVersion`` (between this and twice it:
each holds the object before and after, a few KiB, so the log stays under ~100 MiB however long
the cluster runs; an older resourceVersion is ``410 Expired``, as after etcd's compaction)."""
BOOKMARK_S = 5.0
"""Wall seconds between ``BOOKMARK`` events of a watch that allows them (a real server: about a minute)."""
POLL_S = 0.5
"""Wall seconds between the server's own looks at the substrate while watches or follows are open."""
FORCE_OBSERVE_S = 2.0
"""Wall seconds after which the server looks at the substrate even if its clock has not moved."""
FOLLOW_LAG_S = 30.0
"""``follow`` re-reads this many run seconds behind its last read (log windows close late)."""
FOLLOW_MEMORY = 20_000
"""Lines a ``follow`` remembers to send each once."""
DEFAULT_WATCH_TIMEOUT_S = 1800.0
"""A watch without ``timeoutSeconds`` ends after this many wall seconds (the real
``--min-request-timeout``)."""
INCIDENT_ANNOTATION = "sre-marathon.io/incident"
BASE_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")
"""Namespaces every cluster has, served besides the ones the objects live in."""

ProxyCall = Callable[[str, str, str | None, str, str, Mapping[str, str], bytes], tuple[int, Mapping[str, str], bytes]]
"""``proxy(namespace, service, port, path, method, query, body) -> (status, headers, body)``:
one request through the service proxy, called holding the lock in a worker thread; ``port``
is the ``:<port>`` of the path (a name or a number) or None, ``path`` starts with ``/``."""

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

_TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


def _status(err: ApiError) -> web.Response:
    return web.json_response(err.status(), status=err.code)


def not_found(res: ServedResource, name: str) -> ApiError:
    """``404 NotFound`` with the real wording: ``pods "x" not found``."""
    details: dict[str, Any] = {"name": name, "kind": res.plural}
    if res.group:
        details["group"] = res.group
    return ApiError(404, "NotFound", f'{res.qualified} "{name}" not found', details)


def _bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def _not_allowed(method: str, path: str) -> ApiError:
    return ApiError(405, "MethodNotAllowed",
                    f"the server does not allow this method on the requested resource ({method} {path})")


def _key(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace", "")), str(meta.get("name", ""))


def _shift(value: Any, delta: timedelta) -> Any:
    if isinstance(value, dict):
        return {k: _shift(v, delta) for k, v in value.items()}
    if isinstance(value, list):
        return [_shift(v, delta) for v in value]
    if isinstance(value, str) and _TS.match(value):
        t = datetime.fromisoformat(value.replace("Z", "+00:00")) + delta
        if "." in value:
            return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        return t.strftime("%Y-%m-%dT%H:%M:%SZ")
    return value


def _rfc3339(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def events_v1(ev: Mapping[str, Any]) -> Obj:
    """A core/v1 Event in its events.k8s.io/v1 form (``pkg/apis/events/v1`` conversion:
    ``involvedObject`` -> ``regarding``, ``message`` -> ``note``, ``source`` ->
    ``deprecatedSource``, timestamps and count -> ``deprecated*``)."""
    source = ev.get("source") or {}
    out: Obj = {"kind": "Event", "apiVersion": "events.k8s.io/v1", "metadata": copy.deepcopy(ev.get("metadata") or {}),
                "eventTime": ev.get("eventTime"), "reason": ev.get("reason", ""),
                "regarding": copy.deepcopy(ev.get("involvedObject") or {}), "note": ev.get("message", ""),
                "type": ev.get("type", ""),
                "reportingController": ev.get("reportingComponent") or source.get("component", ""),
                "reportingInstance": ev.get("reportingInstance") or source.get("host", "")}
    if ev.get("action"):
        out["action"] = ev["action"]
    if ev.get("series"):
        out["series"] = copy.deepcopy(ev["series"])
    if ev.get("related"):
        out["related"] = copy.deepcopy(ev["related"])
    if source:
        out["deprecatedSource"] = dict(source)
    for src, dst in (("firstTimestamp", "deprecatedFirstTimestamp"), ("lastTimestamp", "deprecatedLastTimestamp"),
                     ("count", "deprecatedCount")):
        if ev.get(src) is not None:
            out[dst] = ev[src]
    return out


@dataclass
class _Stored:
    obj: Obj
    text: str
    rv: int


@dataclass(frozen=True)
class _Change:
    rv: int
    kind: str
    type: str  # ADDED, MODIFIED, DELETED
    obj: Obj
    old: Obj | None


class _Query:
    """A request's list options, parsed (selectors raise :class:`ApiError` 400)."""

    def __init__(self, query: Mapping[str, str]) -> None:
        try:
            self.labels = parse_label_selector(query.get("labelSelector") or None)
        except ValueError as exc:
            raise _bad_request(f"unable to parse requirement: {exc}") from None
        try:
            self.fields = parse_field_selector(query.get("fieldSelector") or None)
        except ValueError as exc:
            raise _bad_request(str(exc)) from None

    def match(self, obj: Mapping[str, Any]) -> bool:
        return labels_match((obj.get("metadata") or {}).get("labels"), self.labels) and fields_match(obj, self.fields)


def _int_param(query: Mapping[str, str], name: str) -> int | None:
    raw = query.get(name)
    if raw is None or raw == "":
        return None
    try:
        return int(raw)
    except ValueError:
        raise _bad_request(f'strconv.ParseInt: parsing "{raw}": invalid syntax (parameter {name})') from None


def _bool_param(query: Mapping[str, str], name: str) -> bool:
    return query.get(name, "").lower() in ("1", "true", "t", "yes")


def _accepts_as(accept: str, kind: str) -> bool:
    """The client accepts ``meta.k8s.io/v1`` ``kind`` (``application/json;as=Table;v=v1;g=meta.k8s.io``)."""
    for part in accept.split(","):
        params = {p.split("=", 1)[0].strip(): p.split("=", 1)[1].strip() for p in part.split(";")[1:] if "=" in p}
        if params.get("as") == kind and params.get("g") == "meta.k8s.io" and params.get("v") == "v1":
            return True
    return False


def _table_accept(accept: str) -> bool:
    """The client asks for a ``meta.k8s.io/v1`` Table."""
    return _accepts_as(accept, "Table")


def _encode_continue(rv: int, start: tuple[str, str]) -> str:
    doc = {"v": "meta.k8s.io/v1", "rv": rv, "start": f"{start[0]}/{start[1]}\x00"}
    return base64.urlsafe_b64encode(json.dumps(doc, separators=(",", ":")).encode()).decode().rstrip("=")


def _decode_continue(token: str) -> tuple[str, str]:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        doc = json.loads(raw)
        if not isinstance(doc, dict) or doc.get("v") != "meta.k8s.io/v1" or not isinstance(doc.get("rv"), int):
            raise ValueError("continue key is not valid: incorrect encoded start resourceVersion (version "
                             "meta.k8s.io/v1)")
        start = str(doc.get("start", ""))
        if not start.endswith("\x00") or "/" not in start:
            raise ValueError("continue key is not valid: invalid start key")
        ns, _, name = start[:-1].partition("/")
        return ns, name
    except (binascii.Error, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _bad_request(f"invalid continue token: continue key is not valid: {exc}") from None
    except ValueError as exc:
        raise _bad_request(f"invalid continue token: {exc}") from None


class KubeAPIServer:
    """The Kubernetes API over ``substrate`` (see module docstring).

    Args:
        substrate: the live substrate (the simulator, or any other implementation).
        lock: the lock that guards the substrate; held for every read of it and every write.
        mutator: executes (or refuses) writes; None: writes are ``405``.
        token: the bearer token clients must send (a string for one user, or a mapping
            token -> user name); None: no authentication (every request is ``user``).
        user: the user a single ``token`` authenticates as (``admin``, ``operator``).
        proxy: the service proxy (:data:`ProxyCall`); None: proxy requests are ``503``.
        extra_routes: ``(method, path, handler)`` routes served next to the API (behind the
            same authentication), such as the simulated cluster's clock endpoint.
        epoch: the instant of run time 0 in the objects' timestamps (the simulator's
            ``engine.sim.k8s.EPOCH``); the server's clock is then ``epoch + substrate.now``,
            which AGE cells are computed from. None: the objects carry wall-clock timestamps
            (a real cluster) and the server's clock is the wall clock.
        anchor_wall_clock: with ``epoch``, serve every timestamp moved so that the server's
            clock at construction is the wall clock then (whole seconds), so kubectl's own
            client-side ages (``describe``, ``get events -o wide``) are right for a substrate
            paced at speed 1. Log lines keep their own timestamps.
        chaos: serve the ``chaos-mesh.org/v1alpha1`` StressChaos and NetworkChaos custom
            objects (created and deleted through the Mutator; the administrator's API only).
        tls: :meth:`start` serves HTTPS with a fresh loopback certificate
            (:attr:`certificate`, for the kubeconfig; kubectl sends a token only over TLS);
            False: plain HTTP (for clients that need no credentials, or ``token=None``).
        git_version: the server version ``/version`` reports.
        reads: told of every resource read before it is answered (:class:`engine.kube.protocol.ReadAudit`:
            the operator's API records and charges them); None: reads are free and unrecorded.
    """

    def __init__(self, substrate: Substrate, *, lock: AbstractContextManager[Any], mutator: Mutator | None = None,
                 token: str | Mapping[str, str] | None = None, user: str = "admin", proxy: ProxyCall | None = None,
                 extra_routes: Sequence[tuple[str, str, Handler]] = (), epoch: datetime | None = None,
                 anchor_wall_clock: bool = False, chaos: bool = False, tls: bool = True,
                 git_version: str = "v1.36.2", reads: ReadAudit | None = None) -> None:
        self.substrate = substrate
        self.reads = reads
        self.lock = lock
        self.mutator = mutator
        self.tokens: dict[str, str] | None = (None if token is None else
                                              {token: user} if isinstance(token, str) else dict(token))
        self.user = user
        self.proxy = proxy
        self.extra_routes = list(extra_routes)
        self.epoch = epoch
        self.chaos = chaos
        self.git_version = git_version
        self.tls = tls
        self.certificate: bytes | None = None
        """The PEM certificate :meth:`start` serves with (None before, or without TLS)."""
        self._key: bytes | None = None
        self.resources: tuple[ServedResource, ...] = RESOURCES + REVIEWS + (CHAOS_RESOURCES if chaos else ())
        self.offset = timedelta(0)
        if epoch is not None and anchor_wall_clock:
            wall = datetime.fromtimestamp(int(datetime.now(UTC).timestamp()), UTC)
            self.offset = wall - (epoch + timedelta(seconds=int(substrate.now)))
        self.requests: list[tuple[str, str, str]] = []
        """(method, path with query, Accept header) of every request, in order (bounded to the newest 10,000)."""
        self.url = ""
        self._state = threading.Lock()
        self._objects: dict[str, dict[tuple[str, str], _Stored]] = {}
        self._rv = 0
        self._log: list[_Change] = []
        self._compacted = 0
        self._observed_at: float | None = None
        self._dirty = True
        self._custom: dict[tuple[str, str, str], Obj] = {}
        self._cpu: deque[tuple[float, dict[tuple[str, str, str], float]]] = deque(maxlen=64)
        self._waiters: list[asyncio.Future[None]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._poller: asyncio.Task[None] | None = None

    # ----------------------------------------------------------------- the clock

    def now(self) -> datetime:
        """The server's clock: the instant of the substrate's run time in the served timestamps."""
        if self.epoch is None:
            return datetime.now(UTC)
        return self.epoch + timedelta(seconds=self.substrate.now) + self.offset

    def _run_time(self, t: datetime) -> float:
        """A served instant as substrate run time, seconds."""
        if self.epoch is None:
            return self.substrate.now - (datetime.now(UTC) - t).total_seconds()
        return (t - self.offset - self.epoch).total_seconds()

    # ----------------------------------------------------------------- change detection

    def _read(self) -> dict[str, dict[tuple[str, str], Obj]]:
        objects: dict[str, list[Obj]] = {kind: list(self.substrate.objects(kind)) for kind in OBJECT_KINDS
                                         if kind != "Event"}
        objects["Event"] = list(self.substrate.events())
        for kind, objs in objects.items():
            for o in objs:
                o.setdefault("kind", kind)
        linked = link(objects)
        out: dict[str, dict[tuple[str, str], Obj]] = {}
        for kind, objs in linked.items():
            items: dict[tuple[str, str], Obj] = {}
            for o in objs:
                obj = served(o)
                obj.setdefault("apiVersion", "apps/v1" if kind in ("Deployment", "ReplicaSet", "StatefulSet")
                               else "discovery.k8s.io/v1" if kind == "EndpointSlice" else "v1")
                if kind == "Secret":
                    obj["data"] = {k: "" for k in (obj.get("data") or {})}
                    obj.pop("stringData", None)
                if self.offset:
                    obj = _shift(obj, self.offset)
                items[_key(obj)] = obj
            out[kind] = items
        namespaces = set(BASE_NAMESPACES)
        for items in out.values():
            namespaces |= {ns for ns, _ in items if ns}
        created = min((str((o.get("metadata") or {}).get("creationTimestamp") or "") for o in
                       out.get("Node", {}).values()), default="") or _rfc3339(self.now())
        out["Namespace"] = {
            ("", ns): {"kind": "Namespace", "apiVersion": "v1",
                       "metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns},
                                    "creationTimestamp": created},
                       "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}
            for ns in sorted(namespaces)}
        return out

    def observe(self) -> None:
        """Diff the substrate's objects against the last snapshot and record the changes
        (new ``resourceVersion`` per changed object; watches see them). Call it holding
        :attr:`lock` -- the pacing loop after each advance, a Mutator after a write; the
        server calls it itself when the substrate's clock has moved since the last call."""
        fresh = self._read()
        self._sample_cpu()
        with self._state:
            for kind, items in fresh.items():
                old = self._objects.get(kind, {})
                new: dict[tuple[str, str], _Stored] = {}
                for key, obj in items.items():
                    meta = obj.setdefault("metadata", {})
                    meta.pop("resourceVersion", None)
                    text = json.dumps(obj, sort_keys=True, separators=(",", ":"))
                    prev = old.get(key)
                    if prev is not None and prev.text == text:
                        new[key] = prev
                        continue
                    if prev is not None and (prev.obj.get("metadata") or {}).get("uid") != meta.get("uid"):
                        self._record(kind, "DELETED", prev.obj, prev.obj)
                        prev = None
                    rv = self._record(kind, "ADDED" if prev is None else "MODIFIED", obj,
                                      None if prev is None else prev.obj)
                    new[key] = _Stored(obj, text, rv)
                for key in old.keys() - items.keys():
                    self._record(kind, "DELETED", old[key].obj, old[key].obj)
                self._objects[kind] = new
            self._observed_at = self.substrate.now
            self._dirty = False
        self._wake()

    def _record(self, kind: str, type_: str, obj: Obj, old: Obj | None) -> int:
        self._rv += 1
        obj = copy.deepcopy(obj) if type_ == "DELETED" else obj
        obj.setdefault("metadata", {})["resourceVersion"] = str(self._rv)
        self._log.append(_Change(self._rv, kind, type_, obj, old))
        if len(self._log) >= 2 * WATCH_LOG:
            self._compacted = self._log[-WATCH_LOG - 1].rv
            del self._log[:-WATCH_LOG]
        return self._rv

    def _wake(self) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            return

        def wake() -> None:
            waiters, self._waiters = self._waiters, []
            for fut in waiters:
                if not fut.done():
                    fut.set_result(None)
        try:
            if threading.current_thread() is self._thread:
                wake()
            else:
                loop.call_soon_threadsafe(wake)
        except RuntimeError:  # the loop closed between the check and the call
            pass

    def _refresh_locked(self, force: bool = False) -> None:
        with self.lock:
            if force or self._dirty or self._observed_at != self.substrate.now:
                self.observe()

    async def _refresh(self, force: bool = False) -> None:
        if not force and not self._dirty and self._observed_at == self.substrate.now:
            return
        await asyncio.get_running_loop().run_in_executor(None, self._refresh_locked, force)

    async def _changed(self, timeout: float) -> None:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        with suppress(TimeoutError):
            await asyncio.wait_for(fut, timeout)

    async def _poll(self) -> None:
        loop = asyncio.get_running_loop()
        last = loop.time()
        while True:
            await asyncio.sleep(POLL_S)
            try:
                # A write straight to the substrate (not through this server, not followed by
                # observe()) leaves the clock where it was: look anyway every FORCE_OBSERVE_S.
                force = loop.time() - last >= FORCE_OBSERVE_S
                await self._refresh(force=force)
                if force:
                    last = loop.time()
            except Exception:  # a substrate read failing must not end the poller; the next request reports it
                self._dirty = True

    # ----------------------------------------------------------------- object access

    def objects(self, kind: str) -> list[Obj]:
        """The objects of a substrate kind (``Pod``, ``Event``, ``Namespace``...) as the server
        serves them now (with ``resourceVersion`` and, with ``anchor_wall_clock``, moved
        timestamps), in API-server order; deep copies. Served as last observed: call
        :meth:`observe` (holding the lock) first for the substrate's current state."""
        return copy.deepcopy(sorted(self._items(kind), key=_key))

    def _items(self, kind: str) -> list[Obj]:
        with self._state:
            return [s.obj for s in self._objects.get(kind, {}).values()]

    def _find(self, kind: str, namespace: str, name: str) -> Obj | None:
        with self._state:
            stored = self._objects.get(kind, {}).get((namespace, name))
            return stored.obj if stored is not None else None

    def _resource_version(self) -> str:
        with self._state:
            return str(self._rv)

    def _present(self, res: ServedResource, obj: Obj) -> Obj:
        """An object as this resource serves it (events.k8s.io/v1 conversion)."""
        if res.group == "events.k8s.io":
            return events_v1(obj)
        return obj

    # ----------------------------------------------------------------- app

    def app(self) -> web.Application:
        """The aiohttp application (for an aiohttp test client or a custom runner)."""
        app = web.Application(client_max_size=4 * MAX_BODY)
        for method, path, handler in self.extra_routes:
            app.router.add_route(method, path, self._authenticated(handler))
        app.router.add_route("*", "/{path:.*}", self._handle)
        app.on_startup.append(self._on_startup)
        app.on_cleanup.append(self._on_cleanup)
        return app

    async def _on_startup(self, app: web.Application) -> None:
        self._loop = asyncio.get_running_loop()
        self._poller = asyncio.get_running_loop().create_task(self._poll())

    async def _on_cleanup(self, app: web.Application) -> None:
        if self._poller is not None:
            self._poller.cancel()
            self._poller = None
        self._wake()

    def _who(self, request: web.Request) -> str | None:
        if self.tokens is None:
            return self.user
        header = request.headers.get("Authorization", "")
        if header.startswith("Bearer "):
            return self.tokens.get(header[len("Bearer "):].strip())
        return None

    def _authenticated(self, handler: Handler) -> Handler:
        async def wrapped(request: web.Request) -> web.StreamResponse:
            if self._who(request) is None:
                return _status(ApiError(401, "Unauthorized", "Unauthorized"))
            return await handler(request)
        return wrapped

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.requests.append((request.method, request.path_qs, request.headers.get("Accept", "")))
        if len(self.requests) > 10_000:
            del self.requests[:1000]
        try:
            user = self._who(request)
            if user is None:
                return _status(ApiError(401, "Unauthorized", "Unauthorized"))
            return await self._route(request, user)
        except ApiError as err:
            return _status(err)
        except (ConnectionResetError, asyncio.CancelledError):
            raise
        except Exception as exc:  # never crash the server on one request
            return _status(ApiError(500, "InternalError", f"Internal error occurred: {type(exc).__name__}: {exc}"))

    async def _route(self, request: web.Request, user: str) -> web.StreamResponse:
        parts = [p for p in request.path.split("/") if p]
        method = request.method
        if parts in (["healthz"], ["livez"], ["readyz"]):
            return web.Response(text="ok")
        if parts == ["version"]:
            return web.json_response(self._version())
        if parts[:1] == ["openapi"]:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if parts == ["api"]:
            return web.json_response({"kind": "APIVersions", "versions": ["v1"],
                                      "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0",
                                                                      "serverAddress": request.host}]})
        if parts == ["apis"]:
            return web.json_response(group_list(self.resources))
        if parts[:1] == ["api"] and len(parts) >= 2 and parts[1] == "v1":
            group, version, rest = "", "v1", parts[2:]
        elif parts[:1] == ["apis"] and len(parts) >= 3 and (parts[1], parts[2]) in group_versions(self.resources):
            group, version, rest = parts[1], parts[2], parts[3:]
        elif parts[:1] == ["apis"] and len(parts) == 2 and any(g == parts[1] for g, _ in
                                                               group_versions(self.resources)):
            return web.json_response(next(g for g in group_list(self.resources)["groups"] if g["name"] == parts[1])
                                     | {"kind": "APIGroup", "apiVersion": "v1"})
        else:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if not rest:
            if method != "GET":
                raise _not_allowed(method, request.path)
            return web.json_response(resource_list(group, version, self.resources, writable=self.mutator is not None))
        namespace: str | None = None
        if rest[0] == "namespaces" and len(rest) >= 3:
            namespace, rest = rest[1], rest[2:]
        res = next((r for r in self.resources if r.group == group and r.version == version and r.plural == rest[0]),
                   None)
        if res is None or (namespace is not None and not res.namespaced):
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        name = rest[1] if len(rest) >= 2 else None
        sub = rest[2] if len(rest) >= 3 else None
        if sub is not None and not (sub == "proxy" and res.plural == "services") and len(rest) > 3:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if group == METRICS_GROUP:
            if method != "GET":
                raise _not_allowed(method, request.path)
            await self._audit(request, user, "metrics", res, name)
            return await self._metrics(request, res, namespace, name)
        if group == CHAOS_GROUP:
            return await self._custom_objects(request, user, res, namespace, name)
        if group == AUTHORIZATION_GROUP:
            if method != "POST" or name is not None:
                raise _not_allowed(method, request.path)
            return await self._access_review(request)
        if sub == "log" and res.plural == "pods" and name is not None:
            if method != "GET":
                raise _not_allowed(method, request.path)
            await self._audit(request, user, "log", res, name)
            return await self._logs(request, namespace or "default", name)
        if sub == "proxy" and res.plural == "services" and name is not None:
            return await self._service_proxy(request, namespace or "default", name, "/" + "/".join(rest[3:]))
        if sub == "scale" and res.plural in ("deployments", "statefulsets") and name is not None:
            return await self._scale(request, user, res, namespace or "default", name)
        if sub is not None:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if method == "GET":
            verb = "get" if name is not None else "watch" if _bool_param(request.query, "watch") else "list"
            await self._audit(request, user, verb, res, name)
            await self._refresh()
            if name is None:
                if _bool_param(request.query, "watch"):
                    return await self._watch(request, res, namespace)
                return self._list(request, res, namespace)
            return self._get(request, res, namespace, name)
        if method in ("PATCH", "PUT", "DELETE", "POST"):
            return await self._write(request, user, res, namespace, name)
        raise _not_allowed(method, request.path)

    def _streaming(self) -> bool:
        """Whether open watches and follows go on (:meth:`engine.kube.protocol.ReadAudit.streaming`)."""
        return self.reads is None or self.reads.streaming()

    async def _audit(self, request: web.Request, user: str, verb: str, res: ServedResource, name: str | None) -> None:
        """Tell :attr:`reads` of one resource read (it may refuse it with an ApiError)."""
        if self.reads is None:
            return
        resource = f"{res.plural}.{res.group}" if res.group else res.plural
        if name is not None:
            resource += f"/{name}"
        req = Requester(user=user, incident=None, method=request.method, path=request.path_qs,
                        content_type=request.headers.get("Accept", ""))
        reads = self.reads
        await asyncio.to_thread(reads, verb, resource, req)

    def _version(self) -> dict[str, str]:
        major, minor, _ = self.git_version.lstrip("v").split(".", 2)
        return {"major": major, "minor": minor, "gitVersion": self.git_version, "gitCommit": "",
                "gitTreeState": "clean", "buildDate": "2025-08-01T00:00:00Z", "goVersion": "go1.24.5",
                "compiler": "gc", "platform": "linux/amd64"}

    # ----------------------------------------------------------------- get and list

    def _respond(self, request: web.Request, res: ServedResource, stored: list[Obj], *, single: bool,
                 list_meta: Mapping[str, Any]) -> web.Response:
        objs = [self._present(res, o) for o in stored]
        if _table_accept(request.headers.get("Accept", "")):
            include = request.query.get("includeObject", "Metadata")
            if include not in ("None", "Metadata", "Object"):
                raise _bad_request(f'includeObject: Unsupported value: "{include}": supported values: '
                                   '"None", "Metadata", "Object"')
            doc = tables.table(res.kind, objs, self.now(), include=include,
                               list_meta={} if single else list_meta, printed=stored)
            if single:
                doc["metadata"] = {"resourceVersion": (objs[0].get("metadata") or {}).get("resourceVersion", "")}
            return web.json_response(doc, dumps=_dumps)
        accept = request.headers.get("Accept", "")
        if single and _accepts_as(accept, "PartialObjectMetadata"):
            return web.json_response(tables.partial_metadata(objs[0]), dumps=_dumps)
        if not single and _accepts_as(accept, "PartialObjectMetadataList"):
            return web.json_response({"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
                                      "metadata": dict(list_meta),
                                      "items": [tables.partial_metadata(o) for o in objs]}, dumps=_dumps)
        if single:
            return web.json_response(objs[0], dumps=_dumps)
        items = [{k: v for k, v in o.items() if k not in ("kind", "apiVersion")} for o in objs]
        return web.json_response({"kind": f"{res.kind}List", "apiVersion": res.api_version,
                                  "metadata": dict(list_meta), "items": items}, dumps=_dumps)

    def _get(self, request: web.Request, res: ServedResource, namespace: str | None, name: str) -> web.Response:
        obj = self._find(res.source, namespace or "" if res.namespaced else "", name)
        if obj is None:
            raise not_found(res, name)
        return self._respond(request, res, [obj], single=True, list_meta={})

    def _select(self, res: ServedResource, namespace: str | None, q: _Query) -> list[Obj]:
        items = sorted(self._items(res.source), key=_key)
        out = []
        for obj in items:
            if res.namespaced and namespace is not None and _key(obj)[0] != namespace:
                continue
            if q.match(self._present(res, obj)):
                out.append(obj)
        return out

    def _list(self, request: web.Request, res: ServedResource, namespace: str | None) -> web.Response:
        q = _Query(request.query)
        limit = _int_param(request.query, "limit")
        rv = self._resource_version()
        items = self._select(res, namespace, q)
        token = request.query.get("continue")
        if token:
            start = _decode_continue(token)
            items = [o for o in items if _key(o) > start]
        meta: dict[str, Any] = {"resourceVersion": rv}
        if limit is not None and limit > 0 and len(items) > limit:
            page = items[:limit]
            meta["continue"] = _encode_continue(int(rv), _key(page[-1]))
            meta["remainingItemCount"] = len(items) - limit
            items = page
        return self._respond(request, res, items, single=False, list_meta=meta)

    # ----------------------------------------------------------------- watch

    async def _watch(self, request: web.Request, res: ServedResource, namespace: str | None) -> web.StreamResponse:
        q = _Query(request.query)
        timeout = _int_param(request.query, "timeoutSeconds")
        bookmarks = _bool_param(request.query, "allowWatchBookmarks")
        as_table = _table_accept(request.headers.get("Accept", ""))
        include = request.query.get("includeObject", "Metadata")
        raw_rv = request.query.get("resourceVersion", "")
        send_initial = request.query.get("sendInitialEvents")
        start_rv: int | None = None
        if raw_rv not in ("", "0"):
            try:
                start_rv = int(raw_rv)
            except ValueError:
                raise _bad_request(f'invalid resource version "{raw_rv}"') from None
        if send_initial is not None and send_initial.lower() in ("1", "true") and start_rv is not None:
            start_rv = None
        resp = web.StreamResponse(status=200, headers={"Content-Type": "application/json",
                                                       "Cache-Control": "no-cache, private"})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        headers = True

        def in_scope(obj: Obj | None) -> bool:
            if obj is None:
                return False
            if res.namespaced and namespace is not None and _key(obj)[0] != namespace:
                return False
            return q.match(self._present(res, obj))

        async def send(type_: str, obj: Obj) -> None:
            nonlocal headers
            view = self._present(res, obj)
            payload: Obj = view
            if as_table and type_ not in ("BOOKMARK", "ERROR"):
                payload = tables.table(res.kind, [view], self.now(), include=include, headers=headers,
                                       list_meta={"resourceVersion": (view.get("metadata") or {}).get(
                                           "resourceVersion", "")}, printed=[obj])
                headers = False
            await resp.write((json.dumps({"type": type_, "object": payload}, separators=(",", ":")) + "\n").encode())

        async def bookmark(rv: int, initial_end: bool = False) -> None:
            meta: Obj = {"resourceVersion": str(rv)}
            if initial_end:
                meta["annotations"] = {"k8s.io/initial-events-end": "true"}
            await resp.write((json.dumps({"type": "BOOKMARK", "object": {
                "kind": res.kind, "apiVersion": res.api_version, "metadata": meta}}, separators=(",", ":"))
                              + "\n").encode())

        loop = asyncio.get_running_loop()
        deadline = loop.time() + (timeout if timeout is not None and timeout > 0 else DEFAULT_WATCH_TIMEOUT_S)
        try:
            with self._state:
                last = self._rv
                compacted = self._compacted
                initial = [s.obj for _, s in sorted(self._objects.get(res.source, {}).items())] \
                    if start_rv is None else []
            if start_rv is not None and start_rv < compacted:
                err = ApiError(410, "Expired", f"too old resource version: {start_rv} ({last})")
                await resp.write((json.dumps({"type": "ERROR", "object": err.status()}) + "\n").encode())
                return resp
            for obj in initial:
                if in_scope(obj):
                    await send("ADDED", obj)
            if start_rv is not None:
                last = start_rv
            if bookmarks and send_initial is not None and send_initial.lower() in ("1", "true"):
                await bookmark(last, initial_end=True)
            next_bookmark = loop.time() + BOOKMARK_S
            while loop.time() < deadline:
                if request.transport is None or request.transport.is_closing() or not self._streaming():
                    break
                with self._state:
                    since = bisect.bisect_right(self._log, last, key=lambda c: c.rv)
                    changes = [c for c in self._log[since:] if c.kind == res.source]
                    newest = self._rv
                for c in changes:
                    new_in, old_in = in_scope(c.obj) and c.type != "DELETED", in_scope(c.old)
                    if c.type == "DELETED":
                        if old_in:
                            await send("DELETED", c.obj)
                    elif new_in and (c.type == "ADDED" or not old_in):
                        await send("ADDED", c.obj)
                    elif new_in:
                        await send("MODIFIED", c.obj)
                    elif old_in:
                        await send("DELETED", c.obj)
                    last = c.rv
                last = max(last, newest)
                if bookmarks and loop.time() >= next_bookmark:
                    await bookmark(last)
                    next_bookmark = loop.time() + BOOKMARK_S
                wait = min(deadline, next_bookmark if bookmarks else deadline) - loop.time()
                await self._changed(max(0.05, min(wait, POLL_S)))
                await self._refresh()
        except ConnectionError:
            return resp
        except Exception as exc:  # the stream is open: end it with an ERROR event, as the real server does
            err = ApiError(500, "InternalError", f"Internal error occurred: {type(exc).__name__}: {exc}")
            with suppress(ConnectionError):
                await resp.write((json.dumps({"type": "ERROR", "object": err.status()}) + "\n").encode())
        with suppress(ConnectionError):
            await resp.write_eof()
        return resp

    # ----------------------------------------------------------------- logs

    async def _logs(self, request: web.Request, namespace: str, name: str) -> web.StreamResponse:
        await self._refresh()
        pods = next(r for r in self.resources if r.plural == "pods" and r.group == "")
        pod = self._find("Pod", namespace, name)
        if pod is None:
            raise not_found(pods, name)
        query = request.query
        containers = [c.get("name") for c in (pod.get("spec") or {}).get("containers") or []]
        inits = [c.get("name") for c in (pod.get("spec") or {}).get("initContainers") or []]
        container = query.get("container") or (containers[0] if len(containers) == 1 else "")
        if not container:
            raise _bad_request(f"a container name must be specified for pod {name}, choose one of: "
                               f"[{' '.join(str(c) for c in containers)}]")
        if container not in containers + inits:
            raise _bad_request(f"container {container} is not valid for pod {name}")
        if container != containers[0]:
            raise _bad_request(f'container "{container}" in pod "{name}" is not the application container: '
                               "the simulated cluster keeps logs of the application container only")
        timestamps = _bool_param(query, "timestamps")
        previous = _bool_param(query, "previous")
        tail = _int_param(query, "tailLines")
        limit_bytes = _int_param(query, "limitBytes")
        since_s = _int_param(query, "sinceSeconds")
        since: float | None = None
        if since_s is not None:
            if since_s < 1:
                raise ApiError(422, "Invalid", f"PodLogOptions \"{name}\" is invalid: sinceSeconds: Invalid "
                                               f"value: {since_s}: must be greater than 0")
            since = self.substrate.now - since_s
        elif query.get("sinceTime"):
            try:
                t = datetime.fromisoformat(query["sinceTime"].replace("Z", "+00:00"))
            except ValueError:
                raise _bad_request(f'parsing time "{query["sinceTime"]}" as "2006-01-02T15:04:05Z07:00": '
                                   "cannot parse") from None
            since = self._run_time(t if t.tzinfo else t.replace(tzinfo=UTC))
        follow = _bool_param(query, "follow") and not previous
        uid = (pod.get("metadata") or {}).get("uid")

        def read(since_t: float | None, tail_n: int | None) -> tuple[list[str], float]:
            with self.lock:
                lines = (self.substrate.logs(name, tail=tail_n, previous=previous, since=since_t, timestamps=True)
                         if timestamps else self.substrate.logs(name, tail=tail_n, previous=previous, since=since_t))
                return list(lines), self.substrate.now

        loop = asyncio.get_running_loop()
        try:
            lines, read_at = await loop.run_in_executor(None, read, since, tail)
        except SubstrateError as exc:
            message = str(exc)
            if message.endswith("not found") and message.startswith("pods "):
                raise not_found(pods, name) from None
            raise _bad_request(message) from None
        text = "".join(line + "\n" for line in lines)
        if not follow:
            body = text.encode()
            if limit_bytes is not None and limit_bytes > 0:
                body = body[:limit_bytes]
            return web.Response(body=body, content_type="text/plain")
        resp = web.StreamResponse(status=200, headers={"Content-Type": "text/plain"})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        sent = 0

        async def emit(chunk: str) -> bool:
            nonlocal sent
            data = chunk.encode()
            if limit_bytes is not None and limit_bytes > 0:
                data = data[:max(0, limit_bytes - sent)]
            sent += len(data)
            if data:
                await resp.write(data)
            return limit_bytes is None or limit_bytes <= 0 or sent < limit_bytes

        try:
            if not await emit(text):
                return resp
            # Traffic lines exist once their log window closes, after the clock passed them:
            # re-read FOLLOW_LAG_S behind the last read and send only lines not sent yet.
            recent: deque[str] = deque(lines[-FOLLOW_MEMORY:], maxlen=FOLLOW_MEMORY)
            seen = set(recent)
            floor = read_at  # what the first read left out (tailLines, sinceSeconds) stays out
            while request.transport is not None and not request.transport.is_closing() and self._streaming():
                await self._changed(POLL_S)
                if self.substrate.now == read_at:
                    continue
                await self._refresh()
                current = self._find("Pod", namespace, name)
                if current is None or (current.get("metadata") or {}).get("uid") != uid:
                    break
                try:
                    new, read_at_next = await loop.run_in_executor(None, read, max(floor, read_at - FOLLOW_LAG_S),
                                                                    None)
                except SubstrateError:
                    break
                read_at = read_at_next
                fresh = []
                for line in new:
                    if line in seen:
                        continue
                    fresh.append(line)
                    if len(recent) == FOLLOW_MEMORY:
                        seen.discard(recent[0])
                    recent.append(line)
                    seen.add(line)
                if fresh and not await emit("".join(line + "\n" for line in fresh)):
                    break
            await resp.write_eof()
        except ConnectionError:
            pass
        except Exception:  # the stream is open: a read that fails ends it (the kubelet's stream ends too)
            with suppress(ConnectionError):
                await resp.write_eof()
        return resp

    # ----------------------------------------------------------------- metrics.k8s.io

    def _sample_cpu(self) -> None:
        """Remember the containers' CPU counters (called holding the lock), at most every 5 s of run time."""
        t = self.substrate.now
        if self._cpu and t - self._cpu[-1][0] < 5.0:
            return
        counters = {}
        for s in self.substrate.scrape():
            if s.name == "container_cpu_usage_seconds_total":
                counters[(s.labels.get("namespace", ""), s.labels.get("pod", ""), s.labels.get("container", ""))] = \
                    float(s.value)
        if self._cpu and t < self._cpu[-1][0]:
            self._cpu.clear()
        self._cpu.append((t, counters))

    def _usage(self) -> tuple[float, dict[tuple[str, str, str], tuple[float, float, float]]]:
        """(run time, {(namespace, pod, container): (cpu cores, memory bytes, window seconds)}), holding the lock."""
        self._sample_cpu()
        t = self.substrate.now
        memory: dict[tuple[str, str, str], float] = {}
        cpu_now: dict[tuple[str, str, str], float] = {}
        for s in self.substrate.scrape():
            key = (s.labels.get("namespace", ""), s.labels.get("pod", ""), s.labels.get("container", ""))
            if s.name == "container_memory_working_set_bytes":
                memory[key] = float(s.value)
            elif s.name == "container_cpu_usage_seconds_total":
                cpu_now[key] = float(s.value)
        older = [(ts, c) for ts, c in self._cpu if t - ts >= 1.0]
        base = min(older, key=lambda x: abs((t - x[0]) - 30.0)) if older else None
        out = {}
        for key, value in cpu_now.items():
            if base is not None and key in base[1] and value >= base[1][key]:
                window = t - base[0]
                cores = (value - base[1][key]) / window
            else:
                window = self._container_age(key, t)
                cores = value / window if window > 0 else 0.0
            out[key] = (max(cores, 0.0), memory.get(key, 0.0), window)
        return t, out

    def _container_age(self, key: tuple[str, str, str], t: float) -> float:
        pod = self._find("Pod", key[0], key[1])
        for cs in ((pod or {}).get("status") or {}).get("containerStatuses") or []:
            if cs.get("name") == key[2]:
                started = ((cs.get("state") or {}).get("running") or {}).get("startedAt")
                if started:
                    return max(1.0, t - self._run_time(datetime.fromisoformat(started.replace("Z", "+00:00"))))
        return max(1.0, t)

    async def _metrics(self, request: web.Request, res: ServedResource, namespace: str | None,
                       name: str | None) -> web.Response:
        await self._refresh()
        q = _Query(request.query)

        def usage() -> tuple[float, dict[tuple[str, str, str], tuple[float, float, float]]]:
            with self.lock:
                return self._usage()

        _, per_container = await asyncio.get_running_loop().run_in_executor(None, usage)
        stamp = _rfc3339(self.now())
        items: list[Obj] = []
        if res.kind == "PodMetrics":
            for pod in sorted(self._items("Pod"), key=_key):
                ns, pod_name = _key(pod)
                if (namespace is not None and ns != namespace) or (name is not None and pod_name != name):
                    continue
                if not q.match(pod):
                    continue
                containers = [(c, v) for (cns, cpod, c), v in sorted(per_container.items())
                              if cns == ns and cpod == pod_name and c]
                if not containers:
                    continue
                window = max(v[2] for _, v in containers)
                meta = pod.get("metadata") or {}
                items.append({"metadata": {"name": pod_name, "namespace": ns, "creationTimestamp": stamp,
                                           "labels": dict(meta.get("labels") or {})},
                              "timestamp": stamp, "window": _go_duration(window),
                              "containers": [{"name": c, "usage": {"cpu": _nanocores(v[0]),
                                                                   "memory": _kibibytes(v[1])}}
                                             for c, v in containers]})
        else:
            nodes_of = {_key(p): (p.get("spec") or {}).get("nodeName") for p in self._items("Pod")}
            for node in sorted(self._items("Node"), key=_key):
                node_name = _key(node)[1]
                if (name is not None and node_name != name) or not q.match(node):
                    continue
                cores = mem = 0.0
                window = 0.0
                for (cns, cpod, _c), v in per_container.items():
                    if nodes_of.get((cns, cpod)) == node_name:
                        cores, mem, window = cores + v[0], mem + v[1], max(window, v[2])
                meta = node.get("metadata") or {}
                items.append({"metadata": {"name": node_name, "creationTimestamp": stamp,
                                           "labels": dict(meta.get("labels") or {})},
                              "timestamp": stamp, "window": _go_duration(window or 30.0),
                              "usage": {"cpu": _nanocores(cores), "memory": _kibibytes(mem)}})
        if name is not None:
            if not items:
                raise ApiError(404, "NotFound", f'{res.plural}.{METRICS_GROUP} "{name}" not found',
                               {"name": name, "group": METRICS_GROUP, "kind": res.plural})
            return web.json_response({"kind": res.kind, "apiVersion": f"{METRICS_GROUP}/v1beta1", **items[0]},
                                     dumps=_dumps)
        return web.json_response({"kind": f"{res.kind}List", "apiVersion": f"{METRICS_GROUP}/v1beta1",
                                  "metadata": {}, "items": items}, dumps=_dumps)

    # ----------------------------------------------------------------- service proxy

    async def _service_proxy(self, request: web.Request, namespace: str, target: str, path: str) -> web.Response:
        service, _, port = target.partition(":")
        await self._refresh()
        if self._find("Service", namespace, service) is None:
            raise not_found(next(r for r in self.resources if r.plural == "services"), service)
        if self.proxy is None:  # as RBAC without services/proxy answers: not a symptom of the service
            raise ApiError(403, "Forbidden", f'services "{target}" is forbidden: the service proxy '
                                             f'(services/proxy) is not served on this API',
                           {"name": target, "kind": "services"})
        body = await self._body(request)
        proxy = self.proxy

        def call() -> tuple[int, Mapping[str, str], bytes]:
            with self.lock:
                return proxy(namespace, service, port or None, path, request.method, dict(request.query), body)

        status, headers, payload = await asyncio.get_running_loop().run_in_executor(None, call)
        return web.Response(status=status, headers=dict(headers), body=payload)

    # ----------------------------------------------------------------- writes

    async def _body(self, request: web.Request, *, protobuf_ok: bool = False) -> bytes:
        if not protobuf_ok and request.headers.get("Content-Type", "").startswith(protobuf.PROTOBUF):
            raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - "
                                                        "accepted media types include: application/json, "
                                                        "application/json-patch+json, application/merge-patch+json, "
                                                        "application/strategic-merge-patch+json")
        if request.content_length is not None and request.content_length > MAX_BODY:
            raise ApiError(413, "RequestEntityTooLarge", f"Request entity too large: limit is {MAX_BODY}")
        data = bytearray()
        async for chunk in request.content.iter_chunked(16384):
            data += chunk
            if len(data) > MAX_BODY:
                raise ApiError(413, "RequestEntityTooLarge", f"Request entity too large: limit is {MAX_BODY}")
        return bytes(data)

    def _requester(self, request: web.Request, user: str, body: bytes) -> Requester:
        """Who sent a write: the token's user; the incident from ``Impersonate-User``
        (``kubectl --as``), else the ``fieldManager`` parameter (``--field-manager``; kubectl's
        defaults ``kubectl`` and ``kubectl-<command>`` name none), else the
        ``sre-marathon.io/incident`` annotation in the body."""
        manager = request.query.get("fieldManager") or ""
        if manager == "kubectl" or manager.startswith("kubectl-"):
            manager = ""  # kubectl's own default managers (kubectl-set, kubectl-rollout...) name no incident
        incident = request.headers.get("Impersonate-User") or manager or None
        if incident is None:
            incident = _annotation_in(body)
        return Requester(user=user, incident=incident, method=request.method, path=request.path_qs,
                         content_type=request.headers.get("Content-Type", ""), body=body.decode("utf-8", "replace"))

    async def _locked(self, fn: Callable[[], Any]) -> Any:
        def run() -> Any:
            with self.lock:
                try:
                    return fn()
                finally:
                    self.observe()
        return await asyncio.get_running_loop().run_in_executor(None, run)

    def _require_mutator(self, request: web.Request) -> Mutator:
        if self.mutator is None:
            raise _not_allowed(request.method, request.path)
        return self.mutator

    def _app_object(self, res: ServedResource, namespace: str | None, name: str | None) -> Obj:
        if name is None:
            raise ApiError(405, "MethodNotAllowed", f"the server does not allow this method on the requested "
                                                    f"resource ({res.qualified})")
        obj = self._find(res.source, namespace or "" if res.namespaced else "", name)
        if obj is None:
            raise not_found(res, name)
        return obj

    async def _write(self, request: web.Request, user: str, res: ServedResource, namespace: str | None,
                     name: str | None) -> web.Response:
        mutator = self._require_mutator(request)
        method = request.method
        verb = {"PATCH": "patch", "PUT": "update", "DELETE": "delete", "POST": "create"}[method]
        if verb not in res.writes:
            raise _not_allowed(method, request.path)
        body = await self._body(request)
        await self._refresh()
        before = self._app_object(res, namespace, name)
        assert name is not None
        req = self._requester(request, user, body)
        ns = namespace or ""
        if res.plural == "pods" and method == "DELETE":
            await self._locked(lambda: mutator.delete_pod(name, req))
            after = self._find("Pod", ns, name)
            if after is not None and (after.get("metadata") or {}).get("uid") == \
                    (before.get("metadata") or {}).get("uid"):
                return web.json_response(after, dumps=_dumps)
            return web.json_response({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                                      "details": {"name": name, "kind": "pods",
                                                  "uid": (before.get("metadata") or {}).get("uid", "")}})
        after_obj = _updated(before, method, request.headers.get("Content-Type", ""), body, res, name)
        if res.plural == "deployments":
            replicasets = [rs for rs in self._items("ReplicaSet") if _key(rs)[0] == ns]
            change = patching.deployment_change(before, after_obj, replicasets)
            if not change.empty:
                await self._locked(lambda: mutator.change_deployment(change, req))
        elif res.plural == "statefulsets":
            new_replicas = patching.statefulset_change(before, after_obj)
            if new_replicas is not None:
                n = new_replicas
                await self._locked(lambda: mutator.scale_statefulset(name, n, req))
        elif res.plural == "services":
            selector, target_port = patching.service_change(before, after_obj)
            if selector is not None or target_port is not None:
                await self._locked(lambda: mutator.patch_service(name, selector, target_port, req))
        elif res.plural == "nodes":
            node_change: NodeChange = patching.node_change(before, after_obj)
            if node_change.unschedulable is not None or node_change.taints is not None:
                await self._locked(lambda: mutator.change_node(node_change, req))
        else:
            raise _not_allowed(method, request.path)
        after = self._find(res.source, ns if res.namespaced else "", name)
        if after is None:
            raise not_found(res, name)
        return web.json_response(self._present(res, after), dumps=_dumps)

    async def _scale(self, request: web.Request, user: str, res: ServedResource, namespace: str,
                     name: str) -> web.Response:
        await self._refresh()
        obj = self._app_object(res, namespace, name)
        scale = _scale_of(obj)
        if request.method == "GET":
            return web.json_response(scale, dumps=_dumps)
        if request.method not in ("PATCH", "PUT"):
            raise _not_allowed(request.method, request.path)
        mutator = self._require_mutator(request)
        body = await self._body(request)
        req = self._requester(request, user, body)
        scale_res = ServedResource("Scale", f"{res.plural}", res.group, res.version, True, "")
        new_scale = _updated(scale, request.method, request.headers.get("Content-Type", ""), body, scale_res, name)
        changed = patching.scale_change(scale, new_scale)
        replicas = scale["spec"]["replicas"] if changed is None else changed
        if replicas != scale["spec"]["replicas"]:
            if res.plural == "deployments":
                change = DeploymentChange(deployment=name, replicas=replicas)
                await self._locked(lambda: mutator.change_deployment(change, req))
            else:
                await self._locked(lambda: mutator.scale_statefulset(name, replicas, req))
        return web.json_response(_scale_of(self._app_object(res, namespace, name)), dumps=_dumps)

    async def _custom_objects(self, request: web.Request, user: str, res: ServedResource, namespace: str | None,
                              name: str | None) -> web.Response:
        method = request.method
        ns = namespace or ""
        key_ns = namespace
        if method == "GET":
            if _bool_param(request.query, "watch"):
                raise _not_allowed("WATCH", request.path)
            items = sorted((o for (plural, o_ns, _), o in self._custom.items()
                            if plural == res.plural and (key_ns is None or o_ns == key_ns)), key=_key)
            if name is not None:
                found = next((o for o in items if _key(o)[1] == name), None)
                if found is None:
                    raise not_found(res, name)
                return self._respond(request, res, [found], single=True, list_meta={})
            q = _Query(request.query)
            return self._respond(request, res, [o for o in items if q.match(o)], single=False,
                                 list_meta={"resourceVersion": self._resource_version()})
        mutator = self._require_mutator(request)
        body = await self._body(request)
        req = self._requester(request, user, body)
        if method == "POST" and name is None and namespace is not None:
            try:
                obj = json.loads(body or b"{}")
            except json.JSONDecodeError as exc:
                raise _bad_request(f"error decoding request body: {exc}") from None
            if not isinstance(obj, dict):
                raise _bad_request("the body of the request is not an object")
            obj_name = str((obj.get("metadata") or {}).get("name") or "")
            if not obj_name:
                raise ApiError(422, "Invalid", f'{res.kind}.{CHAOS_GROUP} "" is invalid: metadata.name: '
                                               "Required value: name or generateName is required")
            if (res.plural, ns, obj_name) in self._custom:
                raise ApiError(409, "AlreadyExists", f'{res.qualified} "{obj_name}" already exists',
                               {"name": obj_name, "group": CHAOS_GROUP, "kind": res.plural})
            stored = await self._locked(lambda: mutator.create_custom(CHAOS_GROUP, res.version, res.plural, ns,
                                                                      obj, req))
            stored = dict(stored)
            stored.setdefault("apiVersion", res.api_version)
            stored.setdefault("kind", res.kind)
            stored.setdefault("metadata", {}).setdefault("namespace", ns)
            stored["metadata"].setdefault("creationTimestamp", _rfc3339(self.now()))
            self._custom[(res.plural, ns, obj_name)] = stored
            return web.json_response(stored, status=201, dumps=_dumps)
        if method == "DELETE" and name is not None and namespace is not None:
            if (res.plural, ns, name) not in self._custom:
                raise not_found(res, name)
            await self._locked(lambda: mutator.delete_custom(CHAOS_GROUP, res.version, res.plural, ns, name, req))
            gone = self._custom.pop((res.plural, ns, name))
            return web.json_response(gone, dumps=_dumps)
        raise _not_allowed(method, request.path)

    async def _access_review(self, request: web.Request) -> web.Response:
        """``SelfSubjectAccessReview``: allowed for every read this server serves, and for the
        writes it routes when a Mutator is configured (which may still refuse the write itself:
        the answer is about routing, not the Mutator's policy). Departure: no RBAC."""
        body = await self._body(request, protobuf_ok=True)
        try:
            if request.headers.get("Content-Type", "").startswith(protobuf.PROTOBUF):
                review = protobuf.access_review(body)
            else:
                review = json.loads(body or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError, ValueError) as exc:
            raise _bad_request(f"error decoding request body: {exc}") from None
        if not isinstance(review, dict):
            raise _bad_request("the body of the request is not an object")
        spec = review.get("spec") or {}
        attrs = spec.get("resourceAttributes")
        allowed, reason = True, "reads are allowed"
        if isinstance(attrs, dict):
            verb, group = str(attrs.get("verb", "")), str(attrs.get("group", ""))
            plural, sub = str(attrs.get("resource", "")), str(attrs.get("subresource", ""))
            res = next((r for r in self.resources if r.plural == plural and r.group == group), None)
            if res is None:
                allowed, reason = False, f"the server does not serve {plural}.{group}".rstrip(".")
            elif verb in ("get", "list", "watch") and res.group != AUTHORIZATION_GROUP:
                allowed = not sub or any(s[0] == sub and verb in s[4] + s[5] for s in res.subresources)
                reason = "reads are allowed" if allowed else f"no {verb} on {plural}/{sub}"
            else:
                routed = any(s[0] == sub and verb in s[5] for s in res.subresources) if sub else verb in res.writes
                if res.group == CHAOS_GROUP:
                    routed = verb in ("create", "delete") and not sub
                allowed = routed and self.mutator is not None
                reason = ("routed to the cluster's admission (which may still refuse it)" if allowed
                          else "this API does not accept that write")
        elif isinstance(spec.get("nonResourceAttributes"), dict):
            allowed = str(spec["nonResourceAttributes"].get("verb", "get")) == "get"
            reason = "non-resource reads are allowed" if allowed else "non-resource writes are not served"
        out = {"kind": "SelfSubjectAccessReview", "apiVersion": f"{AUTHORIZATION_GROUP}/v1",
               "metadata": {"creationTimestamp": None}, "spec": spec,
               "status": {"allowed": allowed, "reason": reason, **({} if allowed else {"denied": True})}}
        return web.json_response(out, status=201)

    # ----------------------------------------------------------------- running

    def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Serve in a background thread with its own event loop; returns the base URL
        (``https://127.0.0.1:PORT``, ``http://`` without TLS).

        Raises:
            RuntimeError: already started, or the port cannot be bound.
        """
        if self._thread is not None:
            raise RuntimeError("API server already started")
        loop = asyncio.new_event_loop()
        ready = threading.Event()
        error: list[BaseException] = []

        context = None
        if self.tls:
            from engine.kube.tls import loopback_certificate, server_context

            self.certificate, self._key = loopback_certificate()
            context = server_context(self.certificate, self._key)

        async def setup() -> None:
            runner = web.AppRunner(self.app(), access_log=None, shutdown_timeout=1.0)
            await runner.setup()
            site = web.TCPSite(runner, host, port, ssl_context=context)
            await site.start()
            self._runner = runner
            self.url = f"{'https' if context else 'http'}://{host}:{runner.addresses[0][1]}"

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(setup())
            except BaseException as exc:  # reported to the caller of start()
                error.append(exc)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            if self._runner is not None:
                loop.run_until_complete(self._runner.cleanup())
            loop.close()

        self._loop = loop
        self._thread = threading.Thread(target=run, name="kube-api-server", daemon=True)
        self._thread.start()
        ready.wait(timeout=30)
        if error:
            self._thread = None
            raise RuntimeError(f"API server failed to start: {error[0]}")
        return self.url

    def stop(self) -> None:
        """Stop a server started with :meth:`start` (open watches and follows end)."""
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=30)
        self._thread = None
        self._loop = None

    @contextmanager
    def running(self, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
        """``with api.running() as url:`` -- :meth:`start` and :meth:`stop` around a block."""
        url = self.start(host, port)
        try:
            yield url
        finally:
            self.stop()


# ----------------------------------------------------------------- helpers


def _dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))


def _go_duration(seconds: float) -> str:
    """A window as Go prints a ``time.Duration`` of whole seconds (``30s``, ``1m30s``)."""
    total = max(0, round(seconds))
    h, rest = divmod(total, 3600)
    m, s = divmod(rest, 60)
    if h:
        return f"{h}h{m}m{s}s"
    if m:
        return f"{m}m{s}s"
    return f"{s}s"


def _nanocores(cores: float) -> str:
    """CPU cores as metrics-server writes them: nanocores (``12345678n``)."""
    return f"{max(0, math.floor(cores * 1e9))}n"


def _kibibytes(value: float) -> str:
    """Memory bytes as metrics-server writes them: KiB (``123456Ki``)."""
    return f"{max(0, int(value // 1024))}Ki"


def _annotation_in(body: bytes) -> str | None:
    """The ``sre-marathon.io/incident`` annotation a write's body sets (an object, a merge or
    strategic patch, or a JSON patch's ``add``/``replace`` of it)."""
    try:
        doc = json.loads(body) if body else None
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return None
    if isinstance(doc, dict):
        value = ((doc.get("metadata") or {}).get("annotations") or {}).get(INCIDENT_ANNOTATION)
        return str(value) if value else None
    if isinstance(doc, list):
        escaped = INCIDENT_ANNOTATION.replace("~", "~0").replace("/", "~1")
        for op in doc:
            if isinstance(op, dict) and op.get("op") in ("add", "replace"):
                if op.get("path") == f"/metadata/annotations/{escaped}" and op.get("value"):
                    return str(op["value"])
                if op.get("path") == "/metadata/annotations" and isinstance(op.get("value"), dict):
                    value = op["value"].get(INCIDENT_ANNOTATION)
                    if value:
                        return str(value)
    return None


def _updated(before: Obj, method: str, content_type: str, body: bytes, res: ServedResource, name: str) -> Obj:
    """The object a PUT (the body, with a resourceVersion precondition) or a PATCH
    (:func:`engine.kube.patching.apply_patch`) asks for."""
    if method == "PUT":
        try:
            doc = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
            raise _bad_request(f"error decoding request body: {type(exc).__name__}: {exc}") from None
        if not isinstance(doc, dict):
            raise _bad_request("the body of the request is not an object")
        sent_rv = (doc.get("metadata") or {}).get("resourceVersion")
        current_rv = (before.get("metadata") or {}).get("resourceVersion")
        if sent_rv and current_rv and str(sent_rv) != str(current_rv):
            raise ApiError(409, "Conflict", f'Operation cannot be fulfilled on {res.qualified} "{name}": the object '
                                            "has been modified; please apply your changes to the latest version "
                                            "and try again", {"name": name, "kind": res.plural,
                                                              **({"group": res.group} if res.group else {})})
        return doc
    try:
        patched: Obj = patching.apply_patch(copy.deepcopy(before), content_type.split(";")[0].strip(), body)
    except (ValueError, UnicodeDecodeError) as exc:  # a patch module's own decoding error, not an ApiError
        raise _bad_request(f"error decoding patch: {exc}") from None
    return patched


def _scale_of(obj: Obj) -> Obj:
    """The ``autoscaling/v1`` Scale of a Deployment or StatefulSet."""
    from engine.kubectl.apiobjects import selector_string

    meta = obj.get("metadata") or {}
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return {"kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                         if k in meta},
            "spec": {"replicas": int(spec.get("replicas", 0))},
            "status": {"replicas": int(status.get("replicas", 0)),
                       "selector": selector_string(spec.get("selector"))}}


__all__ = ["BASE_NAMESPACES", "INCIDENT_ANNOTATION", "MAX_BODY", "KubeAPIServer", "ProxyCall", "events_v1",
           "not_found"]
