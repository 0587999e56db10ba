"""The importer on inputs shaped like the demos issue 16 tried (a sock shop with a MySQL catalogue
database and an unmatched ZIPKIN address, a hotel app with memcached, consul and a UDP tracing
agent): stores and brokers from images, commands, port names and server env; entry points from
NodePort/LoadBalancer Services, Ingresses and HTTPRoutes; edges from env (``*_HOST`` + ``*_PORT``,
bare names), args, mounted ConfigMaps and a traces file; the Service's port; UDP and dangling
references reported; every guess and default recorded and listed by ``marathon app check``.
"""

from __future__ import annotations

import argparse
import inspect
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from engine.apps.check import check_app, render_check
from engine.apps.cli import add_check_arguments, add_import_arguments, cmd_app_check, cmd_app_import
from engine.apps.importer import ManifestImportError, dump_skeleton, import_manifests, read_traces
from engine.apps.importfill import APP_CPU_MS, DEFAULT_BASE_RPS, MAX_UTILISATION, profile
from engine.apps.model import AppModelError, load_app, load_app_file
from engine.sim.calltree import static_profile
from engine.sim.simulator import Simulator


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def deployment(name: str, image: str, *, ports: str = "", env: str = "", extra: str = "", args: str = "",
               kind: str = "Deployment", volumes: str = "", labels: str = "") -> str:
    """One workload document; ``ports``/``env``/``volumes`` are flow-style YAML lists."""
    container = f"{{name: {name}, image: {image!r}"
    for key, value in (("ports", ports), ("env", env), ("args", args)):
        if value:
            container += f", {key}: {value}"
    container += extra + "}"
    pod = f"{{containers: [{container}]" + (f", volumes: {volumes}" if volumes else "") + "}"
    return (f"apiVersion: apps/v1\nkind: {kind}\nmetadata: {{name: {name}, namespace: socks}}\n"
            f"spec:\n  template:\n    metadata: {{labels: {{app: {name}{labels}}}}}\n    spec: {pod}\n---\n")


def service(name: str, port: int, target: int | str, *, kind: str = "ClusterIP", protocol: str = "") -> str:
    proto = f", protocol: {protocol}" if protocol else ""
    return (f"apiVersion: v1\nkind: Service\nmetadata: {{name: {name}}}\nspec: {{type: {kind}, selector: "
            f"{{app: {name}}}, ports: [{{port: {port}, targetPort: {target}{proto}}}]}}\n---\n")


SOCKS = "".join([
    deployment("front-end", "weaveworksdemos/front-end:0.3.12", ports="[{containerPort: 8079}]",
               env="[{name: NODE_ENV, value: production}, {name: CATALOGUE_HOST, value: catalogue},"
                   " {name: CATALOGUE_PORT, value: '80'}, {name: SESSION_REDIS, value: session-db}]"),
    service("front-end", 80, 8079, kind="NodePort"),
    deployment("catalogue", "weaveworksdemos/catalogue:0.3.5", ports="[{containerPort: 9090}, {containerPort: 80}]",
               args="['-port=80', '-DSN=catalogue_user:default_password@tcp(catalogue-db:3306)/socksdb']",
               env="[{name: ZIPKIN, value: zipkin.jaeger.svc.cluster.local}]"),
    service("catalogue", 80, 80),
    deployment("catalogue-db", "weaveworksdemos/catalogue-db:0.3.0", ports="[{name: mysql, containerPort: 3306}]",
               env="[{name: MYSQL_ROOT_PASSWORD, value: fake}, {name: MYSQL_DATABASE, value: socksdb}]"),
    service("catalogue-db", 3306, 3306),
    deployment("carts", "weaveworksdemos/carts:0.4.8", ports="[{containerPort: 80}]",
               env="[{name: JAVA_OPTS, value: -Xms64m}]",
               volumes="[{name: data, persistentVolumeClaim: {claimName: carts-data}}]"),
    service("carts", 80, 80),
    deployment("carts-db", "mongo:3.4", ports="[{name: mongo, containerPort: 27017}]"),
    service("carts-db", 27017, 27017),
    deployment("session-db", "redis:alpine", ports="[{containerPort: 6379}]"),
    service("session-db", 6379, 6379),
    deployment("orders", "weaveworksdemos/orders:0.4.7", ports="[{containerPort: 80}]",
               extra=", envFrom: [{configMapRef: {name: orders-settings}}]"),
    service("orders", 80, 80),
    deployment("queue-master", "weaveworksdemos/queue-master:0.3.1",
               env="[{name: RABBIT_ADDR, value: 'amqp://rabbitmq:5672'}]"),
    deployment("rabbitmq", "rabbitmq:3.6.8-management",
               ports="[{name: management, containerPort: 15672}, {name: amqp, containerPort: 5672}]"),
    service("rabbitmq", 5672, 5672),
    deployment("user-cache", "bitnami/cachesrv:1", ports="[{containerPort: 11211}]",
               args="['memcached', '-m', '64']"),
    service("user-cache", 11211, 11211),
    deployment("jaeger-agent", "jaegertracing/jaeger-agent:1.53",
               ports="[{containerPort: 6831, protocol: UDP}, {containerPort: 5778}]"),
    service("jaeger-agent", 6831, 6831, protocol="UDP"),
    deployment("consul", "hashicorp/consul:1.15", ports="[{containerPort: 8500}]"),
    service("consul", 8500, 8500),
    deployment("node-agent", "example/agent:1", kind="DaemonSet"),
    deployment("memcached-geo", "memcached", ports="[{containerPort: 11211}]"),
    service("memcached-geo", 11211, 11211),
    deployment("geo", "example/geo:1", ports="[{containerPort: 8083}]",
               args="['-registry-addr=consul:8500', '--memc', 'user-cache:11211']"),
    service("geo", 8083, 8083),
])
SOCKS_ROUTING = """
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: shop}
spec:
  rules:
    - host: shop.example.com
      http:
        paths:
          - {path: /geo, pathType: Prefix, backend: {service: {name: geo, port: {number: 8083}}}}
          - {path: /gone, pathType: Prefix, backend: {service: {name: legacy, port: {number: 80}}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: orders}
spec:
  hostnames: [orders.example.com]
  rules:
    - matches: [{path: {type: PathPrefix, value: /orders}}]
      backendRefs: [{name: orders, port: 80}]
"""


@pytest.fixture()
def socks(tmp_path: Path) -> dict[str, Any]:
    path = write(tmp_path / "socks.yaml", SOCKS)
    routing = write(tmp_path / "routing.yaml", SOCKS_ROUTING)
    return import_manifests([path, routing])


def svc(model: dict[str, Any], name: str) -> dict[str, Any]:
    return next(s for s in model["services"] if s["name"] == name)


def guessed(model: dict[str, Any], service: str, field: str) -> dict[str, Any]:
    return next(g for g in model["imported"]["guesses"] if g["service"] == service and g["field"] == field)


def test_stores_and_brokers_from_image_command_port_name_and_env(socks: dict[str, Any]) -> None:
    engines = {s["name"]: s["store"]["engine"] for s in socks["services"] if "store" in s}
    assert engines == {"catalogue-db": "mysql", "carts-db": "mongodb", "session-db": "redis",
                       "rabbitmq": "rabbitmq", "user-cache": "memcached", "memcached-geo": "memcached"}
    # catalogue-db's image names no engine: its port named mysql does (checked before the env).
    assert guessed(socks, "catalogue-db", "store.engine")["evidence"] == "container port 3306 named 'mysql'"
    assert guessed(socks, "user-cache", "store.engine")["evidence"] == "command memcached"
    assert svc(socks, "user-cache")["store"]["persistent"] is False
    assert svc(socks, "catalogue-db")["language"] == "mysql"
    assert svc(socks, "user-cache")["language"] == "memcached"
    assert guessed(socks, "carts", "language") == {"service": "carts", "field": "language", "value": "java",
                                                    "evidence": "env JAVA_OPTS"}
    infra = socks["imported"]["infrastructure"]
    assert infra == [{"service": "consul", "kind": "consul", "evidence": "image hashicorp/consul:1.15"}]


def test_store_from_server_env_alone(tmp_path: Path) -> None:
    path = write(tmp_path / "db.yaml", deployment("db", "example/db:1", ports="[{containerPort: 3307}]",
                                                 env="[{name: MYSQL_ROOT_PASSWORD, value: x}]")
                 + deployment("web", "example/web:1", ports="[{containerPort: 80}]",
                              env="[{name: DB_HOST, value: db}, {name: DB_PORT, value: '3307'}]"))
    model = import_manifests([path])
    assert svc(model, "db")["store"] == {"engine": "mysql", "persistent": False}
    assert "MYSQL_ROOT_PASSWORD" in guessed(model, "db", "store.engine")["evidence"]
    assert svc(model, "web")["dependencies"] == [{"service": "db", "env": "DB_HOST"}]
    web_edge = next(e for e in model["imported"]["evidence"] if e["caller"] == "web")
    assert web_edge["port"] == 3307  # the *_HOST + *_PORT pair


def test_entry_points_from_nodeport_ingress_and_httproute(socks: dict[str, Any]) -> None:
    points = socks["imported"]["entry_points"]
    assert {"service": "front-end", "via": "Service front-end (type NodePort)"} in points
    assert {"service": "geo", "via": "Ingress shop", "path": "/geo"} in points
    assert {"service": "orders", "via": "HTTPRoute orders", "path": "/orders"} in points
    routes = {r["entry"]["service"]: r for r in socks["routes"]}
    assert set(routes) == {"front-end", "geo", "orders"}
    assert all(abs(r["share"] - 1 / 3) < 1e-9 for r in routes.values())
    assert routes["geo"]["path"] == "/geo"
    assert guessed(socks, None, "routes")["value"] == ["front-end", "geo", "orders"]
    assert "geo (Ingress shop)" in guessed(socks, None, "routes")["evidence"]
    legacy = next(d for d in socks["imported"]["dangling"] if d["name"] == "legacy")
    assert legacy["caller"] == "Ingress/shop" and "no Service legacy" in legacy["hint"]


def test_helm_list_and_a_v1beta1_ingress(tmp_path: Path) -> None:
    """Rendered charts come as multi-document YAML, sometimes as a ``kind: List``; older
    Ingresses name their backend ``serviceName`` (``extensions/v1beta1``)."""
    items = yaml.safe_load_all(deployment("web", "example/web:1", ports="[{containerPort: 3000}]")
                               + service("web", 80, 3000))
    listed = {"apiVersion": "v1", "kind": "List", "items": [d for d in items if d]}
    path = write(tmp_path / "rendered.yaml", "# Source: chart/templates/all.yaml\n" + yaml.safe_dump(listed) + """
        ---
        apiVersion: extensions/v1beta1
        kind: Ingress
        metadata: {name: old}
        spec:
          backend: {serviceName: web, servicePort: 80}
        """.replace("\n        ", "\n"))
    model = import_manifests([path])
    assert model["imported"]["entry_points"] == [{"service": "web", "via": "Ingress old", "path": "/"}]
    assert (svc(model, "web")["port"], svc(model, "web")["service_port"]) == (3000, 80)
    assert [r["entry"]["service"] for r in model["routes"]] == ["web"]


def test_edges_from_env_args_and_bare_names(socks: dict[str, Any]) -> None:
    def deps(name: str) -> dict[str, str | None]:
        return {d["service"]: d["env"] for d in svc(socks, name)["dependencies"]}

    assert deps("front-end") == {"catalogue": "CATALOGUE_HOST", "session-db": "SESSION_REDIS"}
    bare = next(e for e in socks["imported"]["evidence"] if e.get("env") == "SESSION_REDIS")
    assert bare["via"] == "env-bare-name"
    assert guessed(socks, "front-end", "dependencies")["evidence"] == \
        "env SESSION_REDIS=session-db: the value is the name of Service session-db"
    assert deps("catalogue") == {"catalogue-db": None}  # -DSN=...@tcp(catalogue-db:3306)/socksdb
    assert deps("geo") == {"consul": None, "user-cache": None, "memcached-geo": None}  # the last by name
    assert deps("queue-master") == {"rabbitmq": "RABBIT_ADDR"}
    # The call trees follow: consul's calls are optional, queue-master consumes from rabbitmq.
    geo_calls = {c["service"]: c for c in svc(socks, "geo")["operations"][0]["calls"]}
    assert geo_calls["consul"].get("optional") is True and "optional" not in geo_calls["user-cache"]
    assert geo_calls["user-cache"]["operation"] == "get"
    rabbit = svc(socks, "rabbitmq")["operations"][0]
    assert rabbit["name"] == "publish"
    assert rabbit["calls"] == [{"service": "queue-master", "operation": "consume", "async": True}]
    assert svc(socks, "queue-master")["protocol"] == "kafka" and "port" not in svc(socks, "queue-master")
    # Name stems pair the stores nobody addresses: carts-db -> carts.
    assert deps("carts") == {"carts-db": None}
    assert "name stem 'carts'" in guessed(socks, "carts", "dependencies")["evidence"]


def test_service_port_udp_and_dangling_references(socks: dict[str, Any]) -> None:
    # catalogue's first container port is 9090; its Service exposes 80.
    assert (svc(socks, "catalogue")["port"], svc(socks, "catalogue")["service_port"]) == (80, 80)
    assert (svc(socks, "front-end")["port"], svc(socks, "front-end")["service_port"]) == (8079, 80)
    udp = socks["imported"]["udp"]
    assert {"workload": "jaeger-agent", "container": "jaeger-agent", "port": 6831, "protocol": "UDP"} in udp
    assert {"kubernetes_service": "jaeger-agent", "port": 6831, "protocol": "UDP"} in udp
    assert svc(socks, "jaeger-agent")["port"] == 5778  # the TCP port
    dangling = {(d["caller"], d["name"]): d for d in socks["imported"]["dangling"]}
    assert dangling[("catalogue", "zipkin")]["env"] == "ZIPKIN"
    assert "no PersistentVolumeClaim carts-data" in dangling[("carts", "carts-data")]["hint"]
    assert dangling[("orders", "orders-settings")]["via"] == "envFrom configMapRef"
    assert "ConfigMap orders-settings is not in the manifests" in dangling[("orders", "orders-settings")]["hint"]
    assert "not modelled (the model holds Deployments and StatefulSets): DaemonSet/node-agent" in \
        socks["imported"]["warnings"]


def test_output_loads_and_runs_with_no_edits(socks: dict[str, Any], tmp_path: Path) -> None:
    path = write(tmp_path / "socks-model.yaml", dump_skeleton(socks))
    app = load_app_file(path)
    assert app.imported is not None
    assert app.service("user-cache").store is not None and app.service("user-cache").store.engine == "memcached"
    sim = Simulator(app, seed=3)
    sim.advance(240.0)
    health = {r.route: r for r in sim.route_health(120.0)}
    assert set(health) == {"front-end", "geo", "orders"}
    assert all(r.rps > 0 and r.error_share < 0.02 for r in health.values())


def test_every_unknown_is_a_recorded_default(socks: dict[str, Any]) -> None:
    defaults = {(d["service"], d["field"]): d for d in socks["imported"]["defaults"]}
    assert defaults[("geo", "language")]["value"] == "go"
    assert defaults[("geo", "operations[0]")]["value"] == {"name": "GET /", "cpu_ms": APP_CPU_MS, "latency_ms": 7.0}
    assert defaults[(None, "load.base_rps")]["value"] == DEFAULT_BASE_RPS
    assert defaults[("loadgenerator", "role")]["value"] == "loadgenerator"  # none in the manifests: one added
    assert defaults[("geo", "resources.requests.memory")]["value"] == "128Mi"
    for i, route in enumerate(socks["routes"]):
        assert defaults[(None, f"routes[{i}].slo")]["value"] == route["slo"]
        assert route["slo"]["latency_p95_ms"] >= 500


def test_base_rate_is_lowered_below_the_utilisation_bound(tmp_path: Path) -> None:
    """A tiny CPU limit: the default 10 req/s would saturate it, so the rate is lowered."""
    path = write(tmp_path / "tiny.yaml", deployment(
        "api", "example/api:1", ports="[{containerPort: 80}]",
        extra=", resources: {limits: {cpu: 5m, memory: 64Mi}}") + service("api", 80, 80, kind="LoadBalancer"))
    model = import_manifests([path])
    rate = model["load"]["base_rps"]
    assert rate < DEFAULT_BASE_RPS
    util, _ = profile(load_app_file(write(tmp_path / "m.yaml", dump_skeleton(model))), rate * 1.15)
    assert max(util.values()) <= MAX_UTILISATION + 1e-9


@pytest.mark.parametrize("app", ["online-boutique", "astronomy-shop", "train-ticket"])
def test_profile_agrees_with_the_simulator_static_profile(app: str) -> None:
    model = load_app(app)
    util, medians = profile(model, model.load.base_rps)
    ref = static_profile(model)
    assert all(abs(util[s] - ref.utilisation[s]) < 1e-9 for s in util)
    assert all(abs(medians[r] - ref.route_median_ms[r]) < 1e-9 for r in medians)


def test_edges_from_a_mounted_config_file(tmp_path: Path) -> None:
    """Client-library settings in a mounted ConfigMap: a Spring properties file and a JDBC URL."""
    path = write(tmp_path / "app.yaml", textwrap.dedent("""
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: orders-config}
        data:
          application.properties: |
            spring.data.mongodb.host=orders-mongo
            spring.datasource.url=jdbc:mysql://ledger:3306/orders
            spring.application.name=shipping
        ---
        """) + deployment(
        "orders", "example/orders:1", ports="[{containerPort: 80}]",
        extra=", volumeMounts: [{name: cfg, mountPath: /config}]",
        volumes="[{name: cfg, configMap: {name: orders-config}}]")
        + service("orders", 80, 80, kind="LoadBalancer")
        + deployment("orders-mongo", "mongo:4", ports="[{containerPort: 27017}]")
        + service("orders-mongo", 27017, 27017)
        + deployment("ledger", "mysql:8", ports="[{containerPort: 3306}]") + service("ledger", 3306, 3306)
        + deployment("shipping", "example/shipping:1", ports="[{containerPort: 80}]") + service("shipping", 80, 80))
    model = import_manifests([path])
    assert {d["service"] for d in svc(model, "orders")["dependencies"]} == {"orders-mongo", "ledger"}
    found = {e["callee"]: e for e in model["imported"]["evidence"] if e["caller"] == "orders"}
    assert found["ledger"]["via"] == "configmap"
    assert found["ledger"]["container"] == "orders-config/application.properties"
    assert svc(model, "orders")["config_refs"] == [{"kind": "ConfigMap", "name": "orders-config", "volume": "cfg",
                                                    "mount_path": "/config"}]


def test_config_file_baked_into_an_image_and_proxy_fan_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                            ) -> None:
    """``--config ui=nginx.conf``: its proxy_pass lines are edges, its directives say nginx, and a
    reverse proxy forwards each request to one backend (times 1/n), not to all of them."""
    path = write(tmp_path / "app.yaml", deployment("ui", "example/ui:1", ports="[{containerPort: 8080}]")
                 + service("ui", 8080, 8080, kind="NodePort")
                 + "".join(deployment(n, f"example/{n}:1", ports="[{containerPort: 80}]") + service(n, 80, 80)
                           for n in ("users", "orders", "search")))
    conf = write(tmp_path / "nginx.conf", """
        upstream search_backend { server search:80; }
        server {
          listen 8080;
          location /api/v1/users { proxy_pass http://users:80; }
          location /api/v1/orders { proxy_pass http://orders:80; }
          location /search { proxy_pass http://search_backend; }
          location /legacy { proxy_pass http://mainframe:23; }
        }
        """)
    model = import_manifests([path], config_files={"ui": conf})
    ui = svc(model, "ui")
    assert {d["service"] for d in ui["dependencies"]} == {"users", "orders", "search"}
    assert guessed(model, "ui", "language")["value"] == "nginx"
    assert [c["times"] for c in ui["operations"][0]["calls"]] == [0.333333] * 3
    assert {e["via"] for e in model["imported"]["evidence"] if e["caller"] == "ui"} == {"config-file"}
    assert model["provenance"][-1] == f"ui={conf}"
    out = tmp_path / "m.yaml"
    out.write_text(dump_skeleton(model), encoding="utf-8")
    states = {(n.note.service, n.note.field): n.state for n in check_app(out).notes}
    assert states[("ui", "operations[0].calls[*].times")] == "in use"

    parser = argparse.ArgumentParser()
    add_import_arguments(parser)
    assert cmd_app_import(parser.parse_args([str(path), "--config", f"nobody={conf}"])) == 2
    assert "--config names 'nobody'" in capsys.readouterr().err
    assert cmd_app_import(parser.parse_args([str(path), "--config", str(conf)])) == 2
    assert "expects WORKLOAD=FILE" in capsys.readouterr().err


def test_traces_file_adds_observed_calls(tmp_path: Path) -> None:
    path = write(tmp_path / "app.yaml", deployment("web", "example/web:1", ports="[{containerPort: 80}]")
                 + service("web", 80, 80, kind="LoadBalancer")
                 + deployment("api", "example/api:1", ports="[{containerPort: 80}]") + service("api", 80, 80))
    traces = write(tmp_path / "calls.jsonl", """
        # observed in staging
        {"from": "web", "to": "api", "calls": 120}
        {"from": "web", "to": "api.shop.svc.cluster.local"}
        {"from": "api", "to": "billing"}
        """)
    model = import_manifests([path], traces=traces)
    assert svc(model, "web")["dependencies"] == [{"service": "api", "env": None}]
    assert svc(model, "web")["operations"][0]["calls"] == [{"service": "api", "operation": "GET /"}]
    assert model["imported"]["traces"][0] == {"from": "web", "to": "api", "calls": 120}
    assert any(d["name"] == "billing" and d["via"] == "trace" for d in model["imported"]["dangling"])
    assert model["provenance"][-1] == str(traces)


def test_traces_errors_name_file_and_line(tmp_path: Path) -> None:
    bad = write(tmp_path / "t.jsonl", '{"from": "a", "to": "b"}\n{"from": "a"}\n')
    with pytest.raises(ManifestImportError, match=r"t\.jsonl: line 2: expected"):
        read_traces(bad)
    bad.write_text('{"from": "a", "to": "b", "calls": 0}\n', encoding="utf-8")
    with pytest.raises(ManifestImportError, match="calls must be a positive integer"):
        read_traces(bad)
    bad.write_text("not json\n", encoding="utf-8")
    with pytest.raises(ManifestImportError, match="line 1: not JSON"):
        read_traces(bad)
    bad.write_text('[{"from": "a", "to": "b"}]', encoding="utf-8")
    assert read_traces(bad) == [{"from": "a", "to": "b", "calls": 1}]


def test_app_check_lists_defaults_in_use_and_replaced(socks: dict[str, Any], tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    data = yaml.safe_load(dump_skeleton(socks))
    data["load"]["base_rps"] = 25  # the user sets the rate: no longer a default
    next(s for s in data["services"] if s["name"] == "geo")["language"] = "go"  # same value: still the default
    path = tmp_path / "socks.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    report = check_app(path)
    states = {(n.note.service, n.note.field): n.state for n in report.notes}
    assert states[(None, "load.base_rps")] == "replaced"
    assert states[("geo", "language")] == "in use"
    assert states[("carts", "dependencies")] == "in use"
    text = render_check(path, report)
    assert "services.geo.language = go" in text and "load.base_rps (replaced)" in text
    assert "dangling references: 4" in text and "UDP ports (not modelled): 2" in text

    parser = argparse.ArgumentParser()
    add_check_arguments(parser)
    assert cmd_app_check(parser.parse_args([str(path)])) == 0
    assert "defaults still in use" in capsys.readouterr().out


def _check_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], data: dict[str, Any]) -> tuple[Path, str]:
    """``marathon app check`` of ``data`` written to a file: (the file, stderr); exit code 2."""
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    parser = argparse.ArgumentParser()
    add_check_arguments(parser)
    assert cmd_app_check(parser.parse_args([str(path)])) == 2
    return path, capsys.readouterr().err


def test_app_check_exit_2_names_file_and_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = yaml.safe_load((Path(__file__).resolve().parents[1] / "engine/apps/online-boutique.yaml").read_text())
    data["services"][0]["language"] = "cobol"
    path, err = _check_exit_2(tmp_path, capsys, data)
    assert f"{path}: services[0].language:" in err
    with pytest.raises(AppModelError):
        check_app(path)


def test_shipped_model_checks_without_import_notes(capsys: pytest.CaptureFixture[str]) -> None:
    path = Path(__file__).resolve().parents[1] / "engine/apps/online-boutique.yaml"
    text = render_check(path, check_app(path))
    assert "not an imported model" in text and "loads: online-boutique, 12 services, 6 routes" in text


def test_cli_import_with_traces(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "app.yaml", deployment("web", "example/web:1", ports="[{containerPort: 80}]")
                 + service("web", 80, 80, kind="NodePort"))
    traces = write(tmp_path / "t.jsonl", '{"from": "web", "to": "nowhere"}\n')
    parser = argparse.ArgumentParser()
    add_import_arguments(parser)
    out = tmp_path / "out.yaml"
    assert cmd_app_import(parser.parse_args([str(path), "--traces", str(traces), "-o", str(out)])) == 0
    assert "1 route(s)" in capsys.readouterr().err
    assert load_app_file(out).imported is not None
    bad = write(tmp_path / "bad.jsonl", "{\n")
    assert cmd_app_import(parser.parse_args([str(path), "--traces", str(bad)])) == 2
    assert "bad.jsonl: line 1: not JSON" in capsys.readouterr().err


def test_a_long_service_chain_imports_and_loads(tmp_path: Path) -> None:
    # Each svc{i} calls svc{i+1} through NEXT_ADDR: one call chain 400 deep, run under a
    # recursion limit 250 frames above this test's own depth, so a recursive walk (the
    # importer's cycle walk and profile, the model loader's cycle check) fails as a 3,000-deep
    # chain failed under Python's default limit (review finding 4), at a tenth of the time.
    n = 400
    text = "".join(deployment(f"svc{i}", "example/app:1", ports="[{containerPort: 8080}]",
                              env=f"[{{name: NEXT_ADDR, value: 'svc{i + 1}:80'}}]" if i + 1 < n else "")
                   + service(f"svc{i}", 80, 8080) for i in range(n))
    path = write(tmp_path / "chain.yaml", text)
    out = tmp_path / "chain-model.yaml"
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack(0)) + 250)
    try:
        model = import_manifests([path], name="chain")
        out.write_text(dump_skeleton(model), encoding="utf-8")
        app = load_app_file(out)
    finally:
        sys.setrecursionlimit(old)
    calls = {s["name"]: [c["service"] for op in s["operations"] for c in op["calls"]] for s in model["services"]}
    assert calls["svc0"] == ["svc1"] and calls["svc398"] == ["svc399"] and calls["svc399"] == []
    assert len(app.services) == n + 1  # and the added load generator


def test_app_check_reports_every_cross_reference_problem(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    data = yaml.safe_load((Path(__file__).resolve().parents[1] / "engine/apps/online-boutique.yaml").read_text())
    data["routes"][0]["entry"]["operation"] = "nosuchop"
    caller = next(s for s in data["services"] if any(op.get("calls") for op in s.get("operations", [])))
    op = next(op for op in caller["operations"] if op.get("calls"))
    op["calls"][0]["operation"] = "nosuchcall"
    path, err = _check_exit_2(tmp_path, capsys, data)
    assert f"{path}: routes[0].entry.operation: unknown operation 'nosuchop'" in err
    assert "unknown operation 'nosuchcall'" in err and ".calls[0].operation:" in err
    with pytest.raises(AppModelError) as info:
        load_app_file(path)
    assert len(info.value.problems) == 2
