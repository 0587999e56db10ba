"""Mutations behave as Kubernetes does (issue 2, "Done when")."""

from __future__ import annotations

from typing import Any

import pytest

from engine.sim.effects import EdgeEffect, Effect, LogHint, SourceContains
from engine.sim.simulator import Simulator
from engine.substrate import SubstrateError

BAD_IMAGE = "us-central1-docker.pkg.dev/online-boutique-ci/microservices-demo/productcatalogservice:v0.10.7-rc1"


@pytest.fixture
def ob() -> Simulator:
    sim = Simulator("online-boutique", seed=7)
    sim.advance(60)
    return sim


def pods(sim: Simulator, service: str) -> list[dict[str, Any]]:
    return [p for p in sim.objects("Pod") if p["metadata"]["labels"]["app"] == service]


def ready(pod: dict[str, Any]) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True" for c in pod["status"]["conditions"])


def waiting_reason(pod: dict[str, Any]) -> str | None:
    state = pod["status"]["containerStatuses"][0]["state"]
    return state.get("waiting", {}).get("reason")


def route_errors(sim: Simulator, window: float = 30.0) -> dict[str, float]:
    return {r.route: r.error_share for r in sim.route_health(window)}


def deployment(sim: Simulator, name: str) -> dict[str, Any]:
    return next(d for d in sim.objects("Deployment") if d["metadata"]["name"] == name)


def test_warm_start_spreads_replicas_over_both_zones(ob: Simulator) -> None:
    zones = {n["metadata"]["name"]: n["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in ob.objects("Node")}
    assert sorted(set(zones.values())) == ["zone-a", "zone-b"]
    for svc in ob.app.services:
        ps = pods(ob, svc.name)
        assert len(ps) == svc.replicas
        assert all(ready(p) for p in ps), svc.name
        if svc.replicas == 2:
            assert {zones[p["spec"]["nodeName"]] for p in ps} == {"zone-a", "zone-b"}, svc.name


def test_scale_to_zero_leaves_no_ready_pods_and_dependent_routes_fail(ob: Simulator) -> None:
    ob.scale("cartservice", 0)
    ob.advance(ob.now + 60)
    assert pods(ob, "cartservice") == []
    dep = deployment(ob, "cartservice")
    assert dep["spec"]["replicas"] == 0
    assert dep["status"]["readyReplicas"] == 0
    errors = route_errors(ob)
    # Every page that reads the cart fails; setting the currency cookie needs no cart.
    for route in ("home", "browse-product", "view-cart", "add-to-cart", "checkout"):
        assert errors[route] > 0.95, route
    assert errors["set-currency"] < 0.01
    frontend_logs = "\n".join(line for p in pods(ob, "frontend") for line in ob.logs(p["metadata"]["name"]))
    # gRPC-Go's wording, wrapped as the frontend's handlers wrap a failed cart call.
    assert "could not retrieve cart: rpc error: code = Unavailable" in frontend_logs
    assert "connect: connection refused" in frontend_logs
    ob.scale("cartservice", 2)
    ob.advance(ob.now + 120)
    assert sum(ready(p) for p in pods(ob, "cartservice")) == 2
    assert max(route_errors(ob, 30).values()) < 0.01


def test_deleting_a_pod_brings_a_new_one_after_startup(ob: Simulator) -> None:
    victim = pods(ob, "adservice")[0]["metadata"]["name"]
    ob.restart_pod(victim)
    ob.advance(ob.now + 1)
    names = {p["metadata"]["name"] for p in pods(ob, "adservice")}
    assert victim in names  # still terminating within its grace period
    ob.advance(ob.now + 5)
    after = pods(ob, "adservice")
    assert victim not in {p["metadata"]["name"] for p in after}
    new = [p for p in after if p["metadata"]["name"] != victim and not ready(p)]
    assert len(new) == 1, "a replacement pod is starting"
    startup = ob.app.service("adservice")
    assert startup.readiness_probe is not None
    ob.advance(ob.now + startup.readiness_probe.initial_delay_s + startup.startup_s * 1.3 + 20)
    assert all(ready(p) for p in pods(ob, "adservice"))
    reasons = [e["reason"] for e in ob.events() if e["involvedObject"]["name"] == new[0]["metadata"]["name"]]
    assert reasons[:2] == ["Scheduled", "Pulled"] or "Pulling" in reasons
    assert "Started" in reasons


def test_bad_image_rollout_keeps_old_pods_serving(ob: Simulator) -> None:
    old = {p["metadata"]["name"] for p in pods(ob, "productcatalogservice")}
    rec = ob.deploy_change("productcatalogservice", image=BAD_IMAGE, summary="bump catalog", author="ci-bot")
    assert rec.status == "deployed" and rec.revision == 2
    ob.advance(ob.now + 120)
    ps = pods(ob, "productcatalogservice")
    stuck = [p for p in ps if p["metadata"]["name"] not in old]
    # maxSurge 25% of 2 rounds up to 1, maxUnavailable rounds down to 0: one new pod, no old pod removed.
    assert len(stuck) == 1
    assert waiting_reason(stuck[0]) in ("ImagePullBackOff", "ErrImagePull")
    assert old <= {p["metadata"]["name"] for p in ps}
    assert all(ready(p) for p in ps if p["metadata"]["name"] in old)
    assert max(route_errors(ob).values()) < 0.01, "the old revision keeps serving"
    dep = deployment(ob, "productcatalogservice")
    assert dep["status"]["updatedReplicas"] == 1 and dep["status"]["availableReplicas"] == 2
    assert dep["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    ob.advance(ob.now + 600)
    progressing = next(c for c in deployment(ob, "productcatalogservice")["status"]["conditions"]
                       if c["type"] == "Progressing")
    assert (progressing["status"], progressing["reason"]) == ("False", "ProgressDeadlineExceeded")
    messages = [e["message"] for e in ob.events() if e["reason"] == "Failed"]
    assert any(BAD_IMAGE in m and "not found" in m for m in messages)
    # The waiting reason is a kube-state-metrics series, as an alert rule would read it.
    series = [s for s in ob.scrape() if s.name == "kube_pod_container_status_waiting_reason"
              and s.labels["pod"] == stuck[0]["metadata"]["name"]]
    assert [s.labels["reason"] for s in series] == ["ImagePullBackOff"]
    rb = ob.rollback("productcatalogservice")
    assert rb.revision == 3
    ob.advance(ob.now + 30)
    assert {p["metadata"]["name"] for p in pods(ob, "productcatalogservice")} == old


def test_rolling_update_replaces_pods_without_errors(ob: Simulator) -> None:
    old = {p["metadata"]["name"] for p in pods(ob, "shippingservice")}
    ob.deploy_change("shippingservice", env={"LOG_LEVEL": "debug"}, summary="verbose logs", author="alice")
    ob.advance(ob.now + 90)
    now = {p["metadata"]["name"] for p in pods(ob, "shippingservice")}
    assert not (old & now), "every pod was replaced"
    assert all(ready(p) for p in pods(ob, "shippingservice"))
    assert max(route_errors(ob, 90).values()) < 0.01
    scaling = [e["message"] for e in ob.events() if e["reason"] == "ScalingReplicaSet"
               and e["involvedObject"]["name"] == "shippingservice"]
    assert len(scaling) >= 3  # up new, down old, ... one at a time


def test_code_change_builds_then_rolls_out(ob: Simulator) -> None:
    files = ob.source_files("currencyservice")
    path = next(p for p in sorted(files) if p.endswith(".js") and "onvert" in files[p])
    rec = ob.deploy_change("currencyservice", files={path: files[path] + "\n// harmless comment\n"},
                           summary="docs: comment", author="bob")
    assert rec.status == "building" and rec.commit is not None
    ob.advance(ob.now + 10)
    assert ob.source_files("currencyservice")[path] == files[path], "not deployed before the build finishes"
    ob.advance(ob.now + 120)
    assert rec.status == "deployed"
    assert ob.source_files("currencyservice")[path].endswith("// harmless comment\n")
    history = ob.deploy_history("currencyservice")
    assert history[-1].id == rec.id and rec.image is not None and rec.commit[:7] in rec.image


def test_code_defect_bites_only_the_new_revision_and_rollback_repairs(ob: Simulator) -> None:
    files = ob.source_files("currencyservice")
    path = sorted(p for p in files if p.endswith(".js"))[0]
    defect = "\nconst ROUNDING_BUG = true;\n"
    ob.inject(Effect(id="bug", service="currencyservice", operations=("/hipstershop.CurrencyService/Convert",),
                     error_rate=1.0, when=SourceContains(path=path, text="ROUNDING_BUG"),
                     log=LogHint("Cannot read properties of undefined (reading 'units')", "TypeError", path,
                                 "convert", 61)))
    ob.advance(ob.now + 30)
    assert max(route_errors(ob).values()) < 0.01, "not deployed yet: nothing happens"
    ob.deploy_change("currencyservice", files={path: files[path] + defect}, summary="feat: faster rounding",
                     author="carol")
    ob.advance(ob.now + 240)
    assert route_errors(ob)["home"] > 0.9
    lines = "\n".join(line for p in pods(ob, "currencyservice") for line in ob.logs(p["metadata"]["name"]))
    assert "TypeError" in lines and path in lines
    ob.rollback("currencyservice")
    ob.advance(ob.now + 120)
    assert max(route_errors(ob, 30).values()) < 0.01


def test_memory_leak_ends_in_oomkilled_restarts(ob: Simulator) -> None:
    ob.inject(Effect(id="leak", service="recommendationservice", memory_leak_bps=2e6))
    ob.advance(ob.now + 400)
    statuses = [p["status"]["containerStatuses"][0] for p in pods(ob, "recommendationservice")]
    assert all(s["restartCount"] >= 1 for s in statuses)
    assert all(s["lastState"]["terminated"]["reason"] == "OOMKilled" for s in statuses)
    assert all(s["lastState"]["terminated"]["exitCode"] == 137 for s in statuses)
    last = [s for s in ob.scrape() if s.name == "kube_pod_container_status_last_terminated_reason"
            and s.labels["pod"].startswith("recommendationservice")]
    assert {s.labels["reason"] for s in last} == {"OOMKilled"}


def test_crash_on_start_backs_off_exponentially(ob: Simulator) -> None:
    ob.inject(Effect(id="crash", service="paymentservice", crash_on_start=True,
                     log=LogHint("invalid card network list", "Error", "charge.js", "loadNetworks", 12)))
    victim = pods(ob, "paymentservice")[0]["metadata"]["name"]
    ob.restart_pod(victim)
    ob.advance(ob.now + 200)
    crashing = [p for p in pods(ob, "paymentservice") if not ready(p)]
    assert len(crashing) == 1
    status = crashing[0]["status"]["containerStatuses"][0]
    # Restarts at ~+1 s, then back-off 10, 20, 40, 80 s: 4 to 5 restarts in 200 s, not dozens.
    assert 3 <= status["restartCount"] <= 6
    assert waiting_reason(crashing[0]) == "CrashLoopBackOff" or status["state"].get("terminated")
    previous = ob.logs(crashing[0]["metadata"]["name"], previous=True)
    assert any("invalid card network list" in line for line in previous)
    assert any(e["reason"] == "BackOff" for e in ob.events())
    ob.revert("crash")
    ob.advance(ob.now + 400)
    assert all(ready(p) for p in pods(ob, "paymentservice"))


def test_zone_outage_reschedules_into_the_other_zone(ob: Simulator) -> None:
    zone_a = ob.zone_nodes("zone-a")
    for node in zone_a:
        ob.set_node_ready(node, False)
    ob.advance(ob.now + 20)
    assert max(route_errors(ob, 15).values()) > 0.2, "calls to pods in the lost zone time out"
    ob.advance(ob.now + 60)
    nodes = {n["metadata"]["name"]: n for n in ob.objects("Node")}
    assert nodes[zone_a[0]]["status"]["conditions"][0]["status"] == "Unknown"
    ob.advance(ob.now + 330)
    for svc in ob.app.services:
        live = [p for p in pods(ob, svc.name) if "deletionTimestamp" not in p["metadata"]]
        assert live and all(p["spec"]["nodeName"] not in zone_a for p in live), svc.name
    ob.advance(ob.now + 120)
    assert max(route_errors(ob, 60).values()) < 0.01


def test_network_delay_on_one_edge_slows_callers_only(ob: Simulator) -> None:
    before = {r.route: r.p95_ms for r in ob.route_health(60)}
    ob.inject(EdgeEffect(id="delay", caller="checkoutservice", callee="paymentservice", delay_s=1.5))
    ob.advance(ob.now + 60)
    after = {r.route: r.p95_ms for r in ob.route_health(30)}
    assert after["checkout"] > before["checkout"] + 1000
    assert after["browse-product"] < before["browse-product"] * 1.5


def test_wrong_dependency_address_fails_with_dns_errors(ob: Simulator) -> None:
    ob.deploy_change("frontend", env={"AD_SERVICE_ADDR": "adservice-v2:9555"}, summary="move ads", author="dave")
    ob.advance(ob.now + 120)
    # Ads are optional for the frontend: pages still render.
    assert max(route_errors(ob, 30).values()) < 0.01
    ob.deploy_change("frontend", env={"CART_SERVICE_ADDR": "cartservice:7071"}, summary="cart port", author="dave")
    ob.advance(ob.now + 120)
    assert route_errors(ob, 30)["view-cart"] > 0.9


def test_non_persistent_store_restart_loses_data(ob: Simulator) -> None:
    before = ob.store_state("redis-cart")
    assert before["served_since"] > 0
    ob.restart_pod(pods(ob, "redis-cart")[0]["metadata"]["name"])
    ob.advance(ob.now + 30)
    after = ob.store_state("redis-cart")
    assert after["generation"] == before["generation"] + 1
    lines = ob.logs(pods(ob, "redis-cart")[0]["metadata"]["name"])
    assert any("empty dataset" in line for line in lines)
    with pytest.raises(SubstrateError):
        ob.store_state("frontend")


def test_mutations_reject_unknown_names(ob: Simulator) -> None:
    with pytest.raises(SubstrateError, match="not found"):
        ob.restart_pod("no-such-pod")
    with pytest.raises(SubstrateError, match="not found"):
        ob.scale("no-such-service", 1)
    with pytest.raises(SubstrateError):
        ob.rollback("frontend", revision=9)
    with pytest.raises(SubstrateError, match="unknown kind"):
        ob.objects("Widget")
