"""Tests of engine.apps.importer against the real manifests in shared/data and the shipped app models.

The expected values come from ``shared/data/FACTS.md`` (sections 1-3), which was written from
the same files; the model comparison checks ``engine/apps/*.yaml`` against what the importer
reads from the manifests those models cite.
"""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from engine.apps.cli import add_import_arguments, cmd_app_import
from engine.apps.importer import ManifestImportError, dump_skeleton, import_manifests
from engine.apps.model import load_app_file

APPS_DIR = Path(__file__).resolve().parents[1] / "engine" / "apps"


# ------------------------------------------------------------------------------------------
# helpers


def ob_manifests(data: Path) -> list[Path]:
    return [data / "online-boutique" / "kubernetes-manifests.yaml"]


def astro_manifests(data: Path) -> list[Path]:
    return [data / "astronomy-shop" / "opentelemetry-demo.yaml"]


def tt_manifests(data: Path) -> list[Path]:
    return [data / "train-ticket" / f"quickstart-ts-deployment-part{i}.yml" for i in (1, 2, 3)]


def services(skeleton: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in skeleton["services"]}


def deps(skeleton: dict[str, Any], name: str) -> dict[str, str | None]:
    return {d["service"]: d["env"] for d in services(skeleton)[name]["dependencies"]}


def evidence(skeleton: dict[str, Any], via: str | None = None) -> set[tuple[str, str, str | None]]:
    return {
        (e["caller"], e["callee"], e.get("env"))
        for e in skeleton["imported"]["evidence"]
        if via is None or e["via"] == via
    }


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def ob(shared_data: Path) -> dict[str, Any]:
    return import_manifests(ob_manifests(shared_data))


@pytest.fixture(scope="module")
def astro(shared_data: Path) -> dict[str, Any]:
    return import_manifests(astro_manifests(shared_data))


@pytest.fixture(scope="module")
def astro_compose(shared_data: Path) -> dict[str, Any]:
    return import_manifests(astro_manifests(shared_data), compose=shared_data / "astronomy-shop" / "docker-compose.yml")


@pytest.fixture(scope="module")
def tt(shared_data: Path) -> dict[str, Any]:
    return import_manifests(tt_manifests(shared_data))


@pytest.fixture(scope="module")
def tt_compose(shared_data: Path) -> dict[str, Any]:
    return import_manifests(
        tt_manifests(shared_data), compose=shared_data / "train-ticket" / "quickstart-docker-compose.yml"
    )


# ------------------------------------------------------------------------------------------
# Online Boutique (FACTS.md section 1)

OB_WORKLOADS = {
    "frontend",
    "cartservice",
    "productcatalogservice",
    "currencyservice",
    "paymentservice",
    "shippingservice",
    "emailservice",
    "checkoutservice",
    "recommendationservice",
    "adservice",
    "loadgenerator",
    "redis-cart",
}


def test_ob_workloads_and_ports(ob: dict[str, Any]) -> None:
    svc = services(ob)
    assert set(svc) == OB_WORKLOADS
    assert ob["name"] == "online-boutique"
    assert (svc["frontend"]["port"], svc["frontend"]["service_port"]) == (8080, 80)
    assert (svc["emailservice"]["port"], svc["emailservice"]["service_port"]) == (8080, 5000)
    assert (svc["shippingservice"]["port"], svc["paymentservice"]["port"]) == (50051, 50051)
    assert "port" not in svc["loadgenerator"] and "service_port" not in svc["loadgenerator"]
    external = next(s for s in ob["imported"]["kubernetes_services"] if s["name"] == "frontend-external")
    assert external["type"] == "LoadBalancer"
    assert external["workloads"] == ["frontend"]
    assert external["ports"][0]["port"] == 80 and external["ports"][0]["target_port"] == 8080
    email = next(s for s in ob["imported"]["kubernetes_services"] if s["name"] == "emailservice")
    assert (email["ports"][0]["port"], email["ports"][0]["target_port"]) == (5000, 8080)


def test_ob_probes_resources_roles(ob: dict[str, Any]) -> None:
    svc = services(ob)
    assert svc["frontend"]["readiness_probe"] == {
        "type": "http",
        "port": 8080,
        "path": "/_healthz",
        "initial_delay_s": 10,
    }
    assert svc["cartservice"]["liveness_probe"] == {"type": "grpc", "port": 7070, "initial_delay_s": 15, "period_s": 10}
    assert svc["redis-cart"]["readiness_probe"] == {"type": "tcp", "port": 6379, "period_s": 5}
    assert svc["frontend"]["resources"] == {
        "requests": {"cpu": "100m", "memory": "64Mi"},
        "limits": {"cpu": "200m", "memory": "128Mi"},
    }
    assert svc["frontend"]["protocol"] == "http" and svc["cartservice"]["protocol"] == "grpc"
    protocol = {g["service"]: g["evidence"] for g in ob["imported"]["guesses"] if g["field"] == "protocol"}
    assert protocol["cartservice"] == "readiness_probe of type grpc" and protocol["redis-cart"] == "store engine redis"
    assert svc["redis-cart"]["role"] == "store"
    assert svc["redis-cart"]["language"] == "redis"
    # redis-cart keeps /data on an emptyDir: a restart loses the carts.
    assert svc["redis-cart"]["store"] == {"engine": "redis", "persistent": False}
    assert svc["loadgenerator"]["role"] == "loadgenerator"
    assert svc["loadgenerator"]["container"] == "main"
    assert ob["load"] == {"generator": "loadgenerator", "base_rps": 10.0}
    # The entry route comes from frontend-external (LoadBalancer); the unknowns are defaults.
    assert [(r["entry"]["service"], r["share"]) for r in ob["routes"]] == [("frontend", 1.0)]
    assert ob["imported"]["entry_points"] == [{"service": "frontend", "via": "Service frontend-external "
                                                                           "(type LoadBalancer)"}]
    assert svc["frontend"]["language"] == "go"
    assert {"service": "frontend", "field": "language", "value": "go",
            "evidence": "no image word, env var or command names the runtime"} in ob["imported"]["defaults"]


def test_ob_edges(ob: dict[str, Any]) -> None:
    assert deps(ob, "frontend") == {
        "productcatalogservice": "PRODUCT_CATALOG_SERVICE_ADDR",
        "currencyservice": "CURRENCY_SERVICE_ADDR",
        "cartservice": "CART_SERVICE_ADDR",
        "recommendationservice": "RECOMMENDATION_SERVICE_ADDR",
        "shippingservice": "SHIPPING_SERVICE_ADDR",
        "checkoutservice": "CHECKOUT_SERVICE_ADDR",
        "adservice": "AD_SERVICE_ADDR",
    }
    assert deps(ob, "checkoutservice") == {
        "cartservice": "CART_SERVICE_ADDR",
        "productcatalogservice": "PRODUCT_CATALOG_SERVICE_ADDR",
        "currencyservice": "CURRENCY_SERVICE_ADDR",
        "shippingservice": "SHIPPING_SERVICE_ADDR",
        "paymentservice": "PAYMENT_SERVICE_ADDR",
        "emailservice": "EMAIL_SERVICE_ADDR",
    }
    assert deps(ob, "recommendationservice") == {"productcatalogservice": "PRODUCT_CATALOG_SERVICE_ADDR"}
    assert deps(ob, "cartservice") == {"redis-cart": "REDIS_ADDR"}
    assert deps(ob, "loadgenerator") == {"frontend": "FRONTEND_ADDR"}
    for leaf in ("productcatalogservice", "currencyservice", "paymentservice", "shippingservice", "emailservice"):
        assert deps(ob, leaf) == {}
    # The init container frontend-check waits for http://${FRONTEND_ADDR} (busybox wget).
    init = [e for e in ob["imported"]["evidence"] if e["via"] == "init-container"]
    assert init == [
        {
            "caller": "loadgenerator",
            "callee": "frontend",
            "via": "init-container",
            "container": "frontend-check",
            "value": "frontend:80",
            "port": 80,
        }
    ]
    assert ob["imported"]["dangling"] == [
        {
            "caller": "frontend",
            "name": "shoppingassistantservice",
            "via": "env",
            "env": "SHOPPING_ASSISTANT_SERVICE_ADDR",
            "container": "server",
            "value": "shoppingassistantservice:80",
        }
    ]
    assert ob["imported"]["warnings"] == []


# ------------------------------------------------------------------------------------------
# Astronomy Shop (FACTS.md section 2)

ASTRO_M_EDGES = {
    ("frontend", "ad", "AD_ADDR"),
    ("frontend", "cart", "CART_ADDR"),
    ("frontend", "checkout", "CHECKOUT_ADDR"),
    ("frontend", "currency", "CURRENCY_ADDR"),
    ("frontend", "product-catalog", "PRODUCT_CATALOG_ADDR"),
    ("frontend", "recommendation", "RECOMMENDATION_ADDR"),
    ("frontend", "shipping", "SHIPPING_ADDR"),
    ("checkout", "cart", "CART_ADDR"),
    ("checkout", "currency", "CURRENCY_ADDR"),
    ("checkout", "product-catalog", "PRODUCT_CATALOG_ADDR"),
    ("checkout", "payment", "PAYMENT_ADDR"),
    ("checkout", "shipping", "SHIPPING_ADDR"),
    ("checkout", "email", "EMAIL_ADDR"),
    ("checkout", "kafka", "KAFKA_ADDR"),
    ("recommendation", "product-catalog", "PRODUCT_CATALOG_ADDR"),
    ("shipping", "quote", "QUOTE_ADDR"),
    ("cart", "valkey-cart", "VALKEY_ADDR"),
    ("accounting", "kafka", "KAFKA_ADDR"),
    ("accounting", "postgresql", "DB_CONNECTION_STRING"),
    ("fraud-detection", "kafka", "KAFKA_ADDR"),
    ("frontend-proxy", "frontend", "FRONTEND_HOST"),
    ("frontend-proxy", "image-provider", "IMAGE_PROVIDER_HOST"),
    ("frontend-proxy", "flagd", "FLAGD_HOST"),
    ("frontend-proxy", "load-generator", "LOCUST_WEB_HOST"),
    ("frontend-proxy", "grafana", "GRAFANA_HOST"),
    ("frontend-proxy", "jaeger", "JAEGER_HOST"),
    ("load-generator", "frontend-proxy", "LOCUST_HOST"),
    ("load-generator", "flagd", "FLAGD_HOST"),
}
ASTRO_FLAGD_USERS = {
    "ad",
    "cart",
    "checkout",
    "email",
    "fraud-detection",
    "frontend",
    "frontend-proxy",
    "load-generator",
    "payment",
    "product-catalog",
    "recommendation",
}


def test_astro_manifest_edges(astro: dict[str, Any]) -> None:
    found = {(caller, callee, env) for caller in services(astro) for callee, env in deps(astro, caller).items()}
    assert found >= ASTRO_M_EDGES
    assert {caller for caller, callee, _ in found if callee == "flagd"} == ASTRO_FLAGD_USERS
    # frontend-proxy reaches jaeger through the Service jaeger-query.
    found_all = astro["imported"]["evidence"]
    jaeger = next(e for e in found_all if e["caller"] == "frontend-proxy" and e["callee"] == "jaeger")
    assert jaeger["kubernetes_service"] == "jaeger-query" and jaeger["port"] == 16686
    # FLAGD_PORT is the sibling of FLAGD_HOST even beside FLAGD_OFREP_PORT.
    flagd = next(e for e in astro["imported"]["evidence"] if e["caller"] == "load-generator" and e["callee"] == "flagd")
    assert (flagd["env"], flagd["port"]) == ("FLAGD_HOST", 8013)
    # Leaf app services: nothing but telemetry and flagd.
    for leaf in ("ad", "currency", "email", "payment", "quote", "image-provider", "product-catalog"):
        assert set(deps(astro, leaf)) <= {"flagd"}, leaf
    waits = {
        (e["caller"], e["callee"], e["container"])
        for e in astro["imported"]["evidence"]
        if e["via"] == "init-container"
    }
    assert waits == {
        ("accounting", "kafka", "wait-for-kafka"),
        ("checkout", "kafka", "wait-for-kafka"),
        ("fraud-detection", "kafka", "wait-for-kafka"),
        ("cart", "valkey-cart", "wait-for-valkey-cart"),
    }


def test_astro_telemetry_is_evidence_not_dependency(astro: dict[str, Any]) -> None:
    assert all("otel-collector" not in deps(astro, name) for name in services(astro))
    telemetry = {(t["caller"], t["env"]) for t in astro["imported"]["telemetry"] if t["callee"] == "otel-collector"}
    assert ("checkout", "OTEL_EXPORTER_OTLP_ENDPOINT") in telemetry
    assert ("flagd", "FLAGD_OTEL_COLLECTOR_URI") in telemetry
    # $(OTEL_COLLECTOR_NAME) is expanded from the variable defined earlier in the container.
    assert services(astro)["accounting"]["env"]["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://otel-collector:4318"
    assert ("accounting", "otel-collector", "OTEL_EXPORTER_OTLP_ENDPOINT") in evidence(astro, "env")


def test_astro_flagd_ui_quirk(astro: dict[str, Any]) -> None:
    svc = services(astro)
    assert "flagd-ui" not in svc
    assert "flagd-ui" not in {s["name"] for s in astro["imported"]["kubernetes_services"]}
    dangling = [d for d in astro["imported"]["dangling"] if d["name"] == "flagd-ui"]
    assert len(dangling) == 1
    assert dangling[0]["caller"] == "frontend-proxy" and dangling[0]["env"] == "FLAGD_UI_HOST"
    assert "container of Deployment flagd" in dangling[0]["hint"]
    extra = [c for c in astro["imported"]["extra_containers"] if c["container"] == "flagd-ui"]
    assert extra == [
        {
            "workload": "flagd",
            "container": "flagd-ui",
            "image": "ghcr.io/open-telemetry/demo:2.1.3-flagd-ui",
            "ports": [4000],
            "exposed_on": ["flagd:4000"],
        }
    ]
    assert svc["flagd"]["container"] == "flagd" and svc["flagd"]["port"] == 8013


def test_astro_workloads(astro: dict[str, Any]) -> None:
    svc = services(astro)
    app_ports = {name: s.get("port") for name, s in svc.items() if s["image"].startswith("ghcr.io/open-telemetry/demo")}
    for name, port in app_ports.items():
        expected = {"image-provider": 8081, "accounting": None, "fraud-detection": None, "load-generator": 8089}.get(
            name, {"kafka": 9092, "postgresql": 5432}.get(name, 8080)
        )
        assert port == expected, name
    # App containers have NO readiness or liveness probes in this manifest (FACTS.md).
    for name in ("cart", "checkout", "frontend", "ad", "email"):
        assert "readiness_probe" not in svc[name] and "liveness_probe" not in svc[name]
    assert svc["email"]["resources"] == {"limits": {"memory": "100Mi"}}
    assert svc["kafka"]["store"] == {"engine": "kafka", "persistent": False}
    assert svc["kafka"]["protocol"] == "kafka"
    assert svc["postgresql"]["store"]["engine"] == "postgresql"
    assert svc["valkey-cart"]["store"]["engine"] == "valkey" and svc["valkey-cart"]["language"] == "valkey"
    assert svc["opensearch"]["workload"] == "StatefulSet" and svc["opensearch"]["role"] == "monitoring"
    for name in ("otel-collector", "jaeger", "prometheus", "grafana"):
        assert svc[name]["role"] == "monitoring"
    assert svc["load-generator"]["role"] == "loadgenerator"
    # Callers address email, shipping and quote with http:// URLs; the gRPC services say nothing.
    assert {svc[n].get("protocol") for n in ("email", "shipping", "quote")} == {"http"}
    assert svc["ad"]["protocol"] == "http"  # a default, recorded as one
    assert any(d["service"] == "ad" and d["field"] == "protocol" for d in astro["imported"]["defaults"])
    # Multi-port containers are represented by the port callers address.
    assert (svc["otel-collector"]["port"], svc["otel-collector"]["service_port"]) == (4317, 4317)
    assert (svc["jaeger"]["port"], svc["jaeger"]["service_port"]) == (16686, 16686)
    assert (svc["grafana"]["port"], svc["grafana"]["service_port"]) == (3000, 80)
    assert astro["namespace"] == "otel-demo"
    assert any(d["name"] == "opensearch-cluster-master-headless" for d in astro["imported"]["dangling"])


def test_astro_compose(astro: dict[str, Any], astro_compose: dict[str, Any]) -> None:
    assert list(services(astro_compose)) == list(services(astro))
    only = {c["name"]: c for c in astro_compose["imported"]["compose_only"]}
    assert set(only) == {"product-reviews", "llm", "flagd-ui"}
    assert all(c["compose_only"] is True for c in only.values())
    reviews = {d["service"]: d["env"] for d in only["product-reviews"]["dependencies"]}
    assert reviews["product-catalog"] == "PRODUCT_CATALOG_ADDR"
    assert reviews["llm"] == "LLM_BASE_URL"
    assert reviews["postgresql"] == "DB_CONNECTION_STRING"
    assert only["product-reviews"]["port"] == 3551 and only["llm"]["port"] == 8000
    assert only["product-reviews"]["env"]["LLM_BASE_URL"] == "http://llm:8000/v1"
    assert "container of Deployment flagd" in only["flagd-ui"]["note"]
    to_only = astro_compose["imported"]["compose_edges_to_compose_only"]
    assert {
        "caller": "frontend",
        "callee": "product-reviews",
        "via": "compose-env",
        "env": "PRODUCT_REVIEWS_ADDR",
    } in to_only
    # Compose fills in what the manifest lacks, and never overrides the manifest's values.
    catalog = services(astro_compose)["product-catalog"]
    assert deps(astro_compose, "product-catalog")["postgresql"] == "DB_CONNECTION_STRING"
    assert catalog["env"]["DB_CONNECTION_STRING"] == "postgres://otelu:otelp@postgresql/otel?sslmode=disable"
    assert services(astro_compose)["frontend"]["env"]["AD_ADDR"] == "ad:8080"
    assert deps(astro_compose, "checkout") == deps(astro, "checkout")
    assert ("frontend", "ad", "AD_ADDR") in evidence(astro_compose, "compose-env")
    # depends_on that is start order only is added with env null and flagged for the user.
    assert deps(astro_compose, "frontend")["quote"] is None
    assert any("frontend -> quote" in item for item in astro_compose["imported"]["warnings"])


# ------------------------------------------------------------------------------------------
# Train Ticket (FACTS.md section 3)

TT_PORTS = {
    "ts-admin-basic-info-service": 18767,
    "ts-admin-order-service": 16112,
    "ts-admin-route-service": 16113,
    "ts-admin-travel-service": 16114,
    "ts-admin-user-service": 16115,
    "ts-assurance-service": 18888,
    "ts-auth-service": 12340,
    "ts-avatar-service": 17001,
    "ts-basic-service": 15680,
    "ts-cancel-service": 18885,
    "ts-config-service": 15679,
    "ts-consign-price-service": 16110,
    "ts-consign-service": 16111,
    "ts-contacts-service": 12347,
    "ts-execute-service": 12386,
    "ts-food-map-service": 18855,
    "ts-food-service": 18856,
    "ts-inside-payment-service": 18673,
    "ts-news-service": 12862,
    "ts-notification-service": 17853,
    "ts-order-other-service": 12032,
    "ts-order-service": 12031,
    "ts-payment-service": 19001,
    "ts-preserve-other-service": 14569,
    "ts-preserve-service": 14568,
    "ts-price-service": 16579,
    "ts-rebook-service": 18886,
    "ts-route-plan-service": 14578,
    "ts-route-service": 11178,
    "ts-seat-service": 18898,
    "ts-security-service": 11188,
    "ts-station-service": 12345,
    "ts-ticket-office-service": 16108,
    "ts-ticketinfo-service": 15681,
    "ts-train-service": 14567,
    "ts-travel-plan-service": 14322,
    "ts-travel-service": 12346,
    "ts-travel2-service": 16346,
    "ts-ui-dashboard": 8080,
    "ts-user-service": 12342,
    "ts-verification-code-service": 15678,
    "ts-voucher-service": 16101,
}
TT_MONGO_OWNERS = [
    "assurance", "auth", "config", "consign-price", "consign", "contacts", "food-map", "food", "inside-payment",
    "order-other", "order", "payment", "price", "route", "security", "station", "ticket-office", "train", "travel",
    "travel2", "user",
]  # fmt: skip


def test_tt_workloads(tt: dict[str, Any]) -> None:
    svc = services(tt)
    databases = {f"ts-{owner}-mongo" for owner in TT_MONGO_OWNERS} | {"ts-voucher-mysql"}
    assert len(TT_MONGO_OWNERS) == 21
    assert set(svc) == set(TT_PORTS) | databases | {"loadgenerator"}  # the manifests deploy no load generator
    assert len([n for n in TT_PORTS if n != "ts-ui-dashboard"]) == 41
    for name, port in TT_PORTS.items():
        assert (svc[name]["port"], svc[name]["service_port"]) == (port, port), name
        assert svc[name]["role"] == "app" and svc[name]["protocol"] == "http"
    for name in databases - {"ts-voucher-mysql"}:
        assert (svc[name]["port"], svc[name]["service_port"], svc[name]["image"]) == (27017, 27017, "mongo")
        assert svc[name]["store"] == {"engine": "mongodb", "persistent": False}
    voucher_db = svc["ts-voucher-mysql"]
    assert (voucher_db["port"], voucher_db["image"], voucher_db["store"]["engine"]) == (3306, "mysql:5.6.35", "mysql")
    assert svc["ts-order-service"]["readiness_probe"] == {
        "type": "tcp",
        "port": 12031,
        "initial_delay_s": 160,
        "period_s": 10,
        "timeout_s": 5,
    }
    assert svc["ts-order-service"]["resources"] == {
        "requests": {"cpu": "50m", "memory": "160Mi"},
        "limits": {"cpu": "200m", "memory": "500Mi"},
    }
    assert svc["ts-admin-basic-info-service"]["resources"]["requests"]["memory"] == "100Mi"
    assert svc["ts-avatar-service"]["resources"]["requests"]["memory"] == "200Mi"
    kube = {s["name"]: s for s in tt["imported"]["kubernetes_services"]}
    assert kube["ts-auth-service"]["type"] == "LoadBalancer"
    assert kube["ts-ui-dashboard"]["type"] == "NodePort"
    assert kube["ts-ui-dashboard"]["ports"][0]["node_port"] == 32677


def test_tt_has_no_env_edges(tt: dict[str, Any], tt_compose: dict[str, Any]) -> None:
    """No configuration names a peer: the only edges are guesses pairing each store with the
    service of the same name stem, and the added load generator's entry points."""
    assert tt["imported"]["dangling"] == []
    assert {e["via"] for e in tt["imported"]["evidence"]} == {"name-pair"}
    pairs = {(s["name"], d["service"]) for s in tt["services"] for d in s["dependencies"]}
    assert ("ts-auth-service", "ts-auth-mongo") in pairs and ("ts-voucher-service", "ts-voucher-mysql") in pairs
    assert {(c, d) for c, d in pairs if c != "loadgenerator"} == {
        (f"ts-{owner}-service", f"ts-{owner}-mongo") for owner in TT_MONGO_OWNERS
    } | {("ts-voucher-service", "ts-voucher-mysql")}
    assert sum(1 for g in tt["imported"]["guesses"] if g["field"] == "dependencies") == 22
    assert not evidence(tt_compose, "env") and not evidence(tt_compose, "compose-env")
    assert tt["load"]["generator"] == "loadgenerator"
    assert {r["entry"]["service"] for r in tt["routes"]} == {"ts-auth-service", "ts-ui-dashboard"}
    assert any(d["service"] == "loadgenerator" and d["field"] == "role" for d in tt["imported"]["defaults"])


def test_tt_compose(tt_compose: dict[str, Any]) -> None:
    assert deps(tt_compose, "ts-voucher-service") == {"ts-voucher-mysql": None}
    assert evidence(tt_compose, "compose-depends_on") == {("ts-voucher-service", "ts-voucher-mysql", None)}
    only = {c["name"] for c in tt_compose["imported"]["compose_only"]}
    assert only == {"redis", "ts-account-mongo", "ts-rebook-mongo", "ts-news-mongo"}
    assert any("NAMESPACE, TAG" in w for w in tt_compose["imported"]["warnings"])


# ------------------------------------------------------------------------------------------
# The shipped app models agree with their manifests

MODEL_INPUTS = {
    "online-boutique": (["online-boutique/kubernetes-manifests.yaml"], None),
    "astronomy-shop": (["astronomy-shop/opentelemetry-demo.yaml"], "astronomy-shop/docker-compose.yml"),
    "train-ticket": (
        [f"train-ticket/quickstart-ts-deployment-part{i}.yml" for i in (1, 2, 3)],
        "train-ticket/quickstart-docker-compose.yml",
    ),
}


def _model_path(app: str, manifest: str) -> Path | None:
    """The shipped model of an app: ``engine/apps/<app>.yaml``, else one citing the manifest."""
    path = APPS_DIR / f"{app}.yaml"
    if path.is_file():
        return path
    for candidate in sorted(APPS_DIR.glob("*.yaml")):
        provenance = yaml.safe_load(candidate.read_text(encoding="utf-8")).get("provenance") or []
        if any(manifest in str(item) for item in provenance):
            return candidate
    return None


@pytest.mark.parametrize("app", sorted(MODEL_INPUTS))
def test_shipped_model_matches_manifests(app: str, shared_data: Path) -> None:
    manifest_names, compose_name = MODEL_INPUTS[app]
    model_path = _model_path(app, manifest_names[0])
    if model_path is None:
        pytest.skip(f"no shipped model for {app} in {APPS_DIR} yet")
    model = load_app_file(model_path)
    manifests = [shared_data / m for m in manifest_names]
    compose = shared_data / compose_name if compose_name else None
    plain = import_manifests(manifests)
    full = import_manifests(manifests, compose=compose)
    imported = services(plain)
    added = {d["service"] for d in plain["imported"]["defaults"] if d["field"] == "role"}  # an added generator
    has_generator = any(s["role"] == "loadgenerator" and s["name"] not in added for s in imported.values())

    problems: list[str] = []
    for svc in model.services:
        found = imported.get(svc.name)
        if found is None or found["name"] in added:
            # A benchmark-added load generator is allowed only when the app ships none.
            if not (svc.role == "loadgenerator" and not has_generator):
                problems.append(f"{svc.name}: not a Deployment/StatefulSet of {manifest_names}")
            continue
        if (svc.port, svc.service_port) != (found.get("port"), found.get("service_port")):
            problems.append(
                f"{svc.name}: model port/service_port {svc.port}/{svc.service_port}, "
                f"manifest {found.get('port')}/{found.get('service_port')}"
            )
        if svc.container != found["container"]:
            problems.append(f"{svc.name}: container {svc.container!r}, manifest {found['container']!r}")
    # Every env-named model dependency is an edge the importer found with the same env var.
    found_edges = evidence(full)
    for svc in model.services:
        for dep in svc.dependencies:
            if dep.env is not None and (svc.name, dep.service, dep.env) not in found_edges:
                problems.append(f"{svc.name} -> {dep.service} via {dep.env}: not found in the manifests or compose")
    # Every env-derived manifest dependency between two modelled services is in the model.
    modelled = set(model.service_names())
    model_edges = {(s.name, d.service) for s in model.services for d in s.dependencies}
    for name, entry in imported.items():
        for dep in entry["dependencies"]:
            edge = (name, dep["service"])
            if dep["env"] and set(edge) <= modelled and edge not in model_edges:
                problems.append(f"{name} -> {dep['service']} via {dep['env']}: in the manifest, not in the model")
    assert not problems, f"{model_path.name} departs from the manifests:\n  " + "\n  ".join(problems)


# ------------------------------------------------------------------------------------------
# Synthetic inputs: address forms, stores, compose interpolation


def test_address_forms_and_init_containers(tmp_path: Path) -> None:
    manifest = write(
        tmp_path / "app.yaml",
        """
        # a comment-only document and an empty one are skipped
        ---
        ---
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: settings}
        data: {CACHE_URL: "redis://cache.shop.svc.cluster.local:6379/0"}
        ---
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: api, namespace: shop}
        spec:
          selector: {matchLabels: {app: api}}
          template:
            metadata: {labels: {app: api}}
            spec:
              initContainers:
              - name: wait-for-queue
                image: busybox
                command: ["sh", "-c", "until nc -z -w 2 queue 5672; do sleep 1; done"]
              containers:
              - name: api
                image: example/api:1.0
                ports: [{name: http, containerPort: 8000}]
                readinessProbe: {httpGet: {path: /ready, port: http}, periodSeconds: 3}
                env:
                - {name: DB_NAME, value: orders}
                - {name: DB_CONNECTION_STRING, value: "Server=db;Database=$(DB_NAME)"}
                - {name: SEARCH_HOST, value: search}
                - {name: SEARCH_PORT, value: "9200"}
                - {name: PRICING_URL, value: "http://pricing:80/v1"}
                - {name: AUDIT_ENDPOINT, value: "audit.shop:7000"}
                - {name: LEGACY_ADDR, value: "mainframe:23"}
                - {name: PUBLIC_URL, value: "http://localhost:8000"}
                - name: CACHE_URL
                  valueFrom: {configMapKeyRef: {name: settings, key: CACHE_URL}}
                - name: TOKEN
                  valueFrom: {secretKeyRef: {name: api, key: token}}
        ---
        apiVersion: apps/v1
        kind: StatefulSet
        metadata: {name: db, namespace: shop}
        spec:
          selector: {matchLabels: {app: db}}
          template:
            metadata: {labels: {app: db}}
            spec:
              containers: [{name: postgres, image: "postgres:16", ports: [{containerPort: 5432}]}]
          volumeClaimTemplates: [{metadata: {name: data}}]
        ---
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: cache, namespace: shop}
        spec:
          selector: {matchLabels: {app: cache}}
          template:
            metadata: {labels: {app: cache}}
            spec:
              containers: [{name: cache, image: "bitnami/redis:7", ports: [{containerPort: 6379}]}]
              volumes: [{name: data, persistentVolumeClaim: {claimName: cache}}]
        """,
    )
    more = write(
        tmp_path / "more.yaml",
        """
        apiVersion: v1
        kind: List
        items:
        - apiVersion: v1
          kind: Service
          metadata: {name: queue}
          spec: {selector: {app: mq}, ports: [{port: 5672}]}
        - apiVersion: v1
          kind: Service
          metadata: {name: search}
          spec: {selector: {app: search}, ports: [{port: 9300}]}
        - apiVersion: apps/v1
          kind: Deployment
          metadata: {name: rabbit, namespace: shop}
          spec:
            template:
              metadata: {labels: {app: mq}}
              spec: {containers: [{name: rabbit, image: "rabbitmq:3", ports: [{containerPort: 5672}]}]}
        - apiVersion: apps/v1
          kind: Deployment
          metadata: {name: search, namespace: shop}
          spec:
            template:
              metadata: {labels: {app: search}}
              spec: {containers: [{name: search, image: "example/search:2", ports: [{containerPort: 9300}]}]}
        - apiVersion: apps/v1
          kind: Deployment
          metadata: {name: pricing, namespace: shop}
          spec:
            template:
              metadata: {labels: {app: pricing}}
              spec: {containers: [{name: pricing, image: "example/pricing:3", ports: [{containerPort: 80}]}]}
        """,
    )
    skeleton = import_manifests([manifest, more])
    assert skeleton["name"] == "shop" and skeleton["namespace"] == "shop"
    api = services(skeleton)["api"]
    assert api["readiness_probe"] == {"type": "http", "port": 8000, "path": "/ready", "period_s": 3}
    assert api["env"]["DB_CONNECTION_STRING"] == "Server=db;Database=orders"
    assert api["env"]["CACHE_URL"] == "redis://cache.shop.svc.cluster.local:6379/0"
    assert "TOKEN" not in api["env"]
    assert deps(skeleton, "api") == {
        "db": "DB_CONNECTION_STRING",
        "search": "SEARCH_HOST",
        "pricing": "PRICING_URL",
        "cache": "CACHE_URL",
        "rabbit": None,  # through the Service queue, from the init container
    }
    search = next(e for e in skeleton["imported"]["evidence"] if e["callee"] == "search")
    assert search["port"] == 9200  # the sibling SEARCH_PORT...
    assert any("api -> search:9200" in w and "exposes 9300" in w for w in skeleton["imported"]["warnings"])
    rabbit = next(e for e in skeleton["imported"]["evidence"] if e["callee"] == "rabbit")
    assert (rabbit["via"], rabbit["container"], rabbit["kubernetes_service"]) == (
        "init-container",
        "wait-for-queue",
        "queue",
    )
    dangling = {d["name"]: d for d in skeleton["imported"]["dangling"]}
    # audit.shop is not a Service here but is dotted: not flagged. A Secret and a claim the
    # manifests lack are reported where they are referenced.
    assert set(dangling) == {"mainframe", "api", "cache"}
    assert dangling["api"]["via"] == "env TOKEN (secretKeyRef)" and "Secret api" in dangling["api"]["hint"]
    assert dangling["cache"]["via"] == "volume data (persistentVolumeClaim)"
    assert dangling["mainframe"]["env"] == "LEGACY_ADDR"
    svc = services(skeleton)
    assert svc["db"]["store"] == {"engine": "postgresql", "persistent": True}
    assert svc["db"]["workload"] == "StatefulSet" and svc["db"]["language"] == "postgresql"
    assert svc["cache"]["store"] == {"engine": "redis", "persistent": True}
    assert svc["rabbit"]["role"] == "store" and svc["rabbit"]["store"] == {"engine": "rabbitmq", "persistent": False}


def test_compose_interpolation(tmp_path: Path) -> None:
    manifest = write(
        tmp_path / "k8s.yaml",
        """
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: web}
        spec:
          template:
            metadata: {labels: {app: web}}
            spec: {containers: [{name: web, image: "nginx:1.27", ports: [{containerPort: 80}]}]}
        ---
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: api}
        spec:
          template:
            metadata: {labels: {app: api}}
            spec: {containers: [{name: api, image: "example/api:1", ports: [{containerPort: 9000}]}]}
        """,
    )
    write(
        tmp_path / ".env",
        """
        # comment
        API_PORT=9000
        export API_ADDR=api:${API_PORT}
        QUOTED="http://${WORKER_HOST:-worker}:81"  # trailing comment
        LITERAL='${NOT_EXPANDED}'
        """,
    )
    compose = write(
        tmp_path / "compose.yaml",
        """
        services:
          web:
            image: nginx:${NGINX_TAG:-1.27}
            environment:
              - API_ADDR
              - WORKER_URL=${QUOTED}
              - RAW=${LITERAL}
              - COST=$$5
            depends_on: [worker]
          api:
            image: example/api:1
            environment: {CACHE_HOST: cache}
          worker:
            image: example/worker:${TAG}
            ports: ["127.0.0.1:8081:81/tcp"]
            depends_on:
              api: {condition: service_started}
          cache:
            image: valkey/valkey:8
        """,
    )
    skeleton = import_manifests([manifest], compose=compose, name="Demo App")
    assert skeleton["name"] == "demo-app"
    web = services(skeleton)["web"]
    assert web["language"] == "nginx" and web["startup_s"] == 1
    assert deps(skeleton, "web") == {"api": "API_ADDR"}
    assert web["env"]["API_ADDR"] == "api:9000"
    only = {c["name"]: c for c in skeleton["imported"]["compose_only"]}
    assert set(only) == {"worker", "cache"}
    assert only["worker"]["image"] == "example/worker:${TAG}" and only["worker"]["port"] == 81
    assert only["worker"]["dependencies"] == [{"service": "api", "env": None}]
    assert only["cache"]["role"] == "store" and only["cache"]["store"] == {"engine": "valkey"}
    edges = skeleton["imported"]["compose_edges_to_compose_only"]
    assert {"caller": "web", "callee": "worker", "via": "compose-env", "env": "WORKER_URL"} in edges
    assert {"caller": "api", "callee": "cache", "via": "compose-env", "env": "CACHE_HOST"} in edges
    assert any("TAG" in w for w in skeleton["imported"]["warnings"])

    required = write(tmp_path / "required.yaml", "services:\n  web:\n    image: nginx:${MUST:?set MUST}\n")
    with pytest.raises(ManifestImportError, match=r"required\.yaml.*MUST is not set"):
        import_manifests([manifest], compose=required)


def test_compose_env_file_values(tmp_path: Path) -> None:
    """``.env`` quoting rules: double quotes interpolate, single quotes are literal."""
    manifest = write(
        tmp_path / "k8s.yaml",
        """
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: web}
        spec:
          template:
            metadata: {labels: {app: web}}
            spec: {containers: [{name: web, image: "example/web:1"}]}
        """,
    )
    write(tmp_path / "dotenv.env", "HOST=web\nA=\"x ${HOST} y\"\nB='${HOST}'\nC=plain # note\n")
    compose = write(tmp_path / "docker-compose.yml", "services:\n  other:\n    environment: [A, B, C, D]\n")
    skeleton = import_manifests([manifest], compose=compose)
    other = skeleton["imported"]["compose_only"][0]
    assert other["env"] == {"A": "x web y", "B": "${HOST}", "C": "plain"}


# ------------------------------------------------------------------------------------------
# Errors name the file, the document and the object


def test_not_yaml_names_file_and_document(tmp_path: Path) -> None:
    bad = write(tmp_path / "bad.yaml", "apiVersion: v1\nkind: Service\n---\nkey: [unclosed\n")
    with pytest.raises(ManifestImportError) as info:
        import_manifests([bad])
    assert info.value.source == str(bad) and info.value.document == 1
    assert str(bad) in str(info.value) and "not valid YAML" in str(info.value)

    prose = write(tmp_path / "notes.txt", "just some prose\n")
    with pytest.raises(ManifestImportError, match=r"notes\.txt: document 0: not a Kubernetes object \(got str\)"):
        import_manifests([prose])

    binary = tmp_path / "image.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    with pytest.raises(ManifestImportError, match=r"image\.png: not a UTF-8 text file"):
        import_manifests([binary])

    with pytest.raises(ManifestImportError, match=r"missing\.yaml: cannot read"):
        import_manifests([tmp_path / "missing.yaml"])


def test_no_workloads_names_file(tmp_path: Path) -> None:
    only_service = write(
        tmp_path / "svc.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}\n",
    )
    with pytest.raises(ManifestImportError, match=r"svc\.yaml: no Deployment or StatefulSet"):
        import_manifests([only_service])


def test_malformed_workload_names_object(tmp_path: Path) -> None:
    empty = write(
        tmp_path / "deploy.yaml",
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {template: {spec: {}}}\n",
    )
    with pytest.raises(ManifestImportError) as info:
        import_manifests([empty])
    assert info.value.obj == "Deployment/web" and info.value.document == 0
    assert "containers is missing" in str(info.value)

    twice = write(
        tmp_path / "twice.yaml",
        """
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: web}
        spec: {template: {spec: {containers: [{name: web, image: a}]}}}
        ---
        apiVersion: apps/v1
        kind: StatefulSet
        metadata: {name: web}
        spec: {template: {spec: {containers: [{name: web, image: b}]}}}
        """,
    )
    with pytest.raises(ManifestImportError, match=r"twice\.yaml: document 1 \(StatefulSet/web\): a second workload"):
        import_manifests([twice])


def test_alias_bomb_is_refused_naming_file_and_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 9 levels of 9 aliases: 9**9 (387 million) nodes once expanded; PyYAML's plain loader hangs.
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    levels += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]
    bomb = write(tmp_path / "bomb.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\ndata:\n"
                 + "".join(f"  {line}\n" for line in levels)
                 + "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"
                   "spec: {template: {spec: {containers: [{name: web, image: a}]}}}\n")
    with pytest.raises(ManifestImportError) as info:
        import_manifests([bomb])
    assert info.value.source == str(bomb) and info.value.document == 0
    assert "alias" in str(info.value) and "500,000 nodes" in str(info.value)
    parser = argparse.ArgumentParser()
    add_import_arguments(parser)
    assert cmd_app_import(parser.parse_args([str(bomb)])) == 2
    assert f"{bomb}: document 0: cannot be read at line" in capsys.readouterr().err

    compose = write(tmp_path / "compose.yaml", "x: &x [" + ", ".join(["y"] * 9) + "]\n"
                    + "".join(f"x{i}: &x{i} [{', '.join(['*x' if i == 1 else f'*x{i - 1}'] * 9)}]\n"
                              for i in range(1, 9)) + "services: {}\n")
    web = write(tmp_path / "web.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"
                "spec: {template: {spec: {containers: [{name: web, image: a}]}}}\n")
    with pytest.raises(ManifestImportError, match=r"compose\.yaml: document 0: cannot be read .*alias"):
        import_manifests([web], compose=compose)


def _one_container(tmp_path: Path, name: str, container: str) -> Path:
    return write(tmp_path / "app.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: other}\n---\n"
                 f"apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}}}\n"
                 f"spec: {{template: {{spec: {{containers: [{container}]}}}}}}\n")


@pytest.mark.parametrize(("name", "container", "message"), [
    ("Web_Service.X", "{name: web, image: a, ports: [{containerPort: 80}]}",
     r"metadata\.name 'Web_Service\.X' is not a DNS label"),
    ("web", "{name: web, image: a, ports: [{containerPort: 99999}]}",
     r"containers\[0\]\.ports\[0\]\.containerPort: expected an integer from 1 to 65535, got 99999"),
    ("web", "{name: web, image: a, ports: [{containerPort: http}]}",
     r"containers\[0\]\.ports\[0\]\.containerPort: expected an integer .* got 'http' \(a port's name goes"),
    ("web", "{name: web, image: a, resources: {limits: {memory: lots}}}",
     r"containers\[0\]\.resources\.limits\.memory: 'lots' is not a Kubernetes quantity"),
    ("web", "{name: web, image: a, env: [{name: A, value: b}, 'PORT=80']}",
     r"containers\[0\]\.env\[1\]: expected a mapping \{name: NAME, value: VALUE\} .*got str 'PORT=80'"),
])
def test_bad_fields_name_file_document_and_object(tmp_path: Path, name: str, container: str, message: str) -> None:
    path = _one_container(tmp_path, name, container)
    with pytest.raises(ManifestImportError, match=message) as info:
        import_manifests([path])
    assert info.value.source == str(path) and info.value.document == 1
    assert info.value.obj == f"Deployment/{name}"
    assert str(info.value).startswith(f"{path}: document 1 (Deployment/{name}): spec.template.spec.") or \
        "metadata.name" in str(info.value)


def test_bad_compose_names_file(tmp_path: Path, shared_data: Path) -> None:
    compose = write(tmp_path / "compose.yaml", "- not\n- a compose file\n")
    with pytest.raises(ManifestImportError, match=r"compose\.yaml: not a compose file"):
        import_manifests(ob_manifests(shared_data), compose=compose)


# ------------------------------------------------------------------------------------------
# Output and command


def test_dump_round_trips_with_header(ob: dict[str, Any]) -> None:
    text = dump_skeleton(ob)
    header = text.split("\nname:", 1)[0]
    assert all(line.startswith("#") for line in header.splitlines())
    assert "loads and runs as it is" in header and "marathon app check FILE" in header
    assert "12 services, 16 dependencies" in header and "1 route(s) from 1 entry point(s)" in header
    assert yaml.safe_load(text) == ob
    assert "&id" not in text and "*id" not in text
    assert "  - {service: cartservice, env: CART_SERVICE_ADDR}" in text


def test_imported_model_loads_with_no_edits(ob: dict[str, Any], tmp_path: Path) -> None:
    """The written file is an app model: it loads, and its call edges follow the dependencies."""
    path = write(tmp_path / "ob.yaml", dump_skeleton(ob))
    app = load_app_file(path)
    assert app.imported is not None and app.imported.defaults and app.imported.guesses
    assert ("frontend", "cartservice") in app.edges() and ("cartservice", "redis-cart") in app.edges()
    assert app.service("redis-cart").operations[0].name == "GET"
    assert app.service("cartservice").operations[0].calls[0].operation == "GET"
    assert abs(sum(r.share for r in app.routes) - 1) < 1e-9


def test_cli_writes_and_reports(tmp_path: Path, shared_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="marathon app import")
    add_import_arguments(parser)
    out = tmp_path / "ob.yaml"
    args = parser.parse_args([*map(str, ob_manifests(shared_data)), "-o", str(out), "--name", "boutique"])
    assert args.func is cmd_app_import
    assert cmd_app_import(args) == 0
    assert yaml.safe_load(out.read_text(encoding="utf-8"))["name"] == "boutique"
    assert "wrote" in capsys.readouterr().err

    args = parser.parse_args([str(ob_manifests(shared_data)[0])])
    assert cmd_app_import(args) == 0
    assert capsys.readouterr().out.startswith("# App model written by `marathon app import`")

    bad = write(tmp_path / "bad.yaml", "kind: [\n")
    assert cmd_app_import(parser.parse_args([str(bad)])) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "not valid YAML" in err

    assert cmd_app_import(parser.parse_args([str(ob_manifests(shared_data)[0]), "-o", str(tmp_path)])) == 1
    assert "cannot write" in capsys.readouterr().err
