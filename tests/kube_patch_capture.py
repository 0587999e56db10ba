"""Capture the PATCH requests real ``kubectl`` sends, as fixtures for ``tests/test_kube_patching.py``.

Run ``PYTHONPATH=. python tests/kube_patch_capture.py [KUBECTL]`` to rewrite
``tests/data/kube_patches/*.json``. It serves the online-boutique simulator's objects (seed 1)
through :class:`engine.kube.apiserver.KubeAPIServer` (plain HTTP, no token) with a Mutator that
executes nothing, records every PATCH body as the server reads it, and runs each command in
:data:`COMMANDS`. The Deployment ``frontend`` is given three revisions (ReplicaSets 1, 2 and 3,
the current one with image ``:v0.10.7``, revision 2 with ``:v0.10.5``) so ``rollout undo`` has a
previous revision to go back to. ``kubectl apply`` runs with ``--validate=false``: without it
kubectl refuses to apply against a server that has no OpenAPI document ("failed to download
openapi").

Each fixture is ``{"command": [...], "kubectl": "<version>", "requests": [{"method", "path",
"content_type", "body"}], "before": <the object kubectl read>}``.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from aiohttp import web

from engine.kube.apiserver import KubeAPIServer
from engine.kubectl.apiobjects import served

OUT = Path(__file__).parent / "data" / "kube_patches"
APP = "online-boutique"
NS = "online-boutique"

COMMANDS: dict[str, list[str]] = {
    "scale": ["scale", "deployment/frontend", "--replicas=3"],
    "set_image": ["set", "image", "deployment/frontend", "server=example.com/frontend:v2"],
    "set_env": ["set", "env", "deployment/frontend", "ENABLE_PROFILER=1", "NEW_VAR=x"],
    "set_env_unset": ["set", "env", "deployment/frontend", "ENABLE_PROFILER-"],
    "set_resources": ["set", "resources", "deployment/frontend", "--limits=cpu=500m,memory=256Mi",
                      "--requests=cpu=250m"],
    "rollout_restart": ["rollout", "restart", "deployment/frontend"],
    "rollout_undo": ["rollout", "undo", "deployment/frontend"],
    "rollout_undo_to_revision": ["rollout", "undo", "deployment/frontend", "--to-revision=1"],
    "cordon": ["cordon", "node-a-1"],
    "uncordon": ["uncordon", "node-b-1"],
    "taint": ["taint", "nodes", "node-a-1", "dedicated=db:NoSchedule"],
    "taint_remove": ["taint", "nodes", "node-b-1", "maintenance:NoExecute-"],
    "patch_merge": ["patch", "deployment/frontend", "--type=merge",
                    "-p", '{"spec":{"template":{"spec":{"containers":[{"name":"server","image":"x:1"}]}}}}'],
    "patch_json": ["patch", "deployment/frontend", "--type=json",
                   "-p", '[{"op":"replace","path":"/spec/replicas","value":4}]'],
    "patch_strategic": ["patch", "deployment/frontend", "--type=strategic",
                        "-p", '{"spec":{"template":{"spec":{"containers":[{"name":"server",'
                              '"env":[{"name":"PORT","value":"9090"}]}]}}}}'],
    "patch_service_selector": ["patch", "service/frontend",
                               "-p", '{"spec":{"selector":{"app":"frontend-v2"}}}'],
    "label": ["label", "deployment/frontend", "team=web"],
    "annotate": ["annotate", "deployment/frontend", "kubernetes.io/change-cause=manual fix"],
    "label_node": ["label", "node/node-a-1", "disk=ssd"],
    "rollout_pause": ["rollout", "pause", "deployment/frontend"],
    "set_env_from_secret": ["set", "env", "deployment/frontend", "--from=secret/frontend-secrets"],
    "apply": ["apply", "--validate=false", "-f", "-"],
    "apply_server_side": ["apply", "--server-side", "--validate=false", "-f", "-"],
}
STDIN: dict[str, str] = {"apply": "manifest", "apply_server_side": "manifest"}
"""Commands that read a manifest on stdin: the Deployment as served, without status, with a new
image and one more env var (what an operator editing the YAML and applying it sends)."""


def _objects() -> dict[str, list[dict[str, Any]]]:
    from engine.run.substrates import open_substrate

    sub = open_substrate(APP, seed=1)
    objects = {kind: [served({"kind": kind, **o}) for o in sub.objects(kind)]
               for kind in ("Deployment", "ReplicaSet", "Node", "Service", "StatefulSet", "Pod")}
    deploy = next(d for d in objects["Deployment"] if d["metadata"]["name"] == "frontend")
    rs1 = next(r for r in objects["ReplicaSet"] if r["metadata"]["name"].startswith("frontend-"))
    # The simulator's ReplicaSets carry only the containers' names and images; a real one
    # carries the Deployment's whole template plus the pod-template-hash label.
    hash1 = rs1["metadata"]["labels"]["pod-template-hash"]
    rs1["metadata"]["ownerReferences"][0]["uid"] = deploy["metadata"]["uid"]  # kubectl matches owners by uid
    rs1["spec"]["template"] = copy.deepcopy(deploy["spec"]["template"])
    rs1["spec"]["template"]["metadata"]["labels"]["pod-template-hash"] = hash1
    rs1["spec"]["selector"] = {"matchLabels": {**deploy["spec"]["selector"]["matchLabels"],
                                               "pod-template-hash": hash1}}
    image = deploy["spec"]["template"]["spec"]["containers"][0]["image"].rsplit(":", 1)[0]
    for rev, tag, hash_ in ((2, "v0.10.5", "5d8f9c7b4"), (3, "v0.10.7", "6c4b8d9f2")):
        rs = copy.deepcopy(rs1)
        rs["metadata"]["name"] = f"frontend-{hash_}"
        rs["metadata"]["uid"] = f"00000000-0000-0000-0000-00000000000{rev}"
        rs["metadata"]["labels"]["pod-template-hash"] = hash_
        rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"] = str(rev)
        rs["spec"]["selector"]["matchLabels"]["pod-template-hash"] = hash_
        rs["spec"]["template"]["metadata"]["labels"]["pod-template-hash"] = hash_
        rs["spec"]["template"]["spec"]["containers"][0]["image"] = f"{image}:{tag}"
        objects["ReplicaSet"].append(rs)
        if rev == 3:
            deploy["spec"]["template"]["spec"]["containers"][0]["image"] = f"{image}:{tag}"
            deploy["metadata"]["annotations"]["deployment.kubernetes.io/revision"] = "3"
    rs1["spec"]["replicas"] = 0
    objects["Secret"] = [{"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                          "metadata": {"name": "frontend-secrets", "namespace": NS},
                          "data": {"API_KEY": "c2VjcmV0"}}]
    node_b = next(n for n in objects["Node"] if n["metadata"]["name"] == "node-b-1")
    node_b["spec"] = {"unschedulable": True,
                      "taints": [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"},
                                 {"key": "maintenance", "effect": "NoExecute"}]}
    return objects


def _manifest(objects: dict[str, list[dict[str, Any]]]) -> str:
    deploy = copy.deepcopy(next(d for d in objects["Deployment"] if d["metadata"]["name"] == "frontend"))
    deploy.pop("status", None)
    for key in ("uid", "creationTimestamp", "generation", "resourceVersion"):
        deploy["metadata"].pop(key, None)
    server = deploy["spec"]["template"]["spec"]["containers"][0]
    server["image"] = "example.com/frontend:v3"
    server["env"].append({"name": "LOG_LEVEL", "value": "debug"})
    return json.dumps(deploy)


class _AcceptEverything:
    """A :class:`engine.kube.protocol.Mutator` that executes nothing: the server answers every
    write with the object unchanged, which is all kubectl needs to finish its command."""

    def change_deployment(self, change: Any, req: Any) -> None:
        """Accepted, not executed."""

    def scale_statefulset(self, name: str, replicas: int, req: Any) -> None:
        """Accepted, not executed."""

    def delete_pod(self, name: str, req: Any) -> None:
        """Accepted, not executed."""

    def patch_service(self, name: str, selector: Any, target_port: Any, req: Any) -> None:
        """Accepted, not executed."""

    def change_node(self, change: Any, req: Any) -> None:
        """Accepted, not executed."""

    def create_custom(self, group: str, version: str, plural: str, namespace: str, obj: Any,
                      req: Any) -> dict[str, Any]:
        """Accepted, not executed."""
        return dict(obj)

    def delete_custom(self, group: str, version: str, plural: str, namespace: str, name: str, req: Any) -> None:
        """Accepted, not executed."""


class CapturingAPI(KubeAPIServer):
    """:class:`KubeAPIServer` over fixed objects that records every PATCH (method, path, Content-Type,
    body) as it reads the body."""

    def __init__(self, objects: dict[str, list[dict[str, Any]]]) -> None:
        from tests.test_kubectl import StaticSubstrate

        super().__init__(StaticSubstrate(objects), lock=threading.Lock(),  # type: ignore[arg-type]
                         mutator=_AcceptEverything(), tls=False)
        self.patches: list[dict[str, Any]] = []
        with self.lock:
            self.observe()

    async def _body(self, request: web.Request, *, protobuf_ok: bool = False) -> bytes:
        body = await super()._body(request, protobuf_ok=protobuf_ok)
        if request.method == "PATCH":
            self.patches.append({"method": "PATCH", "path": request.path_qs,
                                 "content_type": request.headers.get("Content-Type", ""),
                                 "body": body.decode("utf-8")})
        return body


def main(kubectl: str) -> None:
    """Run every command in :data:`COMMANDS` against a capturing server and write the fixtures."""
    objects = _objects()
    version = json.loads(subprocess.run([kubectl, "version", "--client", "-o", "json"], capture_output=True,
                                        text=True, check=True).stdout)["clientVersion"]["gitVersion"]
    OUT.mkdir(parents=True, exist_ok=True)
    for name, args in COMMANDS.items():
        api = CapturingAPI(copy.deepcopy(objects))
        stdin = _manifest(objects) if name in STDIN else None
        with api.running() as url:
            proc = subprocess.run([kubectl, "--server", url, "-n", NS, *args], capture_output=True, text=True,
                                  timeout=60, input=stdin)
        if not api.patches:
            raise SystemExit(f"{name}: kubectl sent no PATCH (rc {proc.returncode}): {proc.stderr.strip()}")
        path = api.patches[0]["path"].split("?")[0].split("/")
        plural_at = -3 if path[-1] == "scale" else -2
        kind = {"deployments": "Deployment", "nodes": "Node", "services": "Service"}[path[plural_at]]
        before = next(o for o in objects[kind] if o["metadata"]["name"] == path[plural_at + 1])
        fixture = {"command": ["kubectl", *args], "kubectl": version, "requests": api.patches, "before": before}
        if kind == "Deployment":
            fixture["replicasets"] = [r for r in objects["ReplicaSet"]
                                      if r["metadata"]["name"].startswith("frontend-")]
        (OUT / f"{name}.json").write_text(json.dumps(fixture, indent=1, sort_keys=True) + "\n")
        print(name, proc.returncode, proc.stdout.strip() or proc.stderr.strip())


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.test_kubectl's StaticSubstrate
    main(sys.argv[1] if len(sys.argv) > 1 else str(Path(sys.executable).parent / "kubectl"))
