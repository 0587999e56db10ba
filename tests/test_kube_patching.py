"""engine.kube.patching: the three patch types as kube-apiserver applies them, on the bodies real
kubectl sends (tests/data/kube_patches, captured by tests/kube_patch_capture.py), and what a
patched Deployment, Node or Service changed."""

from __future__ import annotations

import copy
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.apps.model import Probe, ResourceList, Resources
from engine.kube.patching import (
    JSON_PATCH,
    MAX_DEPTH,
    MERGE_PATCH,
    STRATEGIC_MERGE_PATCH,
    apply_patch,
    deployment_change,
    node_change,
    scale_change,
    service_change,
    statefulset_change,
)
from engine.kube.protocol import KEEP, ApiError
from engine.kubectl.apiobjects import served

DATA = Path(__file__).parent / "data" / "kube_patches"


def fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / f"{name}.json").read_text())
    return data


def applied(name: str) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(fixture, before, after) for a captured kubectl command."""
    fx = fixture(name)
    (req,) = fx["requests"]
    return fx, fx["before"], apply_patch(fx["before"], req["content_type"], req["body"])


def container(obj: dict[str, Any], i: int = 0) -> dict[str, Any]:
    c: dict[str, Any] = obj["spec"]["template"]["spec"]["containers"][i]
    return c


def env(obj: dict[str, Any]) -> list[tuple[str, str | None]]:
    return [(e["name"], e.get("value")) for e in container(obj).get("env", [])]


# ----------------------------------------------------------------- what kubectl sends


def test_fixtures_record_kubectl_and_its_patch_types() -> None:
    kinds = {name: fixture(name)["requests"][0]["content_type"] for name in
             ("scale", "set_image", "set_env", "rollout_restart", "rollout_undo", "cordon", "taint", "label",
              "patch_merge", "patch_json")}
    assert kinds == {"scale": MERGE_PATCH, "set_image": STRATEGIC_MERGE_PATCH, "set_env": STRATEGIC_MERGE_PATCH,
                     "rollout_restart": STRATEGIC_MERGE_PATCH, "rollout_undo": JSON_PATCH,
                     "cordon": STRATEGIC_MERGE_PATCH, "taint": STRATEGIC_MERGE_PATCH, "label": MERGE_PATCH,
                     "patch_merge": MERGE_PATCH, "patch_json": JSON_PATCH}
    assert fixture("set_image")["kubectl"].startswith("v1.")
    # rollout undo: a JSON patch replacing the whole template and the Deployment's annotations
    ops = json.loads(fixture("rollout_undo")["requests"][0]["body"])
    assert [(o["op"], o["path"]) for o in ops] == [("replace", "/spec/template"), ("replace", "/metadata/annotations")]
    assert fixture("scale")["requests"][0]["path"].endswith("/deployments/frontend/scale")


def test_set_image_changes_only_the_image() -> None:
    fx, before, after = applied("set_image")
    assert container(after)["image"] == "example.com/frontend:v2"
    expected = copy.deepcopy(before)
    container(expected)["image"] = "example.com/frontend:v2"
    assert after == expected
    change = deployment_change(before, after, fx["replicasets"])
    assert change.image == "example.com/frontend:v2"
    assert (change.env, change.resources, change.replicas, change.rollback_to, change.other) == ({}, None, None,
                                                                                               None, ())
    assert change.readiness_probe == KEEP and not change.restart and not change.empty


def test_set_env_sets_in_order_and_unset_deletes() -> None:
    fx, before, after = applied("set_env")
    names = [n for n, _ in env(before)]
    assert env(after) == [*[(n, "1" if n == "ENABLE_PROFILER" else v) for n, v in env(before)], ("NEW_VAR", "x")]
    assert deployment_change(before, after, fx["replicasets"]).env == {"ENABLE_PROFILER": "1", "NEW_VAR": "x"}
    fx, before, after = applied("set_env_unset")
    assert [n for n, _ in env(after)] == [n for n in names if n != "ENABLE_PROFILER"]
    assert deployment_change(before, after, fx["replicasets"]).env == {"ENABLE_PROFILER": None}


def test_set_resources_merges_requests_and_limits() -> None:
    fx, before, after = applied("set_resources")
    assert container(after)["resources"] == {"limits": {"cpu": "500m", "memory": "256Mi"},
                                             "requests": {"cpu": "250m", "memory": "64Mi"}}
    change = deployment_change(before, after, fx["replicasets"])
    assert change.resources == Resources(requests=ResourceList(cpu="250m", memory="64Mi"),
                                         limits=ResourceList(cpu="500m", memory="256Mi"))
    assert change.image is None and change.other == ()


def test_rollout_restart_is_a_restart() -> None:
    fx, before, after = applied("rollout_restart")
    assert "kubectl.kubernetes.io/restartedAt" in after["spec"]["template"]["metadata"]["annotations"]
    change = deployment_change(before, after, fx["replicasets"])
    assert change.restart and change.other == () and change.image is None


@pytest.mark.parametrize(("name", "revision", "tag"), [("rollout_undo", 2, "v0.10.5"),
                                                       ("rollout_undo_to_revision", 1, "v0.10.6")])
def test_rollout_undo_is_a_rollback_not_an_image_change(name: str, revision: int, tag: str) -> None:
    fx, before, after = applied(name)
    assert container(after)["image"].endswith(":" + tag)
    assert after["metadata"]["annotations"] == {"deployment.kubernetes.io/revision": "3"}
    assert "pod-template-hash" not in after["spec"]["template"]["metadata"]["labels"]
    change = deployment_change(before, after, fx["replicasets"])
    assert change.rollback_to == revision
    assert (change.image, change.env, change.other) == (None, {}, ())
    # the same template without the ReplicaSets is an image change
    assert deployment_change(before, after, []).image == container(after)["image"]
    # a ReplicaSet another Deployment owns is not a revision of this one
    foreign = copy.deepcopy(fx["replicasets"])
    for rs in foreign:
        rs["metadata"]["ownerReferences"][0]["name"] = "checkoutservice"
    assert deployment_change(before, after, foreign).rollback_to is None


def test_json_and_merge_patch_from_kubectl_patch() -> None:
    fx, before, after = applied("patch_json")
    assert after["spec"]["replicas"] == 4
    assert deployment_change(before, after, fx["replicasets"]).replicas == 4
    # --type=merge replaces the containers list: everything but name and image is gone
    fx, before, after = applied("patch_merge")
    assert after["spec"]["template"]["spec"]["containers"] == [{"name": "server", "image": "x:1"}]
    change = deployment_change(before, after, fx["replicasets"])
    assert change.image == "x:1" and change.readiness_probe is None and change.liveness_probe is None
    assert change.env == {n: None for n, _ in env(before)}
    assert "spec.template.spec.containers[0].ports" in change.other
    # --type=strategic merges the containers by name and env by name
    fx, before, after = applied("patch_strategic")
    assert dict(env(after))["PORT"] == "9090" and len(env(after)) == len(env(before))
    assert deployment_change(before, after, fx["replicasets"]).env == {"PORT": "9090"}


def test_client_side_apply_is_a_strategic_patch_and_server_side_apply_is_refused() -> None:
    fx, before, after = applied("apply")
    assert "kubectl.kubernetes.io/last-applied-configuration" in after["metadata"]["annotations"]
    change = deployment_change(before, after, fx["replicasets"])
    assert (change.image, change.env, change.other) == ("example.com/frontend:v3", {"LOG_LEVEL": "debug"}, ())
    fx = fixture("apply_server_side")
    req = fx["requests"][0]
    assert req["content_type"] == "application/apply-patch+yaml"
    with pytest.raises(ApiError) as err:
        apply_patch(fx["before"], req["content_type"], req["body"])
    assert (err.value.code, err.value.reason) == (415, "UnsupportedMediaType")


def test_what_the_simulated_cluster_does_not_model_is_other() -> None:
    fx, before, after = applied("rollout_pause")
    assert deployment_change(before, after, fx["replicasets"]).other == ("spec.paused",)
    fx, before, after = applied("set_env_from_secret")
    assert container(after)["env"][-1] == {"name": "API_KEY", "valueFrom": {"secretKeyRef": {
        "key": "API_KEY", "name": "frontend-secrets"}}}
    change = deployment_change(before, after, fx["replicasets"])
    assert (change.env, change.other) == ({}, ("spec.template.spec.containers[0].env[API_KEY]",))


def test_a_put_that_leaves_defaults_out_changes_nothing() -> None:
    fx, before, _ = applied("set_image")
    manifest = copy.deepcopy(before)
    del manifest["spec"]["progressDeadlineSeconds"], manifest["spec"]["strategy"]
    del container(manifest)["readinessProbe"]["httpGet"]["scheme"], container(manifest)["ports"][0]["protocol"]
    assert deployment_change(before, manifest, fx["replicasets"]).empty
    _, svc, _ = applied("patch_service_selector")
    manifest = copy.deepcopy(svc)
    del manifest["spec"]["ports"][0]["protocol"], manifest["spec"]["sessionAffinity"]
    assert service_change(svc, manifest) == (None, None)


def test_label_and_annotate_are_not_changes() -> None:
    for name in ("label", "annotate"):
        fx, before, after = applied(name)
        assert after["metadata"] != before["metadata"]
        assert deployment_change(before, after, fx["replicasets"]).empty


def test_scale_subresource_patch() -> None:
    fx = fixture("scale")
    scale = {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": {"name": "frontend"},
             "spec": {"replicas": 2}}
    req = fx["requests"][0]
    after = apply_patch(scale, req["content_type"], req["body"])
    assert after["spec"]["replicas"] == 3 and scale_change(scale, after) == 3
    assert scale_change(scale, scale) is None
    with pytest.raises(ApiError) as err:
        scale_change(scale, apply_patch(scale, MERGE_PATCH, '{"spec":{"replicas":"3"}}'))
    assert err.value.message == ('Scale.autoscaling "frontend" is invalid: spec.replicas: Invalid value: "3": '
                                 "must be an integer")


def test_statefulset_scales_and_nothing_else() -> None:
    _, deploy, _ = applied("set_image")
    sts = served({**copy.deepcopy(deploy), "kind": "StatefulSet"})
    assert statefulset_change(sts, apply_patch(sts, STRATEGIC_MERGE_PATCH, '{"spec":{"replicas":5}}')) == 5
    assert statefulset_change(sts, apply_patch(sts, MERGE_PATCH, '{"metadata":{"labels":{"a":"b"}}}')) is None
    with pytest.raises(ApiError) as err:
        statefulset_change(sts, apply_patch(sts, STRATEGIC_MERGE_PATCH, fixture("set_image")["requests"][0]["body"]))
    assert err.value.details["causes"][0]["field"] == "spec.template"


def test_node_cordon_uncordon_taint() -> None:
    _, before, after = applied("cordon")
    assert node_change(before, after).unschedulable is True
    _, before, after = applied("uncordon")
    assert "unschedulable" not in after["spec"]
    change = node_change(before, after)
    assert change.unschedulable is False and change.taints is None
    _, before, after = applied("taint")
    assert node_change(before, after).taints == ({"key": "dedicated", "value": "db", "effect": "NoSchedule"},)
    # taints are an atomic list (NodeSpec.Taints has no patchStrategy): kubectl sends the whole list
    _, before, after = applied("taint_remove")
    assert after["spec"]["taints"] == [{"effect": "NoSchedule", "key": "node.kubernetes.io/unschedulable"}]
    assert node_change(before, after).taints == ({"key": "node.kubernetes.io/unschedulable",
                                                  "effect": "NoSchedule"},)
    _, before, after = applied("label_node")
    assert node_change(before, after) == node_change(before, before)


def test_node_change_refuses_what_it_does_not_model() -> None:
    _, before, _ = applied("cordon")
    bad = apply_patch(before, STRATEGIC_MERGE_PATCH, '{"spec":{"taints":[{"key":"a","effect":"Sometimes"}]}}')
    with pytest.raises(ApiError) as err:
        node_change(before, bad)
    assert err.value.code == 422 and err.value.details["causes"][0]["field"] == "spec.taints[0].effect"
    bad = apply_patch(before, MERGE_PATCH, '{"spec":{"podCIDR":"10.0.0.0/24"}}')
    with pytest.raises(ApiError) as err:
        node_change(before, bad)
    assert err.value.message.startswith('Node "node-a-1" is invalid: spec.podCIDR: Forbidden')


def test_service_selector_and_target_port() -> None:
    _, before, after = applied("patch_service_selector")
    assert service_change(before, after) == ({"app": "frontend-v2"}, None)
    moved = apply_patch(before, STRATEGIC_MERGE_PATCH, '{"spec":{"ports":[{"port":80,"targetPort":9999}]}}')
    assert moved["spec"]["ports"][0]["name"] == "http"  # merged by port (ServiceSpec.Ports patchMergeKey)
    assert service_change(before, moved) == (None, 9999)
    for patch in ('{"spec":{"type":"NodePort"}}', '{"spec":{"ports":[{"port":81,"targetPort":1}]}}',
                  '{"spec":{"ports":[{"port":80,"targetPort":70000}]}}'):
        with pytest.raises(ApiError) as err:
            service_change(before, apply_patch(before, STRATEGIC_MERGE_PATCH, patch))
        assert err.value.code == 422 and err.value.reason == "Invalid"


# ----------------------------------------------------------------- on the live simulator's objects


@pytest.fixture(scope="module")
def live() -> dict[str, list[dict[str, Any]]]:
    from engine.run.substrates import open_substrate

    sub = open_substrate("online-boutique", seed=1)
    return {kind: [served({"kind": kind, **o}) for o in sub.objects(kind)] for kind in ("Deployment", "ReplicaSet")}


@pytest.mark.parametrize("name", ["set_image", "set_env", "set_env_unset", "set_resources", "rollout_restart",
                                  "patch_json", "patch_strategic", "label"])
def test_kubectl_bodies_on_every_simulated_deployment(live: dict[str, list[dict[str, Any]]], name: str) -> None:
    req = fixture(name)["requests"][0]
    expected = deployment_change(*applied(name)[1:], [])
    for deploy in live["Deployment"]:
        if container(deploy)["name"] != "server" or deploy["metadata"]["name"] != "frontend":
            body = req["body"].replace('"name":"server"', json.dumps({"name": container(deploy)["name"]})[1:-1])
        else:
            body = req["body"]
        after = apply_patch(deploy, req["content_type"], body)
        change = deployment_change(deploy, after, live["ReplicaSet"])
        assert change.deployment == deploy["metadata"]["name"]
        assert change.other == ()
        assert (change.image, change.replicas, change.restart) == (expected.image, expected.replicas,
                                                                   expected.restart)
        if name == "set_env":
            assert change.env["NEW_VAR"] == "x"
        if name == "label":
            assert change.empty


# ----------------------------------------------------------------- RFC 6902 / RFC 7386 / strategic merge


DOC = {"kind": "Thing", "apiVersion": "v1", "metadata": {"name": "t"},
       "spec": {"foo": ["bar", "baz"], "a/b": 1, "m~n": 2, "obj": {"x": 1}}}


@pytest.mark.parametrize(("ops", "check"), [
    ([{"op": "add", "path": "/spec/foo/1", "value": "qux"}], lambda d: d["spec"]["foo"] == ["bar", "qux", "baz"]),
    ([{"op": "add", "path": "/spec/foo/-", "value": "end"}], lambda d: d["spec"]["foo"][-1] == "end"),
    ([{"op": "remove", "path": "/spec/foo/0"}], lambda d: d["spec"]["foo"] == ["baz"]),
    ([{"op": "replace", "path": "/spec/a~1b", "value": 3}], lambda d: d["spec"]["a/b"] == 3),
    ([{"op": "replace", "path": "/spec/m~0n", "value": 4}], lambda d: d["spec"]["m~n"] == 4),
    ([{"op": "move", "from": "/spec/obj/x", "path": "/spec/y"}], lambda d: d["spec"]["y"] == 1
     and d["spec"]["obj"] == {}),
    ([{"op": "copy", "from": "/spec/obj", "path": "/spec/obj2"}], lambda d: d["spec"]["obj2"] == {"x": 1}),
    ([{"op": "test", "path": "/spec/foo", "value": ["bar", "baz"]}], lambda d: d == DOC),
    ([{"op": "remove", "path": "/spec/foo/-1"}], lambda d: d["spec"]["foo"] == ["bar"]),  # json-patch v4
    ([{"op": "add", "path": "/spec/x"}], lambda d: d["spec"]["x"] is None),  # v4: a missing value is null
    # v4: a missing key of an existing object reads as null
    ([{"op": "replace", "path": "/spec/new", "value": 1}], lambda d: d["spec"]["new"] == 1),
    ([{"op": "test", "path": "/spec/new", "value": None}], lambda d: d == DOC),
    ([{"op": "copy", "from": "/spec/new", "path": "/spec/x"}], lambda d: d["spec"]["x"] is None),
])
def test_json_patch_operations(ops: list[dict[str, Any]], check: Any) -> None:
    before = copy.deepcopy(DOC)
    assert check(apply_patch(DOC, JSON_PATCH, json.dumps(ops)))
    assert before == DOC  # the input is not modified


@pytest.mark.parametrize("ops", [
    [{"op": "test", "path": "/spec/a~1b", "value": True}],  # true is not 1
    [{"op": "test", "path": "/spec/missing", "value": 1}],
    [{"op": "replace", "path": "/spec/missing/deeper", "value": 1}],
    [{"op": "remove", "path": "/spec/missing"}],
    [{"op": "add", "path": "", "value": {}}],
    [{"op": "remove", "path": "/spec/foo/2"}],
    [{"op": "add", "path": "/spec/foo/3", "value": 1}],
    [{"op": "add", "path": "/spec/foo/99999999999999999999999", "value": 1}],
    [{"op": "add", "path": "/nope/x", "value": 1}],
    [{"op": "move", "from": "/spec", "path": "/spec/inner"}],
    [{"op": "frobnicate", "path": "/spec"}],
])
def test_json_patch_failures_are_422(ops: list[dict[str, Any]]) -> None:
    with pytest.raises(ApiError) as err:
        apply_patch(DOC, JSON_PATCH, json.dumps(ops))
    assert (err.value.code, err.value.reason) == (422, "Invalid")
    # as a v1.37 server answers: the same message and empty details whatever went wrong
    assert err.value.message == "the server rejected our request due to an error in our request"
    assert err.value.status() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                  "message": "the server rejected our request due to an error in our request",
                                  "reason": "Invalid", "code": 422}


def test_failed_test_is_worded_as_the_apiserver() -> None:
    with pytest.raises(ApiError) as err:
        apply_patch(DOC, JSON_PATCH, '[{"op":"test","path":"/spec/a~1b","value":2}]')
    assert err.value.__notes__ == ["testing value /spec/a~1b failed: test failed"]


def test_merge_patch_rfc7386() -> None:
    doc = {"kind": "Thing", "metadata": {"name": "t"}, "a": "b", "c": {"d": "e", "f": "g"}}
    out = apply_patch(doc, MERGE_PATCH, '{"a":"z","c":{"f":null},"n":[1]}')
    assert out == {"kind": "Thing", "metadata": {"name": "t"}, "a": "z", "c": {"d": "e"}, "n": [1]}


def test_null_patches_change_nothing() -> None:
    # Go decodes "null" into an empty strategic patch and an empty JSON patch; a merge patch
    # of null is jsonpatch.ErrBadJSONPatch (kubectl patch --local agrees on all three)
    _, deploy, _ = applied("set_image")
    assert apply_patch(deploy, STRATEGIC_MERGE_PATCH, "null") == deploy
    assert apply_patch(deploy, JSON_PATCH, "null") == deploy
    with pytest.raises(ApiError) as err:
        apply_patch(deploy, MERGE_PATCH, "null")
    assert err.value.code == 400


def test_strategic_directives() -> None:
    _, deploy, _ = applied("set_image")
    spec = '{"spec":{"template":{"spec":{%s}}}}'

    def smp(inner: str) -> dict[str, Any]:
        return apply_patch(deploy, STRATEGIC_MERGE_PATCH, spec % inner)

    # $patch: replace on a list element replaces the list
    out = smp('"containers":[{"name":"only","image":"i"},{"$patch":"replace"}]')
    assert out["spec"]["template"]["spec"]["containers"] == [{"name": "only", "image": "i"}]
    # $patch: delete of a container by its merge key
    out = smp('"containers":[{"name":"server","$patch":"delete"}]')
    assert out["spec"]["template"]["spec"]["containers"] == []
    # a map with $patch: replace
    out = smp('"containers":[{"name":"server","resources":{"$patch":"replace","limits":{"cpu":"1"}}}]')
    assert container(out)["resources"] == {"limits": {"cpu": "1"}}
    # a map with $patch: delete
    out = smp('"containers":[{"name":"server","resources":{"$patch":"delete"}}]')
    assert container(out)["resources"] == {}
    # null deletes a key
    out = smp('"containers":[{"name":"server","livenessProbe":null}]')
    assert "livenessProbe" not in container(out)
    # ports merge by containerPort
    out = smp('"containers":[{"name":"server","ports":[{"containerPort":9000}]}]')
    assert [p["containerPort"] for p in container(out)["ports"]] == [9000, 8080]  # new items lead, as in Go
    # tolerations are atomic
    with_tol = smp('"tolerations":[{"key":"a","operator":"Exists"}]')
    out = apply_patch(with_tol, STRATEGIC_MERGE_PATCH, spec % '"tolerations":[{"key":"b","operator":"Exists"}]')
    assert out["spec"]["template"]["spec"]["tolerations"] == [{"key": "b", "operator": "Exists"}]
    # $setElementOrder reorders (kubectl lists every element); an element only the server has keeps its place
    names = [n for n, _ in env(deploy)]
    order = json.dumps([{"name": n} for n in reversed(names)])
    out = smp('"containers":[{"name":"server","$setElementOrder/env":' + order + ',"env":[]}]')
    assert [n for n, _ in env(out)] == names[::-1]
    order = json.dumps([{"name": n} for n in reversed(names[1:])])
    out = smp('"containers":[{"name":"server","$setElementOrder/env":' + order + ',"env":[]}]')
    assert [n for n, _ in env(out)] == [names[0], *names[:0:-1]]
    # $retainKeys drops what is not retained (DeploymentSpec.Strategy is retainKeys)
    out = apply_patch(deploy, STRATEGIC_MERGE_PATCH,
                      '{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}')
    assert out["spec"]["strategy"] == {"type": "Recreate"}
    with pytest.raises(ApiError) as err:
        apply_patch(deploy, STRATEGIC_MERGE_PATCH, '{"spec":{"strategy":{"$retainKeys":["type"],"x":1}}}')
    assert err.value.code == 422
    # $deleteFromPrimitiveList on a primitive merge list (ObjectMeta.Finalizers)
    fin = apply_patch(deploy, STRATEGIC_MERGE_PATCH, '{"metadata":{"finalizers":["a","b"]}}')
    fin = apply_patch(fin, STRATEGIC_MERGE_PATCH, '{"metadata":{"finalizers":["c","a"]}}')
    assert fin["metadata"]["finalizers"] == ["c", "a", "b"]  # the patch's items lead, as in the Go code
    fin = apply_patch(fin, STRATEGIC_MERGE_PATCH, '{"metadata":{"$deleteFromPrimitiveList/finalizers":["a"]}}')
    assert fin["metadata"]["finalizers"] == ["c", "b"]
    # an element without its merge key; $patch: merge, which the Go code does not take either
    for bad in ('"containers":[{"image":"x"}]', '"containers":[{"name":"server","$patch":"merge"}]',
                '"containers":[{"name":"server","resources":{"$patch":"merge"}}]',
                '"containers":[{"name":"server","$patch":"nope"}]'):
        with pytest.raises(ApiError) as err:
            smp(bad)
        assert err.value.code == 400, bad
    with pytest.raises(ApiError) as err:
        smp('"containers":[[1]]')
    assert err.value.code == 422  # mergepatch.ErrNoListOfLists
    # $setElementOrder names objects by their merge key
    with pytest.raises(ApiError) as err:
        smp('"$setElementOrder/containers":[["server"]],"containers":[{"name":"server","image":"i"}]')
    assert err.value.code == 400
    # $deleteFromPrimitiveList of a list the object does not have, or of a non-list, is skipped
    assert smp('"$deleteFromPrimitiveList/args":["a"]') == deploy
    fin = apply_patch(deploy, STRATEGIC_MERGE_PATCH, '{"metadata":{"finalizers":["a"]}}')
    assert apply_patch(fin, STRATEGIC_MERGE_PATCH, '{"metadata":{"$deleteFromPrimitiveList/finalizers":"a"}}') == fin


def test_errors_and_refusals() -> None:
    _, deploy, _ = applied("set_image")
    for ctype, body, code, reason in [
            ("application/apply-patch+yaml", "spec: {}", 415, "UnsupportedMediaType"),
            ("text/plain", "{}", 415, "UnsupportedMediaType"),
            (STRATEGIC_MERGE_PATCH, "{not json", 400, "BadRequest"),
            (STRATEGIC_MERGE_PATCH, "[1]", 400, "BadRequest"),
            (MERGE_PATCH, '{"a": NaN}', 400, "BadRequest"),
            (MERGE_PATCH, '{"a": 1e400}', 400, "BadRequest"),
            (MERGE_PATCH, b"\xff\xfe", 400, "BadRequest"),
            (JSON_PATCH, "{}", 400, "BadRequest"),
            (MERGE_PATCH, '{"metadata":{"name":"other"}}', 400, "BadRequest"),
            (JSON_PATCH, '[{"op":"replace","path":"","value":3}]', 400, "BadRequest"),
            (MERGE_PATCH, "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5), 400, "BadRequest"),
            (MERGE_PATCH, '{"a":' * 5000 + "1" + "}" * 5000, 400, "BadRequest"),
            (JSON_PATCH, json.dumps([{"op": "test", "path": "/kind", "value": "Deployment"}] * 10001), 413,
             "RequestEntityTooLarge")]:
        with pytest.raises(ApiError) as err:
            apply_patch(deploy, ctype, body)
        assert (err.value.code, err.value.reason) == (code, reason), (ctype, body[:40])
    assert "accepted media types include: application/json-patch+json" in _message(
        deploy, "application/apply-patch+yaml", "{}")
    assert apply_patch(deploy, MERGE_PATCH + "; charset=utf-8", "{}") == deploy
    custom = {"kind": "StressChaos", "apiVersion": "chaos-mesh.org/v1alpha1", "metadata": {"name": "c"}}
    with pytest.raises(ApiError) as err:
        apply_patch(custom, STRATEGIC_MERGE_PATCH, "{}")
    assert err.value.code == 415
    # a chain of copies doubling the document stops
    doubling = [{"op": "copy", "from": "/spec/template", "path": f"/spec/template/k{i}"} for i in range(40)]
    with pytest.raises(ApiError) as err:
        apply_patch(deploy, JSON_PATCH, json.dumps(doubling))
    assert err.value.code == 422


def _message(obj: dict[str, Any], ctype: str, body: str) -> str:
    try:
        apply_patch(obj, ctype, body)
    except ApiError as exc:
        return exc.message
    raise AssertionError("no error")


def test_deployment_change_validation() -> None:
    fx, deploy, _ = applied("set_image")
    rs = fx["replicasets"]

    def change(patch: str) -> Any:
        return deployment_change(deploy, apply_patch(deploy, STRATEGIC_MERGE_PATCH, patch), rs)

    with pytest.raises(ApiError) as err:
        change('{"spec":{"replicas":-1}}')
    assert err.value.message == ('Deployment.apps "frontend" is invalid: spec.replicas: Invalid value: -1: '
                                 "must be greater than or equal to 0")
    assert err.value.details["causes"] == [{"reason": "FieldValueInvalid", "field": "spec.replicas",
                                            "message": "Invalid value: -1: must be greater than or equal to 0"}]
    c = '{"spec":{"template":{"spec":{"containers":[{"name":"server",%s}]}}}}'
    for bad in ('"image":""', '"env":[{"name":"X","value":3}]', '"resources":{"limits":{"cpu":"lots"}}',
                '"resources":{"requests":{"cpu":"2"}}', '"readinessProbe":{"$patch":"replace","periodSeconds":5}',
                '"livenessProbe":{"successThreshold":2}', '"readinessProbe":{"tcpSocket":{"port":8080}}',
                '"ports":"nope"'):
        with pytest.raises(ApiError) as err:
            change(c % bad)
        assert err.value.code == 422, bad
    probe = change(c % '"readinessProbe":{"$patch":"replace","tcpSocket":{"port":8080},"periodSeconds":5}')
    assert probe.readiness_probe == Probe(type="tcp", port=8080, period_s=5) and probe.liveness_probe == KEEP
    assert change(c % '"readinessProbe":null').readiness_probe is None
    named = change(c % '"ports":[{"containerPort":9090,"name":"admin"}],"livenessProbe":{"httpGet":{"port":"admin"}}')
    assert named.liveness_probe == Probe(type="http", port=9090, path="/_healthz", initial_delay_s=10)
    assert named.other == ("spec.template.spec.containers[0].ports",)
    # the same port by name: the probe is unchanged where the model looks, so it is some other change
    same = change(c % '"ports":[{"containerPort":8080,"name":"http"}],"livenessProbe":{"httpGet":{"port":"http"}}')
    assert same.liveness_probe == KEEP and "spec.template.spec.containers[0].livenessProbe" in same.other
    with pytest.raises(ApiError):
        change(c % '"livenessProbe":{"httpGet":{"port":"8080"}}')  # a port name must have a letter
    ref = change(c % '"env":[{"name":"SECRET","valueFrom":{"secretKeyRef":{"name":"s","key":"k"}}}]')
    assert ref.env == {} and ref.other == ("spec.template.spec.containers[0].env[SECRET]",)
    assert change('{"spec":{"template":{"spec":{"nodeSelector":{"zone":"a"}}}}}').other == (
        "spec.template.spec.nodeSelector",)
    assert change('{"spec":{"paused":true}}').other == ("spec.paused",)
    scheme = change(c % '"readinessProbe":{"httpGet":{"scheme":"HTTPS"}}')
    assert scheme.readiness_probe == KEEP and scheme.other == ("spec.template.spec.containers[0].readinessProbe",)
    assert change('{"status":{"replicas":7}}').empty


# ----------------------------------------------------------------- conformance: kubectl patch --local

_KUBECTL = shutil.which("kubectl", path=str(Path(sys.executable).parent)) or shutil.which("kubectl")
_KUBECTL_TYPES = {JSON_PATCH: "json", MERGE_PATCH: "merge", STRATEGIC_MERGE_PATCH: "strategic"}


def _omitempty(value: Any) -> Any:
    # The server decodes the patched map into the Go type: empty fields are omitted (omitempty)
    # and unknown ones, such as directives the Go code copied verbatim, dropped. kubectl patch
    # --local stays unstructured, so both sides are compared that way.
    if isinstance(value, dict):
        out = {k: _omitempty(v) for k, v in value.items() if not k.startswith("$")}
        return {k: v for k, v in out.items() if v not in ("", [], {}, None, False, 0)}
    if isinstance(value, list):
        return [_omitempty(v) for v in value]
    return value


def _kubectl_patch(tmp_path: Path, obj: dict[str, Any], ctype: str, body: str) -> dict[str, Any] | None:
    """``kubectl patch --local``: the Go strategicpatch and json-patch code, without a server."""
    assert _KUBECTL is not None
    path = tmp_path / "obj.json"
    path.write_text(json.dumps(obj))
    proc = subprocess.run([_KUBECTL, "patch", "--local", "-f", str(path), "--type", _KUBECTL_TYPES[ctype], "-p", body,
                           "-o", "json"], capture_output=True, text=True, timeout=60)
    out: dict[str, Any] | None = json.loads(proc.stdout) if proc.returncode == 0 else None
    return out


def _ours(obj: dict[str, Any], ctype: str, body: str) -> dict[str, Any] | None:
    try:
        return apply_patch(obj, ctype, body)
    except ApiError:
        return None


_DIRECTIVES = [
    '{"spec":{"template":{"spec":{"containers":[{"name":"only","image":"i"},{"$patch":"replace"}]}}}}',
    '{"spec":{"template":{"spec":{"containers":[{"name":"server","$patch":"delete"}]}}}}',
    '{"spec":{"template":{"spec":{"containers":[{"name":"server","resources":{"$patch":"replace","limits":{"cpu":"1"}}}'
    ']}}}}',
    '{"spec":{"template":{"spec":{"containers":[{"name":"server","resources":{"$patch":"delete"}}]}}}}',
    '{"spec":{"template":{"spec":{"containers":[{"name":"server","livenessProbe":null,"env":[{"name":"PORT",'
    '"$patch":"delete"},{"name":"NEW","value":"1"}]}]}}}}',
    '{"spec":{"template":{"spec":{"containers":[{"name":"server","ports":[{"containerPort":9000},'
    '{"containerPort":8080,"name":"http"}]}]}}}}',
    '{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"envoy"}],'
    '"$setElementOrder/containers":[{"name":"sidecar"},{"name":"server"}]}}}}',
    '{"spec":{"template":{"spec":{"tolerations":[{"key":"a","operator":"Exists"}],"nodeSelector":{"z":"a"}}}}}',
    '{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}',
    '{"metadata":{"finalizers":["b","a"],"labels":{"app":null,"x":"y"}}}',
    '{"spec":{"template":{"spec":{"$patch":"merge"}}}}',
    '{"spec":{"template":{"spec":{"containers":[{"image":"no-name"}]}}}}',
    '{"spec":{"template":{"spec":{"containers":[{"name":"server","$setElementOrder/env":[{"name":"ENABLE_PROFILER"},'
    '{"name":"PORT"},{"name":"PRODUCT_CATALOG_SERVICE_ADDR"},{"name":"CURRENCY_SERVICE_ADDR"},{"name":"CART_SERVICE_ADDR"},'
    '{"name":"RECOMMENDATION_SERVICE_ADDR"},{"name":"SHIPPING_SERVICE_ADDR"},{"name":"CHECKOUT_SERVICE_ADDR"},'
    '{"name":"AD_SERVICE_ADDR"},{"name":"SHOPPING_ASSISTANT_SERVICE_ADDR"}]}]}}}}',
]
_JSON_PATCHES = [
    '[{"op":"test","path":"/spec/replicas","value":2},{"op":"replace","path":"/spec/replicas","value":5}]',
    '[{"op":"test","path":"/spec/replicas","value":3}]',
    '[{"op":"add","path":"/spec/template/spec/containers/0/env/-","value":{"name":"A","value":"1"}}]',
    '[{"op":"add","path":"/spec/template/spec/containers/0/env/0","value":{"name":"A","value":"1"}}]',
    '[{"op":"remove","path":"/spec/template/spec/containers/0/env/-1"}]',
    '[{"op":"remove","path":"/spec/template/spec/containers/0/env/99"}]',
    '[{"op":"move","from":"/spec/template/spec/containers/0/env/0","path":"/spec/template/spec/containers/0/env/-"}]',
    '[{"op":"copy","from":"/metadata/labels","path":"/metadata/annotations"}]',
    '[{"op":"add","path":"/metadata/annotations/a~1b","value":"x"},{"op":"test","path":"/metadata/annotations/a~1b",'
    '"value":"x"}]',
    '[{"op":"replace","path":"/spec/nope","value":1}]',
    '[{"op":"replace","path":"/spec/nope/deeper","value":1}]',
    '[{"op":"test","path":"/spec/nope","value":null},{"op":"copy","from":"/spec/nope","path":"/spec/x"}]',
    '[{"op":"move","from":"/spec/nope","path":"/spec/x"}]',
    '[{"op":"remove","path":"/spec/nope"}]',
    '[{"op":"add","path":"/spec/template/spec/containers/01","value":{"name":"a"}}]',
    '[{"op":"replace","path":"/spec/template/spec/containers/-","value":{}}]',
    '[{"op":"add","path":"","value":{}}]',
]


_MERGE_PATCHES = [
    '{"metadata":{"labels":null,"annotations":{"a":"b"}}}',
    '{"spec":{"template":{"spec":{"containers":null,"nodeSelector":{"z":"a"}}}}}',
    '{"spec":{"strategy":{"rollingUpdate":{"maxSurge":null}},"replicas":0}}',
    '{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"now"}}}}}',
]
_NODE_AND_SERVICE = [
    ("cordon", STRATEGIC_MERGE_PATCH,
     '{"spec":{"taints":[{"key":"a","effect":"NoSchedule"}],"podCIDRs":["10.0.0.0/24"]}}'),
    ("cordon", STRATEGIC_MERGE_PATCH, '{"status":{"conditions":[{"type":"Ready","status":"False"}]}}'),
    ("uncordon", STRATEGIC_MERGE_PATCH, '{"spec":{"$retainKeys":["taints"],"taints":[]}}'),
    ("patch_service_selector", STRATEGIC_MERGE_PATCH,
     '{"spec":{"ports":[{"port":81,"targetPort":9090},{"port":80,"$patch":"delete"}]}}'),
    ("patch_service_selector", STRATEGIC_MERGE_PATCH, '{"spec":{"ports":[{"port":80,"targetPort":"http"}]}}'),
]


@pytest.mark.skipif(_KUBECTL is None, reason="kubectl not installed")
def test_conformance_with_kubectl_patch_local(tmp_path: Path) -> None:
    """Every captured body, the directive cases and the JSON patches above, and 40 mutations of
    the captured bodies give what the Go code gives (or both refuse). Type errors the server's
    typed decoding catches and ``kubectl patch --local`` (which stays unstructured) does not are
    left out of the mutations: a mutation only swaps values for values of the same JSON type."""
    cases: list[tuple[dict[str, Any], str, str]] = []
    for name in _CAPTURED:
        req = fixture(name)["requests"][0]
        if req["content_type"] in _KUBECTL_TYPES:
            cases.append((fixture(name)["before"], req["content_type"], req["body"]))
    deploy = fixture("set_image")["before"]
    cases += [(deploy, STRATEGIC_MERGE_PATCH, body) for body in _DIRECTIVES]
    cases += [(deploy, JSON_PATCH, body) for body in _JSON_PATCHES]
    cases += [(deploy, MERGE_PATCH, body) for body in _MERGE_PATCHES]
    cases += [(fixture(name)["before"], ctype, body) for name, ctype, body in _NODE_AND_SERVICE]
    rnd = random.Random(15)
    for _ in range(40):
        name = rnd.choice([n for n in _CAPTURED if fixture(n)["requests"][0]["content_type"] in _KUBECTL_TYPES])
        req = fixture(name)["requests"][0]
        cases.append((fixture(name)["before"], req["content_type"],
                      json.dumps(_same_type_mutation(rnd, json.loads(req["body"])))))
    for obj, ctype, body in cases:
        theirs, ours = _kubectl_patch(tmp_path, obj, ctype, body), _ours(obj, ctype, body)
        assert (theirs is None) == (ours is None), (ctype, body[:300], theirs is None)
        if theirs is not None:
            assert _omitempty(theirs) == _omitempty(ours), (ctype, body[:300])


def _same_type_mutation(rnd: random.Random, value: Any) -> Any:
    if isinstance(value, dict):
        out = {k: _same_type_mutation(rnd, v) for k, v in value.items() if k.startswith("$") or rnd.random() > 0.1}
        if rnd.random() < 0.1:
            out["$patch"] = rnd.choice(["replace", "delete"])
        return out
    if isinstance(value, list):
        out_list = [_same_type_mutation(rnd, v) for v in value if rnd.random() > 0.15]
        if value and rnd.random() < 0.2:
            out_list.insert(rnd.randrange(len(out_list) + 1), copy.deepcopy(rnd.choice(value)))
        return out_list
    if isinstance(value, str) and rnd.random() < 0.3:
        return rnd.choice(["", "x", value + "2"])
    if isinstance(value, bool) and rnd.random() < 0.3:
        return not value
    if isinstance(value, int) and rnd.random() < 0.3:
        return value + rnd.choice([-1, 1])
    return value


# ----------------------------------------------------------------- fuzz: nothing but ApiError, ever

_json = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(
        st.sampled_from(["spec", "template", "containers", "env", "name", "value", "image", "$patch", "replace",
                         "delete", "$retainKeys", "$setElementOrder/env", "$deleteFromPrimitiveList/finalizers",
                         "metadata", "ports", "containerPort", "op", "path", "from", "-", "0", "replicas",
                         "resources", "limits", "cpu", "readinessProbe", "httpGet", "port", "taints", "selector"])
        | st.text(max_size=6), children, max_size=4),
    max_leaves=25)
_ops = st.lists(st.fixed_dictionaries(
    {"op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "x"]),
     "path": st.lists(st.sampled_from(["spec", "template", "spec", "containers", "0", "-", "1", "env", "image",
                                       "metadata", "name", "99999999999", "-1", "a~1b", "~0"]),
                      max_size=7).map(lambda p: "/" + "/".join(p))},
    optional={"value": _json, "from": st.sampled_from(["/spec", "/spec/template", "/metadata", "", "/x"])}),
    max_size=6)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ctype=st.sampled_from([JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH]),
       body=st.one_of(_json.map(json.dumps), _ops.map(json.dumps), st.binary(max_size=30),
                      st.text(max_size=30)),
       target=st.sampled_from(["set_image", "cordon", "patch_service_selector"]))
def test_fuzz_only_api_errors(ctype: str, body: str | bytes, target: str) -> None:
    fx = fixture(target)
    before = fx["before"]
    snapshot = copy.deepcopy(before)
    try:
        after = apply_patch(before, ctype, body)
        if before["kind"] == "Deployment":
            deployment_change(before, after, fx.get("replicasets", []))
        elif before["kind"] == "Node":
            node_change(before, after)
        else:
            service_change(before, after)
    except ApiError as exc:
        assert exc.code in (400, 413, 415, 422)
    assert before == snapshot


@settings(max_examples=200, deadline=None)
@given(inner=_json)
def test_fuzz_app_container_patches(inner: Any) -> None:
    fx = fixture("set_image")
    body = json.dumps({"spec": {"template": {"spec": {"containers": [{"name": "server", "x": inner}]}}}})
    body = body.replace('"x": ', '"readinessProbe": ', 1) if isinstance(inner, dict) else body
    for ctype in (STRATEGIC_MERGE_PATCH, MERGE_PATCH):
        try:
            deployment_change(fx["before"], apply_patch(fx["before"], ctype, body), fx["replicasets"])
        except ApiError as exc:
            assert exc.code in (400, 422)


_ODD = [None, True, 0, -1, 1.5, "", "x", "-", [], {}, [1], {"a": 1}, {"$patch": "delete"}, {"$patch": "replace"},
        [{"$patch": "replace"}], [{"name": "server"}], "100m", "lots", 10**30, [[1]], {"name": 3}]
_CAPTURED = sorted(p.stem for p in DATA.glob("*.json") if p.stem != "scale")


def _mutate(rnd: Any, value: Any) -> Any:
    """A captured body with some values swapped for odd ones and directives sprinkled in."""
    if rnd.random() < 0.15:
        return copy.deepcopy(rnd.choice(_ODD))
    if isinstance(value, dict):
        out = {k: _mutate(rnd, v) if rnd.random() < 0.3 else v for k, v in value.items() if rnd.random() > 0.05}
        if rnd.random() < 0.1:
            key = rnd.choice(["$retainKeys", "$setElementOrder/env", "$deleteFromPrimitiveList/env", "$patch", "image",
                              "env", "ports"])
            out[key] = copy.deepcopy(rnd.choice(_ODD))
        return out
    if isinstance(value, list):
        out_list = [_mutate(rnd, v) if rnd.random() < 0.3 else v for v in value]
        if out_list and rnd.random() < 0.1:
            out_list.append(copy.deepcopy(out_list[0]))
        return out_list
    return value


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(_CAPTURED), rnd=st.randoms(use_true_random=False),
       ctype=st.sampled_from([None, JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH]))
def test_fuzz_mutated_kubectl_bodies(name: str, rnd: Any, ctype: str | None) -> None:
    """kubectl's own bodies, mutated, reach deep into the merge and the diff: still only ApiError."""
    fx = fixture(name)
    req = fx["requests"][0]
    before = fx["before"]
    body = json.dumps(_mutate(rnd, json.loads(req["body"])))
    try:
        after = apply_patch(before, ctype or req["content_type"], body)
        if before["kind"] == "Deployment":
            deployment_change(before, after, fx["replicasets"])
        elif before["kind"] == "Node":
            node_change(before, after)
        else:
            service_change(before, after)
    except ApiError as exc:
        assert exc.code in (400, 413, 415, 422)
