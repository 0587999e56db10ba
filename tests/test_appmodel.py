"""App models: the shipped files load, agree with the facts, and bad files fail clearly."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from engine.apps.model import (
    AppModelError,
    builtin_app_path,
    builtin_apps,
    load_app,
    load_app_file,
    parse_app,
    source_root,
)
from engine.kubectl.quantity import format_cpu, format_memory, parse_quantity
from engine.sim.calltree import static_profile

APPS = ["astronomy-shop", "online-boutique", "train-ticket"]


def test_three_apps_ship() -> None:
    assert builtin_apps() == APPS


@pytest.mark.parametrize("name", APPS)
def test_shipped_app_is_calibrated(name: str) -> None:
    """FORMAT.md's calibration rules hold at the peak of the load swing."""
    app = load_app(name)
    prof = static_profile(app, app.load.base_rps * (1 + app.load.swing))
    assert max(prof.utilisation.values()) < 0.5
    for route in app.routes:
        assert route.slo.latency_p95_ms >= 2.5 * prof.route_median_ms[route.name], route.name
    for svc in app.services:
        limit = svc.resources.limits.memory_bytes() or svc.resources.requests.memory_bytes()
        assert limit is not None
        assert parse_quantity(svc.memory_idle) < 0.6 * limit, svc.name


@pytest.mark.parametrize("name", APPS)
def test_stateless_app_services_run_two_replicas(name: str) -> None:
    app = load_app(name)
    for svc in app.services:
        if svc.role == "app" and svc.store is None and svc.workload == "Deployment":
            assert svc.replicas == 2, svc.name
        if svc.store is not None:
            assert svc.replicas == 1, svc.name


@pytest.mark.parametrize("name", APPS)
def test_handlers_exist_in_the_service_source(name: str) -> None:
    app = load_app(name)
    root = source_root(name)
    checked = 0
    for svc in app.services:
        for op in svc.operations:
            if op.handler is None:
                continue
            path, function = op.handler.split(":")
            file = root / svc.name / path
            assert file.is_file(), f"{svc.name} {op.name}: {file} missing"
            assert function.split(".")[-1] in file.read_text(encoding="utf-8"), f"{svc.name}: {function} not in {path}"
            checked += 1
    assert checked >= 20


@pytest.mark.parametrize("name", APPS)
def test_every_app_service_has_source(name: str) -> None:
    app = load_app(name)
    for svc in app.services:
        if svc.role == "app" and svc.operations:
            files = [p for p in (source_root(name) / svc.name).rglob("*") if p.is_file()]
            assert files, f"{svc.name} has no source tree"


def test_online_boutique_matches_the_facts(shared_data: Path) -> None:
    """Spot checks against FACTS.md section 1 and the manifest."""
    app = load_app("online-boutique")
    assert app.service("emailservice").service_port == 5000
    assert app.service("emailservice").port == 8080
    assert app.service("frontend").language == "go"
    assert app.service("cartservice").language == "csharp"
    assert app.service("redis-cart").store is not None
    assert not app.service("redis-cart").store.persistent  # type: ignore[union-attr]
    edges = set(app.edges())
    for callee in ("productcatalogservice", "currencyservice", "cartservice", "recommendationservice",
                   "shippingservice", "checkoutservice", "adservice"):
        assert ("frontend", callee) in edges
    for callee in ("cartservice", "productcatalogservice", "currencyservice", "shippingservice", "paymentservice",
                   "emailservice"):
        assert ("checkoutservice", callee) in edges
    assert ("recommendationservice", "productcatalogservice") in edges
    assert ("cartservice", "redis-cart") in edges
    # Every gRPC operation name is a method of demo.proto.
    proto = (shared_data / "online-boutique" / "demo.proto").read_text()
    rpcs = set(re.findall(r"rpc\s+(\w+)", proto))
    for svc in app.services:
        for op in svc.operations:
            if op.name.startswith("/hipstershop."):
                assert op.name.rsplit("/", 1)[1] in rpcs, op.name


def test_train_ticket_edges_cover_facts(shared_data: Path) -> None:
    """Every service-to-service edge of FACTS.md section 3 is a declared dependency."""
    facts = (shared_data / "FACTS.md").read_text()
    section = facts.split("### Call graph, service to service [S]")[1].split("In addition")[0]
    app = load_app("train-ticket")
    deps = {(s.name, d.service) for s in app.services for d in s.dependencies}
    expected = set()
    for line in section.splitlines():
        m = re.match(r"- (ts-[\w-]+) -> (.*)", line.strip())
        if not m:
            continue
        for callee in re.findall(r"(ts-[\w-]+) \(\d+\)", m.group(2)):
            expected.add((m.group(1), callee))
    assert len(expected) == 94
    assert expected <= deps, sorted(expected - deps)


def _ob_data() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(builtin_app_path("online-boutique").read_text())
    return data


def _error(data: dict[str, Any]) -> AppModelError:
    with pytest.raises(AppModelError) as info:
        parse_app(data, "bad.yaml")
    return info.value


def test_missing_field_names_file_and_field() -> None:
    data = _ob_data()
    del data["services"][0]["language"]
    err = _error(data)
    assert "bad.yaml" in str(err)
    assert "services[0].language" in str(err)


def test_unknown_call_target_is_named() -> None:
    data = _ob_data()
    data["services"][0]["operations"][0]["calls"][0]["operation"] = "NoSuchRpc"
    err = _error(data)
    assert "services[0].operations[0].calls[0].operation" in str(err)
    assert "NoSuchRpc" in str(err)


def test_bad_quantity_and_unknown_key() -> None:
    data = _ob_data()
    data["services"][1]["resources"]["limits"]["memory"] = "lots"
    data["services"][2]["replica"] = 3
    err = _error(data)
    locs = [loc for loc, _ in err.problems]
    assert "services[1].resources.limits.memory" in locs
    assert "services[2].replica" in locs


def test_call_cycle_and_shares() -> None:
    data = _ob_data()
    cart = next(s for s in data["services"] if s["name"] == "cartservice")
    cart["dependencies"].append({"service": "frontend"})
    cart["operations"][0]["calls"].append({"service": "frontend", "operation": "GET /"})
    err = _error(data)
    assert any("call cycle" in msg for _, msg in err.problems)
    data = _ob_data()
    data["routes"][0]["share"] = 0.5
    err = _error(data)
    assert any(loc == "routes" and "sum to" in msg for loc, msg in err.problems)


def test_undeclared_dependency_is_rejected() -> None:
    data = _ob_data()
    rec = next(s for s in data["services"] if s["name"] == "recommendationservice")
    rec["dependencies"] = []
    err = _error(data)
    assert any("not listed" in msg for _, msg in err.problems)


def test_malformed_yaml_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("name: [unclosed\n")
    with pytest.raises(AppModelError) as info:
        load_app_file(path)
    assert str(path) in str(info.value)
    path.write_text("- just\n- a list\n")
    with pytest.raises(AppModelError, match="mapping"):
        load_app_file(path)


def test_unknown_app_name() -> None:
    with pytest.raises(KeyError, match="shipped apps"):
        load_app("no-such-app")


def test_a_user_app_file_loads_by_path(tmp_path: Path) -> None:
    data = copy.deepcopy(_ob_data())
    data["name"] = "my-shop"
    path = tmp_path / "my-shop.yaml"
    path.write_text(yaml.safe_dump(data))
    assert load_app(str(path)).name == "my-shop"


@pytest.mark.parametrize(
    ("text", "value"),
    [("100m", 0.1), ("2", 2.0), ("1.5", 1.5), ("64Mi", 64 * 2**20), ("1Gi", 2**30), ("500M", 5e8), ("1e3", 1000.0)],
)
def test_parse_quantity(text: str, value: float) -> None:
    assert parse_quantity(text) == pytest.approx(value)


@given(st.integers(min_value=1, max_value=64_000))
def test_cpu_round_trip(millis: int) -> None:
    assert parse_quantity(format_cpu(millis / 1000)) == pytest.approx(millis / 1000)


@given(st.integers(min_value=1, max_value=2**40))
def test_memory_round_trip(num_bytes: int) -> None:
    assert parse_quantity(format_memory(num_bytes)) == num_bytes


@given(st.text(max_size=12))
def test_parse_quantity_never_crashes_otherwise(text: str) -> None:
    try:
        value = parse_quantity(text)
    except ValueError as exc:
        assert "quantity" in str(exc)
    else:
        assert value == value  # a number, not NaN
