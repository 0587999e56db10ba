"""``query_metrics`` (issue 16 item 6): PromQL over the run's Prometheus, shaped like its HTTP API.

Checked against independent sources where there is one: replica counts against the
Kubernetes objects kubectl reads, timestamps against the run's wall clock, the series
names against the substrate's own ``/metrics`` exposition.
"""

from __future__ import annotations

import json
import random
import re
import time
from pathlib import Path
from typing import Any

import pytest

from engine.operate import promquery
from engine.operate.tools import TOOLS, tool_schemas
from engine.run.orchestrator import Orchestrator
from engine.run.replay import replay
from engine.run.sealinputs import seal_run
from engine.sim.k8s import EPOCH
from faults.generator import generate
from faults.spec import load_catalog
from tui.human import HumanOperator

SCHEDULE = ("online-boutique", 3, "short-5")
T0 = 420.0
UNIX0 = EPOCH.timestamp()


def _run(until: float = T0) -> Orchestrator:
    r = Orchestrator(generate(*SCHEDULE))
    r.start()
    r.advance_to(until)
    r.tools.spend_time = False
    return r


@pytest.fixture(scope="module")
def run() -> Orchestrator:
    return _run()


def _q(run: Orchestrator, **args: Any) -> Any:
    return run.tools.call("query_metrics", args)


def test_the_tool_is_offered_to_every_operator() -> None:
    assert TOOLS["query_metrics"].tier == "read" and TOOLS["query_metrics"].cost == 5.0
    schema = next(s["function"] for s in tool_schemas() if s["function"]["name"] == "query_metrics")
    assert schema["parameters"]["required"] == ["query"]
    assert set(schema["parameters"]["properties"]) == {"query", "time", "start", "end", "step"}


def test_instant_vector_matches_the_cluster_and_prometheus_api_shape(run: Orchestrator) -> None:
    res = _q(run, query='kube_deployment_spec_replicas{namespace="online-boutique"}')
    assert res.ok, res.error
    body = res.data
    assert body["status"] == "success" and body["data"]["resultType"] == "vector"
    deployments = {d["metadata"]["name"]: d["spec"]["replicas"] for d in run.sim.objects("Deployment")}
    got = {}
    for item in body["data"]["result"]:
        ts, value = item["value"]
        assert isinstance(value, str) and ts == int(UNIX0 + T0)  # [unix seconds, "value"]
        assert item["metric"]["__name__"] == "kube_deployment_spec_replicas"
        got[item["metric"]["deployment"]] = float(value)
    assert got == {k: float(v) for k, v in deployments.items() if k in got} and len(got) >= 10
    json.dumps(body, allow_nan=False)  # plain JSON, as the API's
    assert "VALUE" in res.output and 'deployment="frontend"' in res.output


def test_scalar_string_and_range_vector_results(run: Orchestrator) -> None:
    scalar = _q(run, query="time()").data["data"]
    assert scalar == {"resultType": "scalar", "result": [int(UNIX0 + T0), str(int(UNIX0 + T0))]}
    assert _q(run, query='"hi"').data["data"] == {"resultType": "string", "result": [int(UNIX0 + T0), "hi"]}
    matrix = _q(run, query="kube_pod_created[1m]").data["data"]
    assert matrix["resultType"] == "matrix" and matrix["result"]
    for s in matrix["result"]:
        times = [p[0] for p in s["values"]]
        assert times == sorted(times) and times[0] >= UNIX0 + T0 - 60 and times[-1] <= UNIX0 + T0


def test_an_empty_answer_names_metrics_this_prometheus_never_had(run: Orchestrator) -> None:
    # node-exporter's memory series: the simulator exports only its CPU counters (engine/sim/exporters.py).
    res = _q(run, query="sum(node_memory_MemAvailable_bytes) or kube_pod_info{pod=\"none\"}")
    assert res.ok and res.data["data"]["result"] == []
    assert "no series named node_memory_MemAvailable_bytes in this run's Prometheus" in res.output
    assert "no series named" not in _q(run, query='kube_pod_info{pod="none"}').output


def test_values_are_written_as_prometheus_writes_them() -> None:
    assert [promquery.format_value(v) for v in (1.0, 0.1, 1e21, -0.0, 2.5e-7, float("nan"), float("inf"),
                                                float("-inf"))] == \
        ["1", "0.1", "1000000000000000000000", "-0", "0.00000025", "NaN", "+Inf", "-Inf"]


def test_range_query_steps_sort_and_render(run: Orchestrator) -> None:
    res = _q(run, query="sum by (service) (rate(http_requests_total[5m]))", start=120, end=420, step=30)
    assert res.ok, res.error
    data = res.data["data"]
    assert data["resultType"] == "matrix"
    keys = [sorted(s["metric"].items()) for s in data["result"]]
    assert keys == sorted(keys), "a range query's matrix is sorted by labels"
    for s in data["result"]:
        assert [p[0] for p in s["values"]] == [int(UNIX0) + t for t in range(120, 421, 30)]
    lines = res.output.splitlines()
    assert lines[0].startswith("range query 2:00..7:00 of run time, step 30 s, 11 points")
    assert lines[1].split()[:4] == ["LAST", "MIN", "MAX", "TREND"]
    row = next(ln for ln in lines if 'service="frontend"' in ln)
    assert re.search("[▁▂▃▄▅▆▇█]{5,}", row), row
    # the range's last point is the instant query at its end
    inst = {json.dumps(i["metric"], sort_keys=True): i["value"][1] for i in _q(
        run, query="sum by (service) (rate(http_requests_total[5m]))", time=420).data["data"]["result"]}
    assert {json.dumps(s["metric"], sort_keys=True): s["values"][-1][1] for s in data["result"]} == inst


def test_default_step_keeps_a_range_small(run: Orchestrator) -> None:
    from engine.run.orchestrator import EVAL_INTERVAL_S

    assert promquery.SCRAPE_INTERVAL_S == EVAL_INTERVAL_S
    res = _q(run, query="sum(kube_pod_status_ready)", start=-300)
    points = res.data["data"]["result"][0]["values"]
    assert len(points) <= promquery.DEFAULT_POINTS and points[1][0] - points[0][0] == 15


@pytest.mark.parametrize(("args", "kind", "message"), [
    ({"query": "sum(rate(http_requests_total[5m]"}, "bad_data", 'invalid parameter "query": '),
    ({"query": "no_such_function(up)"}, "bad_data", 'invalid parameter "query": '),
    ({"query": "up", "start": 400, "end": 300}, "bad_data", "end timestamp must not be before start time"),
    ({"query": "up", "start": 0, "step": 0.01}, "bad_data",
     "exceeded maximum resolution of 11,000 points per timeseries"),
    ({"query": "up[5m]", "start": 0}, "bad_data", 'invalid expression type "range vector" for range query'),
    ({"query": "up", "time": 300, "start": 0}, "bad_data", "not both"),
    ({"query": "up", "end": 300}, "bad_data", "needs start"),
    ({"query": "up", "time": T0 + 1}, "bad_data", "no samples from the future"),
    ({"query": "up", "start": 0, "end": T0 + 60}, "bad_data", "no samples from the future"),
    ({"query": "http_requests_total + on() http_requests_total"}, "execution", "many"),
])
def test_errors_have_the_prometheus_error_shape(run: Orchestrator, args: dict[str, Any], kind: str,
                                               message: str) -> None:
    res = _q(run, **args)
    assert not res.ok and not res.denied
    assert set(res.data) == {"status", "errorType", "error"}
    assert res.data["status"] == "error" and res.data["errorType"] == kind, res.data
    assert message in res.data["error"]
    assert res.error == f"{kind}: {res.data['error']}"
    last = [e.payload for e in run.stream.events if e.kind == "tool.call"][-1]
    assert last["tool"] == "query_metrics" and last["ok"] is False and last["result"].startswith("ERROR: ")


def test_malformed_arguments_are_refused_by_name(run: Orchestrator) -> None:
    for args, where in (({}, "query"), ({"query": "x" * 5000}, "query"), ({"query": "up", "step": -1}, "step"),
                        ({"query": "up", "time": "noon"}, "time"), ({"query": "up", "bogus": 1}, "bogus")):
        res = run.tools.call("query_metrics", args)
        assert not res.ok and res.error is not None and res.error.startswith("invalid arguments for query_metrics")
        assert where in res.error, res.error


def test_a_query_sees_nothing_after_its_time() -> None:
    later, early = _run(600.0), _run(300.0)
    query = 'http_requests_total{service="frontend"}'
    at_300 = _q(later, query=query, time=300).data
    assert at_300 == _q(early, query=query).data, "the run at 10:00 answers for 5:00 as the run at 5:00 did"
    window = _q(later, query=query + "[10m]", time=300).data["data"]["result"]
    assert window and all(p[0] <= UNIX0 + 300 for s in window for p in s["values"])
    ranged = _q(later, query=query, start=0, end=300, step=15).data
    assert ranged == _q(early, query=query, start=0, step=15).data
    # '@' and offset cannot reach past now either: the storage holds nothing later
    future = _q(early, query=f"{query} @ {int(UNIX0 + 600)}").data["data"]["result"]
    assert all(i["value"][0] == UNIX0 + 300 for i in future), "stamped with the evaluation time, as Prometheus does"
    assert [i["metric"] for i in future] == [i["metric"] for i in _q(early, query=query).data["data"]["result"]]
    assert [i["value"][1] for i in future] == [i["value"][1] for i in _q(early, query=query).data["data"]["result"]]


def test_only_what_the_scrape_exposes_and_no_ground_truth(tmp_path: Path) -> None:
    r = _run(900.0)
    assert any(rec.instance is not None and rec.instance.active for rec in r.faults.values()), "a fault is live"
    res = _q(r, query='count by (__name__) ({__name__=~".+"})')
    names = {i["metric"]["__name__"] for i in res.data["data"]["result"]}
    exposed = {m.group(1) for m in re.finditer(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{| )", r.sim.exposition(), re.M)}
    assert names - exposed <= {"ALERTS", "ALERTS_FOR_STATE"}, names - exposed
    everything = _q(r, query='{__name__=~".+"}', time=900)
    secrets = {f.id for f in load_catalog("online-boutique").faults}
    secrets |= {rec.spec.id for rec in r.faults.values()}
    for body in (everything.data, _q(r, query='{__name__=~".+"}[15m]').data):
        text = json.dumps(body)
        assert not any(s in text for s in secrets)
        keys = {k for s in body["data"]["result"] for k in s["metric"]}
        assert not any("fault" in k or "probe" in k or "truth" in k for k in keys), keys


def test_result_size_is_capped_with_a_note(run: Orchestrator) -> None:
    res = _q(run, query='{__name__=~".+"}')
    assert res.ok
    result = res.data["data"]["result"]
    total = int(float(_q(run, query='count({__name__=~".+"})').data["data"]["result"][0]["value"][1]))
    assert total > promquery.MAX_RESULT_SERIES == len(result)
    assert res.data["warnings"] == [f"showing 100 of {total} series: narrow the query (a label matcher, topk, "
                                    "sum by)"]
    assert f"vector, {total} series" in res.output and "more series not shown" in res.output
    assert len(res.output.splitlines()) < promquery.TEXT_SERIES + 5
    ranged = _q(run, query='{__name__=~".+"}', start=0, step=15)
    assert len(ranged.data["data"]["result"]) == 100 and "showing 100 of" in ranged.data["warnings"][0]


def test_expensive_queries_are_refused_before_they_run(run: Orchestrator) -> None:
    for query, args in (("max_over_time(rate(http_requests_total[5m])[3h:1s])", {}),
                        ("rate(http_requests_total[1h])", {"start": -300, "step": 0.1}),
                        ('count_values("v", {__name__=~".+"})', {"start": -300, "step": 1}),
                        ("max_over_time(vector(1)[1d:1s])", {})):
        t = time.perf_counter()
        res = _q(run, query=query, **args)
        assert time.perf_counter() - t < 1.0
        assert not res.ok and res.data["errorType"] == "execution", res.data
        assert "too many samples" in res.data["error"] or "too many steps" in res.data["error"]  # alerts.promql.budget
    res = _q(run, query='{__name__=~".+"}', start=-300, step=0.2)  # little to read, too much to return
    assert res.data["errorType"] == "execution" and "result points" in res.data["error"], res.data
    res = _q(run, query='label_replace(up, "a", "$1", "b", "(a|aa)*c")')
    assert res.data["errorType"] == "bad_data" and "exponential" in res.data["error"]
    # label matchers run on RE2: a catastrophic pattern for a backtracking engine is instant
    t = time.perf_counter()
    assert _q(run, query='{__name__=~".+", pod=~"(a|aa|.*)*y"}').ok
    assert time.perf_counter() - t < 1.0
    assert _q(run, query='{pod=~"(a"}').data["errorType"] == "bad_data"


def test_a_query_changes_nothing_in_the_run() -> None:
    quiet, busy = _run(300.0), _run(300.0)
    table = busy.alert_source.storage.labels  # type: ignore[union-attr]
    size = len(table)
    for q in ('label_replace({__name__=~"kube_pod.*"}, "x", "$1", "pod", "(.*)-.*")',
              'count_values("v", kube_pod_status_phase)', "sum by (pod) (rate(http_requests_total[5m]))"):
        assert _q(busy, query=q, start=0, step=30).ok
    assert len(table) == size, "label sets a query builds never reach the rule evaluator"
    busy.tools.spend_time = quiet.tools.spend_time = True
    quiet.advance_to(900.0)
    busy.advance_to(900.0)
    want = [(e.kind, e.payload) for e in quiet.stream.events if e.kind != "tool.call"]
    assert [(e.kind, e.payload) for e in busy.stream.events if e.kind != "tool.call"] == want


def test_a_query_costs_a_reads_run_time() -> None:
    r = _run(300.0)
    r.tools.spend_time = True
    t0 = r.now
    assert r.tools.call("query_metrics", {"query": "sum(up)"}).ok
    assert r.now == pytest.approx(t0 + 5.0)
    last = [e.payload for e in r.stream.events if e.kind == "tool.call"][-1]
    assert (last["tool"], last["tier"], last["reason"]) == ("query_metrics", "read", "read-only")


def test_player_queries_replay_to_the_same_answers(tmp_path: Path) -> None:
    """A player's queries between steps are re-issued by ``verify --replay`` and answer the same."""
    def play(run_dir: Path) -> list[dict[str, Any]]:
        run = Orchestrator(generate("online-boutique", 2, "short-5"), operator=HumanOperator(), clock="wall",
                           run_dir=run_dir)
        rnd = random.Random(11)
        queries = ["sum by (service) (rate(http_requests_total[5m]))", "ALERTS", "time() - kube_pod_created",
                   'histogram_quantile(0.95, sum by (le) (rate(http_request_duration_seconds_bucket[5m])))']
        t, bodies = 0.0, []
        run.start()
        while not run.finished:
            t += rnd.choice([3, 7, 11, 29])
            run.advance_to(t)
            if run.finished:
                break
            if rnd.random() < 0.2:
                q = rnd.choice(queries)
                args: dict[str, Any] = {"query": q} if rnd.random() < 0.5 else \
                    {"query": q, "start": max(0.0, run.now - 600), "step": 30}
                bodies.append(run.tools.call("query_metrics", args).data)
        run.close()
        return bodies

    bodies = play(tmp_path / "a")
    assert len(bodies) > 20 and all(b["status"] == "success" for b in bodies)
    again = play(tmp_path / "b")
    assert again == bodies, "the same run and calls give the same answers, in full"
    report = replay(seal_run(tmp_path / "a"))
    assert report.ok, report.format()
