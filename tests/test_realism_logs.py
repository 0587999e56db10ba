"""Logs, kubelet wording and pod objects as the real components write them (issue 14, items 5-6).

Healthy runs: per-pod log volume in the range real services write (hundreds of lines a
minute for a service that logs each request), each runtime's own format (JSON that parses
where the runtime writes JSON), no revision or commit in start-up lines. Faults: a silent
code defect leaves no error in the faulty service and an error in its caller; a thrown
exception leaves a stack trace in the runtime's format; a crash-looping Spring Boot
container never logs ``Started``; a container that never started answers with the
kubelet's "is waiting to start" text. Kubelet and controllers: gRPC/HTTP prober wording,
liveness-kill exit codes per runtime, ``Scaled down replica set X to 0 from 2``, and the
service-account volume, default tolerations and container ids of ``describe pod``.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from engine.kubectl import describe as D
from engine.run.orchestrator import Orchestrator
from engine.sim.effects import Effect, LogHint
from engine.sim.k8s import EPOCH
from engine.sim.logs import LOG_FILE_LINES
from engine.sim.simulator import Simulator
from engine.substrate import SubstrateError
from faults.generator import generate
from faults.spec import FaultSpec, load_catalog

HEALTHY_S = 600.0
WINDOW_S = 300.0


def _fault(app: str, fault_id: str) -> FaultSpec:
    return next(f for f in load_catalog(app).faults if f.id == fault_id)


def _pods(sim: Simulator, service: str) -> list[str]:
    return sorted(p for p, pod in sim.cluster.pods.items() if pod.service == service and not pod.terminating)


def _recent(sim: Simulator, pod: str, seconds: float = 120.0) -> list[str]:
    return sim.logs(pod, since=sim.now - seconds)


@pytest.fixture(scope="module")
def healthy() -> dict[str, Simulator]:
    sims = {}
    for app in ("online-boutique", "astronomy-shop", "train-ticket"):
        sim = Simulator(app, seed=3)
        sim.advance(HEALTHY_S)
        sims[app] = sim
    return sims


def _per_minute(sim: Simulator, pod: str) -> float:
    return len(sim.logs(pod, since=sim.now - WINDOW_S)) / (WINDOW_S / 60.0)


# -- volume -----------------------------------------------------------------------------

# (app, service): the busiest pod of each request-logging runtime writes at least this many
# lines a minute in a healthy run (access logs and per-request INFO lines).
LOUD = [
    ("online-boutique", "frontend", 300),          # Go, logrus: request started / complete
    ("online-boutique", "currencyservice", 300),   # Node.js, pino: conversion request lines
    ("online-boutique", "recommendationservice", 100),  # Python JSON logger
    ("online-boutique", "cartservice", 100),       # .NET Console.WriteLine per call
    ("online-boutique", "adservice", 100),         # Java
    ("astronomy-shop", "frontend-proxy", 300),     # Envoy access log
    ("train-ticket", "ts-ui-dashboard", 300),      # nginx access log
    ("train-ticket", "ts-travel-service", 300),    # Spring Boot
    ("train-ticket", "ts-route-service", 300),
]


@pytest.mark.parametrize(("app", "service", "floor"), LOUD, ids=[f"{a[:2]}-{s}" for a, s, _ in LOUD])
def test_request_logging_services_write_hundreds_of_lines_a_minute(
        healthy: dict[str, Simulator], app: str, service: str, floor: int) -> None:
    sim = healthy[app]
    rates = [_per_minute(sim, p) for p in _pods(sim, service)]
    assert max(rates) >= floor, (service, rates)
    # Never more than the kubelet's log file holds in the window read.
    assert max(rates) * WINDOW_S / 60.0 <= LOG_FILE_LINES


@pytest.mark.parametrize("app", ["online-boutique", "astronomy-shop", "train-ticket"])
def test_median_app_pod_is_far_above_two_lines_a_minute(healthy: dict[str, Simulator], app: str) -> None:
    sim = healthy[app]
    rates = sorted(_per_minute(sim, p) for p in sim.cluster.pods
                   if sim.app.service(sim.cluster.pods[p].service).role == "app")
    assert rates[len(rates) // 2] >= 20.0, rates


def test_quiet_grpc_servers_and_stores_stay_quiet_but_not_silent(healthy: dict[str, Simulator]) -> None:
    sim = healthy["online-boutique"]
    # productcatalogservice logs nothing per request (its handlers do not log).
    assert max(_per_minute(sim, p) for p in _pods(sim, "productcatalogservice")) < 10
    redis = _pods(sim, "redis-cart")[0]
    lines = sim.logs(redis)
    # Redis's RDB snapshot every 300 s: four lines in order, nothing per request.
    saves = [i for i, ln in enumerate(lines) if ln.endswith("100 changes in 300 seconds. Saving...")]
    assert saves, lines[-5:]
    i = saves[-1]
    if i + 3 < len(lines):
        assert "Background saving started by pid" in lines[i + 1]
        assert lines[i + 2].endswith("DB saved on disk") and ":C " in lines[i + 2]
        assert lines[i + 3].endswith("Background saving terminated with success")
    assert _per_minute(sim, redis) < 10


def test_reading_logs_is_deterministic_and_bounded() -> None:
    a, b = Simulator("online-boutique", seed=5), Simulator("online-boutique", seed=5)
    a.advance(240.0)
    b.advance(240.0)
    pod = _pods(a, "currencyservice")[0]
    assert a.logs(pod, tail=200) == b.logs(pod, tail=200)
    assert a.logs(pod, tail=50) == a.logs(pod, tail=200)[-50:]
    assert len(a.logs(pod)) <= LOG_FILE_LINES
    assert a.log_windows.maxlen is not None and len(a.log_windows) <= a.log_windows.maxlen


# -- formats ----------------------------------------------------------------------------

_SPRING = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} ( INFO| WARN|ERROR|DEBUG) 1 --- \[.{15}\] .{40} : ")
_NGINX = re.compile(r'^\d+\.\d+\.\d+\.\d+ - - \[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d \+0000\] "(GET|POST|PUT|DELETE|PATCH) '
                    r'\S+ HTTP/1\.1" \d{3} \d+ "-" "[^"]*"$')
_NGINX_ERROR = re.compile(r"^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d \[(error|warn|notice)\] \d+#\d+: ")
_ENVOY = re.compile(r'^\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\] "(GET|POST|PUT|DELETE) \S+ HTTP/1\.1" \d{3} \S+ \d+ '
                    r'\d+ \d+ \S+ "-" "[^"]*" "[^"]*" "[^"]*" "[^"]*"$')
_REDIS = re.compile(r"^\d+:[MC] \d\d \w{3} \d{4} \d\d:\d\d:\d\d\.\d{3} [*#] ")


def _json_lines(lines: list[str]) -> list[dict[str, Any]]:
    return [json.loads(ln) for ln in lines]


def test_go_services_write_logrus_json(healthy: dict[str, Simulator]) -> None:
    sim = healthy["online-boutique"]
    for service in ("frontend", "checkoutservice", "shippingservice"):
        lines = _recent(sim, _pods(sim, service)[0])
        assert lines
        for ln, rec in zip(lines, _json_lines(lines), strict=True):
            assert {"message", "severity", "timestamp"} <= rec.keys()
            assert ln == json.dumps(rec, sort_keys=True, separators=(",", ":"))  # Go's encoding/json, sorted
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", rec["timestamp"])
    done = [r for r in _json_lines(_recent(sim, _pods(sim, "frontend")[0])) if r["message"] == "request complete"]
    assert done and all(isinstance(r["http.resp.status"], int) and "http.req.id" in r for r in done)


def test_node_services_write_pino_json_naming_the_pod(healthy: dict[str, Simulator]) -> None:
    sim = healthy["online-boutique"]
    for service in ("currencyservice", "paymentservice"):
        pod = _pods(sim, service)[0]
        lines = _recent(sim, pod)
        recs = _json_lines(lines)
        assert recs and all(r["level"] in (20, 30, 40, 50, 60) and isinstance(r["time"], int) for r in recs)
        assert all(r["hostname"] == pod and r["pid"] == 1 and r["name"] == f"{service}-server" for r in recs)
        assert all(", " not in ln[:40] for ln in lines)  # pino writes compact JSON


def test_python_json_logger_and_mongodb_json(healthy: dict[str, Simulator]) -> None:
    ob = healthy["online-boutique"]
    recs = _json_lines(_recent(ob, _pods(ob, "recommendationservice")[0]))
    assert recs and all(r["name"] == "recommendationservice-server" and r["severity"] in ("INFO", "WARNING")
                        for r in recs)
    tt = healthy["train-ticket"]
    mongo = next(s.name for s in tt.app.services if s.language == "mongodb" and _pods(tt, s.name))
    recs = _json_lines(tt.logs(_pods(tt, mongo)[0]))
    assert any(r["msg"] == "Slow query" and r["c"] == "COMMAND" for r in recs)
    assert all("$date" in r["t"] and r["s"] in ("I", "W", "E") for r in recs)


def test_spring_nginx_envoy_and_redis_lines_match_their_formats(healthy: dict[str, Simulator]) -> None:
    tt = healthy["train-ticket"]
    spring = _recent(tt, _pods(tt, "ts-travel-service")[0])
    assert spring and all(_SPRING.match(ln) for ln in spring), [ln for ln in spring if not _SPRING.match(ln)][:3]
    nginx = _recent(tt, _pods(tt, "ts-ui-dashboard")[0])
    assert any(_NGINX.match(ln) for ln in nginx)
    assert all(_NGINX.match(ln) or _NGINX_ERROR.match(ln) for ln in nginx), \
        [ln for ln in nginx if not (_NGINX.match(ln) or _NGINX_ERROR.match(ln))][:3]
    ast = healthy["astronomy-shop"]
    envoy = _recent(ast, _pods(ast, "frontend-proxy")[0])
    assert envoy and all(_ENVOY.match(ln) for ln in envoy), [ln for ln in envoy if not _ENVOY.match(ln)][:3]
    redis = healthy["online-boutique"].logs(_pods(healthy["online-boutique"], "redis-cart")[0])
    assert all(_REDIS.match(ln) for ln in redis), [ln for ln in redis if not _REDIS.match(ln)][:3]


def test_no_revision_or_commit_in_any_start_up_line(healthy: dict[str, Simulator]) -> None:
    for sim in healthy.values():
        for pod in sim.cluster.pods:
            buf = sim.container_logs[pod]
            for _, line in buf.current:
                assert "revision" not in line.lower() and "commit" not in line.lower(), (pod, line)


def test_healthy_logs_have_background_warnings_but_no_errors_naming_ground_truth(
        healthy: dict[str, Simulator]) -> None:
    tt = healthy["train-ticket"]
    lines = [ln for p in _pods(tt, "ts-travel-service") for ln in tt.logs(p)]
    assert any(" WARN 1 --- " in ln for ln in lines)  # not-found lookups, unmapped favicon requests
    assert not any(" ERROR 1 --- " in ln for ln in lines)


# -- code faults: where the failure is logged ---------------------------------------------

def _severity_errors(lines: list[str]) -> list[str]:
    out = []
    for ln in lines:
        rec = json.loads(ln)
        if rec.get("severity") in ("error", "fatal") or rec.get("level", 0) >= 50:
            out.append(ln)
    return out


@pytest.fixture(scope="module")
def silent_fault() -> Simulator:
    sim = Simulator("online-boutique", seed=2)
    sim.advance(60.0)
    sim.apply_fault(_fault("online-boutique", "ob-checkout-usd-shortcut-inverted"))
    sim.advance(400.0)
    return sim


def test_silent_code_fault_leaves_no_error_in_the_faulty_service(silent_fault: Simulator) -> None:
    sim = silent_fault
    assert _fault("online-boutique", "ob-checkout-usd-shortcut-inverted").effect.log.where == "caller"  # type: ignore[union-attr]
    checkout = [ln for p in _pods(sim, "checkoutservice") for ln in _recent(sim, p)]
    assert checkout, "checkout still logs its requests"
    assert _severity_errors(checkout) == []


def test_silent_code_fault_surfaces_in_the_go_caller_as_grpc_go_wording(silent_fault: Simulator) -> None:
    sim = silent_fault
    frontend = [ln for p in _pods(sim, "frontend") for ln in _recent(sim, p)]
    errors = _severity_errors(frontend)
    assert len(errors) >= 10, "every failed checkout leaves a line (no cap)"
    rec = json.loads(errors[-1])
    assert rec["message"] == "request error"
    assert rec["error"].startswith("failed to complete the order: rpc error: code = Internal desc = failed to "
                                   "total the order")
    for ln in frontend + [ln for p in _pods(sim, "checkoutservice") for ln in _recent(sim, p)]:
        assert "ob-checkout" not in ln and "catalog" not in ln.lower()


def test_thrown_exception_is_a_stack_trace_in_the_faulty_service_and_an_error_in_callers() -> None:
    sim = Simulator("online-boutique", seed=2)
    sim.advance(60.0)
    sim.apply_fault(_fault("online-boutique", "ob-currency-jpy-truncated-nanos"))
    sim.advance(400.0)
    currency = [json.loads(ln) for p in _pods(sim, "currencyservice") for ln in _recent(sim, p)]
    errors = [r for r in currency if r["level"] == 50]
    assert errors and errors[-1]["err"]["type"] == "MoneyError"
    assert "\n    at convertVia (" in errors[-1]["err"]["stack"]  # a V8 stack frame
    frontend = _severity_errors([ln for p in _pods(sim, "frontend") for ln in _recent(sim, p)])
    assert any("rpc error: code = Unknown desc = nanos must have integer units and nanos" in ln for ln in frontend)


def test_where_none_defect_logs_nothing_anywhere_while_requests_fail() -> None:
    sim = Simulator("online-boutique", seed=2)
    sim.advance(60.0)
    sim.inject(Effect(id="wrong-value", service="shippingservice",
                      operations=("/hipstershop.ShippingService/GetQuote",), error_rate=1.0,
                      log=LogHint(message="quote of 0.00 USD", where="none")))
    sim.advance(200.0)
    window = sim.log_windows[-1]
    slots = window.layout.slots[_pods(sim, "shippingservice")[0]]
    assert float(window.fails[slots].sum()) > 0
    for service in ("shippingservice", "frontend", "checkoutservice"):
        lines = [ln for p in _pods(sim, service) for ln in _recent(sim, p, 60.0)]
        assert not any("quote of 0.00" in ln for ln in lines)
        assert not any("GetQuote" in json.loads(ln).get("error", "") for ln in lines)


def test_spring_caller_logs_resttemplate_exception_with_a_stack_trace() -> None:
    sim = Simulator("train-ticket", seed=2)
    sim.advance(30.0)
    sim.inject(Effect(id="price", service="ts-basic-service", error_rate=1.0,
                      log=LogHint(message="Rounding necessary", exception="java.lang.ArithmeticException",
                                  file="src/main/java/basic/service/BasicServiceImpl.java", function="money",
                                  line=88)))
    sim.advance(120.0)
    basic = [ln for p in _pods(sim, "ts-basic-service") for ln in _recent(sim, p, 60.0)]
    trace = [ln for ln in basic if " ERROR 1 --- " in ln]
    assert trace and "\n\njava.lang.ArithmeticException: Rounding necessary\n\tat basic.BasicServiceImpl.money(" \
        "BasicServiceImpl.java:88)" in trace[-1]
    callers = {c.service for s in sim.app.services for op in s.operations for c in op.calls
               if c.service == "ts-basic-service"} and [s.name for s in sim.app.services for op in s.operations
                                                       if any(c.service == "ts-basic-service" for c in op.calls)]
    lines = [ln for name in sorted(set(callers)) for p in _pods(sim, name) for ln in _recent(sim, p, 60.0)]
    client = [ln for ln in lines if "HttpServerErrorException$InternalServerError: 500 : [" in ln]
    assert client and "\n\tat org.springframework.web.client.RestTemplate." in client[-1]
    assert not any("rpc error: code =" in ln for ln in lines)  # no gRPC-Go wording in Java


def test_nginx_shows_upstream_failures_in_its_own_wording() -> None:
    sim = Simulator("train-ticket", seed=2)
    sim.advance(30.0)
    sim.scale("ts-travel-service", 0)
    sim.advance(150.0)
    lines = [ln for p in _pods(sim, "ts-ui-dashboard") for ln in _recent(sim, p, 60.0)]
    refused = [ln for ln in lines if "connect() failed (111: Connection refused) while connecting to upstream" in ln]
    assert refused and _NGINX_ERROR.match(refused[-1])
    assert any(_NGINX.match(ln) and '" 502 ' in ln for ln in lines)
    assert not any("rpc error" in ln or "Exception" in ln for ln in lines)


# -- crash sequences and containers that never started -------------------------------------

def test_crash_looping_spring_boot_never_logs_started_and_takes_a_jvm_start_up() -> None:
    sim = Simulator("train-ticket", seed=2)
    sim.advance(30.0)
    sim.inject(Effect(id="bean", service="ts-station-service", crash_on_start=True,
                      log=LogHint(message="Error creating bean with name 'stationServiceImpl'",
                                  exception="org.springframework.beans.factory.BeanCreationException",
                                  function="run")))
    pod = _pods(sim, "ts-station-service")[0]
    sim.restart_pod(pod)
    sim.advance(300.0)
    new = [p for p in _pods(sim, "ts-station-service") if sim.cluster.pods[p].container.restart_count >= 1]
    assert new
    the_pod = sim.cluster.pods[new[0]]
    last = the_pod.container.last_state
    assert last is not None and last["exitCode"] == 1
    prev = sim.logs(new[0], previous=True)
    assert prev[0].endswith("(/app/ts-station-service-1.0.jar started by root in /app)")
    assert not any(" : Started " in ln for ln in prev)
    assert "Application run failed" in prev[-1]
    assert "\n\norg.springframework.beans.factory.BeanCreationException: Error creating bean" in prev[-1]
    span = sim.container_logs[new[0]].prev_span
    assert span is not None and 15.0 <= span[1] - span[0] <= 40.0


def test_go_start_up_fatal_is_one_line_and_quick() -> None:
    sim = Simulator("online-boutique", seed=2)
    sim.advance(30.0)
    sim.apply_fault(_fault("online-boutique", "ob-productcatalog-crockford-ids"))
    sim.advance(600.0)
    crashing = [p for p in _pods(sim, "productcatalogservice") if sim.cluster.pods[p].container.restart_count >= 1]
    assert crashing
    prev = sim.logs(crashing[0], previous=True)
    last = json.loads(prev[-1])
    assert last["severity"] == "fatal" and last["message"].startswith("cannot start without a catalog")
    span = sim.container_logs[crashing[0]].prev_span
    assert span is not None and span[1] - span[0] < 3.0


def test_a_container_that_never_started_answers_with_the_kubelet_text() -> None:
    sim = Simulator("online-boutique", seed=2)
    sim.advance(30.0)
    sim.apply_fault(_fault("online-boutique", "ob-shipping-image-tag-missing"))
    seen: dict[str, str] = {}
    for _ in range(240):
        sim.advance(sim.now + 1.0)
        for name in _pods(sim, "shippingservice"):
            c = sim.cluster.pods[name].container
            if c.started_t is None and c.state == "waiting" and c.reason not in seen:
                with pytest.raises(SubstrateError) as err:
                    sim.logs(name)
                seen[c.reason] = str(err.value)
                assert str(err.value).startswith(f'container "{c.name}" in pod "{name}" is waiting to start: ')
    assert seen.get("ImagePullBackOff", "").endswith("is waiting to start: trying and failing to pull image")
    assert seen.get("ErrImagePull", "").endswith("is waiting to start: image can't be pulled")
    if "ContainerCreating" in seen:
        assert seen["ContainerCreating"].endswith("is waiting to start: ContainerCreating")


def test_query_logs_tool_keeps_tail_grep_since_and_prints_kubectl_bad_request(tmp_path: Path) -> None:
    run = Orchestrator(generate("online-boutique", 3, "short-5"), run_dir=tmp_path / "run")
    run.start()
    run.advance_to(300)
    run.tools.spend_time = False
    victim = _pods(run.sim, "frontend")[0]
    run.sim.restart_pod(victim)  # its replacement is being created right now
    run.sim.advance(run.sim.now + 1.0)
    res = run.tools.call("query_logs", {"deployment": "frontend", "tail": 5})
    assert res.ok, res.error
    chunks = res.text().split("\n\n")
    waiting = [c for c in chunks if "Error from server (BadRequest)" in c]
    assert len(waiting) == 1 and re.search(r'container "server" in pod "frontend-\S+" is waiting to start: '
                                           r"ContainerCreating$", waiting[0]), chunks
    serving = [c for c in chunks if c not in waiting and victim not in c]
    assert serving and len(serving[0].splitlines()) == 6  # header + tail 5
    res = run.tools.call("query_logs", {"deployment": "frontend", "grep": "REQUEST COMPLETE", "since_s": 20,
                                        "tail": 1000})
    # The tool layer bounds its output: keep the complete lines.
    body = [ln for ln in res.text().splitlines() if ln.startswith("{") and ln.endswith("}")]
    assert body and all("request complete" in ln for ln in body)
    now = EPOCH + timedelta(seconds=run.sim.now)
    for ln in body:
        ts = json.loads(ln)["timestamp"]
        assert (now - datetime.fromisoformat(ts.replace("Z", "+00:00"))).total_seconds() <= 20.5


# -- kubelet and controller wording ------------------------------------------------------

def _events(sim: Simulator, name_prefix: str, reason: str) -> list[str]:
    return [e["message"] for e in sim.events() if e["involvedObject"]["name"].startswith(name_prefix)
            and e["reason"] == reason]


def test_grpc_and_http_probe_failures_use_the_prober_wording() -> None:
    sim = Simulator("online-boutique", seed=2)
    sim.advance(30.0)
    sim.inject(Effect(id="nrs", service="cartservice", readiness_fails=True))
    sim.inject(Effect(id="nrs2", service="frontend", readiness_fails=True))
    sim.advance(90.0)
    cart = _events(sim, "cartservice", "Unhealthy")
    assert 'Readiness probe failed: service unhealthy (responded with "NOT_SERVING")' in cart
    assert "Readiness probe failed: HTTP probe failed with statuscode: 503" in _events(sim, "frontend", "Unhealthy")
    # A starting gRPC server: the prober's blocking dial times out (pkg/probe/grpc/grpc.go).
    sim.restart_pod(_pods(sim, "adservice")[0])
    sim.advance(sim.now + 60.0)
    starting = [m for m in _events(sim, "adservice", "Unhealthy") if "failed to connect service" in m]
    for m in starting:
        assert re.fullmatch(r'(Readiness|Liveness) probe failed: timeout: failed to connect service '
                            r'"10\.\d+\.\d+\.\d+:\d+" within 1s: context deadline exceeded', m), m


def test_liveness_kill_exit_code_follows_the_runtime() -> None:
    ob = Simulator("online-boutique", seed=2)
    ob.advance(30.0)
    ob.inject(Effect(id="hang-java", service="adservice", liveness_fails=True))
    ob.inject(Effect(id="hang-go", service="frontend", liveness_fails=True))
    ob.advance(150.0)
    java = [p for p in ob.cluster.pods.values() if p.service == "adservice" and p.container.restart_count]
    assert java and all((p.container.last_state or {}).get("exitCode") == 143 for p in java)  # JVM: 128 + 15
    assert "Liveness probe failed: timeout: health rpc did not complete within 1s" in _events(ob, "adservice",
                                                                                                "Unhealthy")
    live = _events(ob, "frontend", "Unhealthy")
    assert any(re.fullmatch(r'Liveness probe failed: Get "http://10\.\d+\.\d+\.\d+:8080/_healthz": context '
                            r"deadline exceeded \(Client\.Timeout exceeded while awaiting headers\)", m)
               for m in live), live[:3]
    killed = [p for p in ob.cluster.pods.values() if p.service == "frontend" and p.container.restart_count]
    assert killed and all((p.container.last_state or {}).get("exitCode") == 137 for p in killed)  # Go as PID 1
    obj = next(p for p in ob.objects("Pod") if p["metadata"]["name"] == killed[0].name)
    out = D.describe("pod", obj, ob.events(), now=EPOCH + timedelta(seconds=ob.now)).splitlines()
    i = out.index("    Last State:     Terminated")
    assert out[i + 1:i + 3] == ["      Reason:       Error", "      Exit Code:    137"]


def test_scale_events_read_as_the_deployment_controller_writes_them() -> None:
    sim = Simulator("online-boutique", seed=2)
    sim.advance(30.0)
    rs = next(r["metadata"]["name"] for r in sim.objects("ReplicaSet")
              if r["metadata"]["name"].startswith("frontend-") and r["spec"]["replicas"] == 2)
    sim.scale("frontend", 0)
    sim.advance(40.0)
    assert f"Scaled down replica set {rs} to 0 from 2" in _events(sim, "frontend", "ScalingReplicaSet")


def test_describe_pod_shows_token_volume_tolerations_and_container_ids() -> None:
    a, b = Simulator("online-boutique", seed=4), Simulator("online-boutique", seed=4)
    pod = next(p for p in a.objects("Pod") if p["metadata"]["name"].startswith("frontend-"))
    twin = next(p for p in b.objects("Pod") if p["metadata"]["name"] == pod["metadata"]["name"])
    out = D.describe("pod", pod, a.events(), now=EPOCH + timedelta(seconds=a.now))
    lines = out.splitlines()
    assert "Service Account:  default" in lines
    cid = next(ln for ln in lines if ln.startswith("    Container ID:"))
    assert re.fullmatch(r"    Container ID:   containerd://[0-9a-f]{64}", cid)
    assert twin["status"]["containerStatuses"][0]["containerID"] == cid.split()[-1]  # deterministic
    assert re.fullmatch(r"    Image ID:       \S+/frontend@sha256:[0-9a-f]{64}",
                        next(ln for ln in lines if ln.startswith("    Image ID:")))
    vol = next(ln.strip()[:-1] for ln in lines if re.fullmatch(r"  kube-api-access-[b-z2-9]{5}:", ln))
    assert f"      /var/run/secrets/kubernetes.io/serviceaccount from {vol} (ro)" in lines
    i = lines.index(f"  {vol}:")
    assert [ln.split(None, 1) for ln in lines[i + 1:i + 6]] == [
        ["Type:", "Projected (a volume that contains injected data from multiple sources)"],
        ["TokenExpirationSeconds:", "3607"], ["ConfigMapName:", "kube-root-ca.crt"], ["Optional:", "false"],
        ["DownwardAPI:", "true"]]
    t = next(j for j, ln in enumerate(lines) if ln.startswith("Tolerations:"))
    assert lines[t].split(None, 1)[1] == "node.kubernetes.io/not-ready:NoExecute op=Exists for 300s"
    assert lines[t + 1].strip() == "node.kubernetes.io/unreachable:NoExecute op=Exists for 300s"
