"""A small, read-only Kubernetes API server over a fixed set of objects (aiohttp).

It exists so tests can run the real ``kubectl`` against simulator objects (and, later,
exercise a real-cluster substrate without a cluster). It implements what ``kubectl get``
and ``kubectl describe`` use:

* discovery: ``/version``, ``/api``, ``/apis``, ``/api/v1``, ``/apis/<group>/<version>``
  (legacy discovery documents; a client asking for aggregated discovery gets the legacy
  form, as from an older server, and falls back);
* ``get`` and ``list`` for the resources in :data:`engine.kubectl.apiobjects.RESOURCES` --
  pods, services, events, nodes, deployments, replicasets, statefulsets, endpointslices,
  leases -- namespaced (``/api/v1/namespaces/<ns>/pods``) and across namespaces
  (``/api/v1/pods``), with ``labelSelector`` and ``fieldSelector`` (``=``, ``==``, ``!=``
  on any field path, which covers ``involvedObject.*`` for events and ``spec.nodeName``/
  ``status.phase`` for pods) and ``limit`` (everything fits in one page);
* namespaces: every namespace the objects live in, plus ``default``, ``kube-system`` and
  ``kube-node-lease``, all ``Active`` (kubectl checks the namespace after a 404);
* lists in etcd order (by namespace, then name), items without ``kind``/``apiVersion``
  as a real server sends them; objects in served form
  (:func:`engine.kubectl.apiobjects.served`: API defaults filled in);
* content negotiation: a request that accepts only server-side ``Table`` output gets
  ``406 Not Acceptable``; one that also accepts plain JSON gets the plain list, so kubectl
  prints its client-side fallback columns, as against a server without Table support;
* errors as ``Status`` objects (``404 NotFound`` with kubectl's wording, ``405`` for
  anything but GET).

Not implemented: writes, watches, pagination tokens, authentication, OpenAPI, Tables.
Every request is recorded in :attr:`FakeKubeAPI.requests`.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from aiohttp import web

from engine.kubectl.apiobjects import (
    RESOURCES,
    Obj,
    Resource,
    fields_match,
    labels_match,
    parse_field_selector,
    parse_label_selector,
    served,
)


def _status(code: int, reason: str, message: str, details: Mapping[str, Any] | None = None) -> web.Response:
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "code": code}
    if details:
        body["details"] = dict(details)
    return web.json_response(body, status=code)


class FakeKubeAPI:
    """A read-only API server holding ``objects`` (kind -> API dicts); see module docstring.

    Args:
        objects: the objects to serve, keyed by kind (``Pod``, ``Deployment``...).
        git_version: the server version ``/version`` reports.
    """

    def __init__(self, objects: Mapping[str, Sequence[Mapping[str, Any]]], *, git_version: str = "v1.30.4") -> None:
        self.git_version = git_version
        self.objects: dict[str, list[Obj]] = {}
        for kind, objs in objects.items():
            items = [served({"kind": kind, **dict(o)}) for o in objs]
            self.objects[kind] = sorted(items, key=lambda o: ((o.get("metadata") or {}).get("namespace", ""),
                                                              (o.get("metadata") or {}).get("name", "")))
        namespaces = {"default", "kube-system", "kube-node-lease"}
        namespaces |= {(o.get("metadata") or {}).get("namespace", "") for objs in self.objects.values() for o in objs}
        if "Namespace" not in self.objects:
            self.objects["Namespace"] = [
                {"apiVersion": "v1", "kind": "Namespace",
                 "metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns},
                              "creationTimestamp": "2025-12-06T09:00:00Z"},
                 "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}
                for ns in sorted(namespaces - {""})]
        self.requests: list[tuple[str, str, str]] = []
        """(method, path with query, Accept header) of every request, in order."""
        self.url = ""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None

    # ----------------------------------------------------------------- app

    def app(self) -> web.Application:
        """The aiohttp application (for an aiohttp test client or a custom runner)."""
        app = web.Application()
        app.router.add_route("*", "/{path:.*}", self._handle)
        return app

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        accept = request.headers.get("Accept", "")
        self.requests.append((request.method, request.path_qs, accept))
        if request.method != "GET":
            return _status(405, "MethodNotAllowed", f"the server does not allow this method on the requested "
                                                    f"resource ({request.method} {request.path})")
        parts = [p for p in request.path.split("/") if p]
        if parts == ["version"]:
            return web.json_response(self._version())
        if parts == ["api"]:
            host = request.host
            return web.json_response({"kind": "APIVersions", "versions": ["v1"],
                                      "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0",
                                                                      "serverAddress": host}]})
        if parts == ["apis"]:
            return web.json_response(self._group_list())
        if parts[:1] == ["api"] and len(parts) >= 2:
            group, version, rest = "", parts[1], parts[2:]
        elif parts[:1] == ["apis"] and len(parts) >= 3:
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            return _status(404, "NotFound", "the server could not find the requested resource")
        resources = [r for r in RESOURCES if r.group == group and r.version == version]
        if not resources:
            return _status(404, "NotFound", "the server could not find the requested resource")
        if not rest:
            return web.json_response(self._resource_list(group, version, resources))
        namespace = None
        if rest[0] == "namespaces" and len(rest) >= 3:
            namespace, rest = rest[1], rest[2:]
        res = next((r for r in resources if r.plural == rest[0]), None)
        if res is None or len(rest) > 2 or (namespace is not None and not res.namespaced):
            return _status(404, "NotFound", "the server could not find the requested resource")
        if "as=Table" in accept and not any(
                part.strip().split(";")[0] in ("application/json", "*/*", "application/*")
                and "as=" not in part for part in accept.split(",")):
            return _status(406, "NotAcceptable", "only plain JSON is served; Table output is not supported")
        if len(rest) == 2:
            return self._get(res, namespace, rest[1])
        return self._list(res, namespace, request.query.get("labelSelector"), request.query.get("fieldSelector"))

    def _version(self) -> dict[str, str]:
        major, minor, _ = self.git_version.lstrip("v").split(".", 2)
        return {"major": major, "minor": minor, "gitVersion": self.git_version, "gitCommit": "",
                "gitTreeState": "clean", "buildDate": "2025-01-01T00:00:00Z", "goVersion": "go1.22.5", "compiler": "gc",
                "platform": "linux/amd64"}

    @staticmethod
    def _group_list() -> dict[str, Any]:
        groups: dict[str, str] = {}
        for r in RESOURCES:
            if r.group:
                groups.setdefault(r.group, r.version)
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
            {"name": g, "versions": [{"groupVersion": f"{g}/{v}", "version": v}],
             "preferredVersion": {"groupVersion": f"{g}/{v}", "version": v}} for g, v in groups.items()]}

    @staticmethod
    def _resource_list(group: str, version: str, resources: Sequence[Resource]) -> dict[str, Any]:
        return {"kind": "APIResourceList", "apiVersion": "v1",
                "groupVersion": f"{group}/{version}" if group else version,
                "resources": [{"name": r.plural, "singularName": r.singular, "namespaced": r.namespaced,
                               "kind": r.kind, "verbs": ["get", "list"], "shortNames": list(r.short_names)}
                              for r in resources]}

    def _in_namespace(self, res: Resource, namespace: str | None) -> list[Obj]:
        items = self.objects.get(res.kind, [])
        if namespace is None or not res.namespaced:
            return items
        return [o for o in items if (o.get("metadata") or {}).get("namespace") == namespace]

    def _get(self, res: Resource, namespace: str | None, name: str) -> web.Response:
        for obj in self._in_namespace(res, namespace):
            if (obj.get("metadata") or {}).get("name") == name:
                return web.json_response(obj)
        qualified = f"{res.plural}.{res.group}" if res.group else res.plural
        details: dict[str, Any] = {"name": name, "kind": res.plural}
        if res.group:
            details["group"] = res.group
        return _status(404, "NotFound", f'{qualified} "{name}" not found', details)

    def _list(self, res: Resource, namespace: str | None, label_selector: str | None,
              field_selector: str | None) -> web.Response:
        try:
            reqs = parse_label_selector(label_selector)
            terms = parse_field_selector(field_selector)
        except ValueError as exc:
            return _status(400, "BadRequest", str(exc))
        items = []
        for obj in self._in_namespace(res, namespace):
            if labels_match((obj.get("metadata") or {}).get("labels"), reqs) and fields_match(obj, terms):
                items.append({k: v for k, v in obj.items() if k not in ("kind", "apiVersion")})
        return web.json_response({"kind": f"{res.kind}List", "apiVersion": res.api_version,
                                  "metadata": {"resourceVersion": "1"}, "items": items},
                                 dumps=lambda o: json.dumps(o, separators=(",", ":")))

    # ----------------------------------------------------------------- running

    def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Serve in a background thread; returns the base URL (``http://127.0.0.1:PORT``).

        Raises:
            RuntimeError: already started.
        """
        if self._thread is not None:
            raise RuntimeError("fake API server already started")
        loop = asyncio.new_event_loop()
        ready = threading.Event()
        error: list[BaseException] = []

        async def setup() -> None:
            runner = web.AppRunner(self.app(), access_log=None)
            await runner.setup()
            site = web.TCPSite(runner, host, port)
            await site.start()
            self._runner = runner
            self.url = f"http://{host}:{runner.addresses[0][1]}"

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
        self._thread = threading.Thread(target=run, name="fake-kube-api", daemon=True)
        self._thread.start()
        ready.wait(timeout=30)
        if error:
            raise RuntimeError(f"fake API server failed to start: {error[0]}")
        return self.url

    def stop(self) -> None:
        """Stop a server started with :meth:`start`."""
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=30)
        self._thread = None
        self._loop = None

    @contextmanager
    def running(self) -> Iterator[str]:
        """``with api.running() as url:`` -- :meth:`start` and :meth:`stop` around a block."""
        url = self.start()
        try:
            yield url
        finally:
            self.stop()
