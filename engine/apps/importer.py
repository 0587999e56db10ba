"""Build a runnable app model from real Kubernetes manifests (and, optionally, a compose file
and a traces file).

``marathon app import MANIFEST... [--compose FILE] [--traces FILE]`` turns the manifests an
application ships with (plain, or Helm-rendered: multi-document YAML either way) into an app
model (``engine/apps/FORMAT.md``) that loads and runs with no hand edits. The importer records
what the manifests say:

* every Deployment and StatefulSet, with its application container's image, TCP container
  port, resources, env, ConfigMap/Secret references (``config_refs``) and readiness/liveness
  probes (converted to the ``Probe`` fields), its replica count and, for stores, whether the
  data survives a pod restart;
* the Service in front of each workload (matched by selector labels), giving ``service_port``;
  every Service with its ``port -> targetPort`` mapping is listed under ``imported``;
* dependencies named by configuration: env vars whose value is another Service's address
  (``*_ADDR``, ``*_HOST`` with its sibling ``*_PORT``, ``*_URL``, ``*_ENDPOINT``, connection
  strings such as ``Host=postgresql;...``, ``http://name:port/...``, ``name:port`` values and,
  as a guess, a bare Service name in any variable not named like a setting), the main
  container's command and args (``-DSN=...@tcp(catalogue-db:3306)/...``, ``--memc user-cache:11211``),
  the ConfigMaps mounted into the pod (a collector's exporter endpoints, Grafana's datasource URLs,
  also through Grafana's sidecar label convention), init containers that wait for a peer
  (``nc -z kafka 9092``, ``wget http://frontend:80``) and a traces file of observed calls
  (:func:`read_traces`). Kubernetes ``$(VAR)`` references are expanded the way the kubelet does.
  A name that is neither a workload nor a Service of the manifests is reported under
  ``imported.dangling``, never made a dependency; so are ConfigMap, Secret and
  PersistentVolumeClaim references to objects the manifests lack. Telemetry export (an
  ``OTEL_*``/``OTLP`` variable, or any address of an OpenTelemetry collector) is batched and never
  fails a request, so it is kept as evidence (``imported.telemetry``), not as a dependency;
* stores and brokers from the image (``redis``, ``mysql``, ``memcached``, ``rabbitmq``...), the
  command (``memcached -m 64``), a port name (``mysql``, ``amqp``), env vars only the server image
  reads (``MYSQL_ROOT_PASSWORD``, ``KAFKA_BROKER_ID``) or the engine's default port as the only
  port; etcd, consul and zookeeper as infrastructure (``imported.infrastructure``);
* entry points from Services of type LoadBalancer or NodePort, Ingress and Gateway API HTTPRoute
  backends, else the services the load generator addresses; UDP ports are reported
  (``imported.udp``), never picked as the service's port.

A container with several ports is represented by the port the other workloads' addresses reach
(the collector's 4317 of seven), else by the one its Service exposes, else by its first port.

With a docker-compose file, its ``environment`` (``${VAR}`` resolved from a sibling ``.env`` or
``dotenv.env``, never from the calling shell, so that an import is reproducible) and
``depends_on`` add the edges the manifests lack; services that exist only in the compose file are
described under ``imported.compose_only``.

What configuration cannot tell -- each service's operations and their cost, the routes' shares
and SLOs, the load, most languages -- gets an explicit default (:mod:`engine.apps.importfill`).
Every guess (with its evidence) and every default is recorded under ``imported``
(:class:`engine.apps.model.ImportSection`), which the loader validates and the simulator
ignores; ``marathon app check FILE`` lists those still in use.

Errors: :class:`ManifestImportError` (a ``ValueError``) names the file, the YAML document index
and the object (``Deployment/frontend``) where the input is not what the importer can read, or
the line of a traces file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from engine.apps.importfill import complete_model
from engine.apps.model import AppModelError
from engine.inputs.safeyaml import YamlInputError, parse_yaml_documents, read_text
from engine.kubectl.quantity import parse_quantity

WORKLOAD_KINDS = ("Deployment", "StatefulSet")
"""Kubernetes kinds that become services of the app model."""
UNMODELLED_WORKLOADS = ("DaemonSet", "ReplicaSet", "ReplicationController", "Pod", "Job", "CronJob")
"""Kinds that run pods but have no place in the model: reported in ``imported.warnings``."""

STORE_ENGINES: tuple[tuple[str, str], ...] = (
    ("valkey", "valkey"),
    ("redis", "redis"),
    ("mongodb", "mongodb"),
    ("mongo", "mongodb"),
    ("mysql", "mysql"),
    ("mariadb", "mysql"),
    ("percona", "mysql"),
    ("postgresql", "postgresql"),
    ("postgres", "postgresql"),
    ("kafka", "kafka"),
    ("memcached", "memcached"),
    ("rabbitmq", "rabbitmq"),
)
"""(image word, ``Store.engine``) pairs, most specific first."""

STORE_PORT_NAMES: dict[str, str] = {
    "mysql": "mysql", "mariadb": "mysql", "postgres": "postgresql", "postgresql": "postgresql", "pg": "postgresql",
    "mongo": "mongodb", "mongodb": "mongodb", "redis": "redis", "valkey": "valkey", "memcache": "memcached",
    "memcached": "memcached", "amqp": "rabbitmq", "kafka": "kafka",
}  # fmt: skip
"""Container or Service port name -> ``Store.engine`` (IANA service names where there is one)."""

STORE_PORTS: dict[int, str] = {
    3306: "mysql", 5432: "postgresql", 27017: "mongodb", 6379: "redis", 11211: "memcached", 5672: "rabbitmq",
    9092: "kafka",
}  # fmt: skip
"""Each engine's default port (the images' and IANA's): evidence only when it is the container's only port."""

STORE_SERVER_ENV: tuple[tuple[str, str], ...] = (
    ("MYSQL_ROOT_PASSWORD", "mysql"), ("MYSQL_ALLOW_EMPTY_PASSWORD", "mysql"), ("MYSQL_RANDOM_ROOT_PASSWORD", "mysql"),
    ("MARIADB_ROOT_PASSWORD", "mysql"), ("POSTGRES_PASSWORD", "postgresql"), ("POSTGRES_DB", "postgresql"),
    ("PGDATA", "postgresql"), ("MONGO_INITDB_ROOT_USERNAME", "mongodb"), ("MONGO_INITDB_DATABASE", "mongodb"),
    ("RABBITMQ_DEFAULT_USER", "rabbitmq"), ("RABBITMQ_ERLANG_COOKIE", "rabbitmq"), ("KAFKA_BROKER_ID", "kafka"),
    ("KAFKA_NODE_ID", "kafka"), ("KAFKA_LISTENERS", "kafka"), ("KAFKA_ADVERTISED_LISTENERS", "kafka"),
    ("KAFKA_ZOOKEEPER_CONNECT", "kafka"), ("KAFKA_PROCESS_ROLES", "kafka"),
)  # fmt: skip
"""Env vars only the server image reads (its entrypoint's settings), so a client never sets them."""

STORE_COMMANDS: tuple[tuple[str, str], ...] = (
    ("memcached", "memcached"), ("redis-server", "redis"), ("valkey-server", "valkey"), ("mongod", "mongodb"),
    ("mysqld", "mysql"), ("postgres", "postgresql"), ("kafka-server-start", "kafka"), ("rabbitmq-server", "rabbitmq"),
)  # fmt: skip
"""(first word of the container's command or args, engine)."""

INFRASTRUCTURE: tuple[tuple[str, str, int], ...] = (("etcd", "etcd", 2379), ("consul", "consul", 8500),
                                                     ("zookeeper", "zookeeper", 2181))
"""(image word, kind, default port) of coordination services: modelled as ``app`` services whose calls
are optional (clients cache what they read), and listed under ``imported.infrastructure``."""

IMAGE_LANGUAGES: tuple[tuple[str, str], ...] = (
    *STORE_ENGINES,
    ("nginx", "nginx"),
    ("envoy", "envoy"),
    ("opensearch", "opensearch"),
    ("elasticsearch", "opensearch"),
    ("golang", "go"), ("openjdk", "java"), ("jre", "java"), ("jdk", "java"), ("java", "java"), ("spring", "java"),
    ("tomcat", "java"), ("kotlin", "kotlin"), ("node", "nodejs"), ("nodejs", "nodejs"), ("python", "python"),
    ("dotnet", "csharp"), ("aspnet", "csharp"), ("ruby", "ruby"), ("rails", "ruby"), ("php", "php"),
    ("rust", "rust"), ("elixir", "elixir"), ("locust", "python"), ("locustio", "python"), ("k6", "go"),
    ("grafana", "go"), ("prometheus", "go"), ("jaeger", "go"), ("otelcol", "go"), ("etcd", "go"),
    ("consul", "go"), ("flagd", "go"), ("zookeeper", "java"), ("openresty", "nginx"),
)  # fmt: skip
"""(image word, ``Language``) pairs for images whose runtime is evident from the name."""

ENV_LANGUAGES: tuple[tuple[str, str], ...] = (
    ("JAVA_OPTS", "java"), ("JAVA_TOOL_OPTIONS", "java"), ("_JAVA_OPTIONS", "java"), ("JVM_OPTS", "java"),
    ("SPRING_", "java"), ("OTEL_JAVAAGENT", "java"), ("NODE_ENV", "nodejs"), ("NODE_OPTIONS", "nodejs"),
    ("PYTHONUNBUFFERED", "python"), ("PYTHONPATH", "python"), ("GUNICORN_", "python"), ("FLASK_", "python"),
    ("DJANGO_", "python"), ("ASPNETCORE_", "csharp"), ("DOTNET_", "csharp"), ("OTEL_DOTNET_AUTO_", "csharp"),
    ("GOMAXPROCS", "go"), ("GOGC", "go"), ("GODEBUG", "go"), ("RAILS_ENV", "ruby"), ("RACK_ENV", "ruby"),
    ("PHP_", "php"), ("RUST_LOG", "rust"), ("RUST_BACKTRACE", "rust"),
)  # fmt: skip
"""(env var name or prefix, ``Language``): settings only that runtime reads."""

DEFAULT_LANGUAGE = "go"
"""Language of a service whose image, env and command name no runtime (a default, listed by
``marathon app check``): Go has the smallest start-up and memory footprint of the runtimes."""

STARTUP_S: dict[str, float] = {
    "go": 2,
    "rust": 2,
    "cpp": 2,
    "nodejs": 4,
    "typescript": 4,
    "php": 3,
    "python": 5,
    "ruby": 5,
    "csharp": 8,
    "elixir": 8,
    "kotlin": 20,
    "java": 25,
    "memcached": 1,
    "rabbitmq": 10,
    "nginx": 1,
    "envoy": 1,
    "redis": 1,
    "valkey": 1,
    "mongodb": 5,
    "postgresql": 5,
    "mysql": 15,
    "kafka": 20,
    "opensearch": 30,
}
"""Container start to serving, seconds, by runtime (the table in ``engine/apps/FORMAT.md``)."""

MONITORING_WORDS = (
    "otel-collector",
    "opentelemetry-collector",
    "otelcol",
    "jaeger",
    "prometheus",
    "grafana",
    "opensearch",
    "elasticsearch",
)
LOADGEN_WORDS = ("loadgen", "locust")

_PROBE_TIMINGS = (
    ("initialDelaySeconds", "initial_delay_s"),
    ("periodSeconds", "period_s"),
    ("timeoutSeconds", "timeout_s"),
    ("failureThreshold", "failure_threshold"),
)

# Env var names that hold an address: the last word(s) of the name, after upper-casing and
# turning dots into underscores (``discovery.seed_hosts`` -> ``DISCOVERY_SEED_HOSTS``).
_ADDRESS_VAR = re.compile(
    r"(?:^|_)(?:ADDR|ADDRS|ADDRESS|ADDRESSES|HOST|HOSTS|HOSTNAME|URL|URLS|URI|ENDPOINT|ENDPOINTS|"
    r"SERVER|SERVERS|BROKERS|BOOTSTRAP_SERVERS|DSN|CONNECTION_STRING|CONN_STRING)$"
)
_HOST = r"[A-Za-z][A-Za-z0-9-]*(?:\.[A-Za-z0-9-]+)*"
_HOST_RE = re.compile(rf"^{_HOST}$")
_HOST_PORT_RE = re.compile(rf"^({_HOST}):(\d{{1,5}})$")
# scheme://netloc, with extra ",host:port" items (mongodb://a:27017,b:27017/db) but not a next URL.
_URL_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://([^/\s?#\"',]*(?:,[A-Za-z0-9.-]+(?::\d+)?(?![:A-Za-z0-9.-]))*)")
_CONN_KEY_RE = re.compile(r"(?i)(?:^|[;\s])(?:host|server|data source|address|addr|hostname)\s*=\s*([^;\s]+)")
_K8S_REF_RE = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")
_SHELL_REF_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_NC_RE = re.compile(rf"\b(?:nc|ncat|netcat)((?:\s+-[A-Za-z]+(?:\s*\d+)?)*)\s+({_HOST})\s+(\d{{1,5}})\b")
_CLI_HOST_RE = re.compile(
    rf"\b(?:pg_isready|redis-cli|valkey-cli|mysqladmin|mysql|psql|mongosh|mongo)\b[^\n;|&]*?\s"
    rf"(?:-h\s*|--host[=\s]\s*)({_HOST})"
)
_NSLOOKUP_RE = re.compile(rf"\b(?:nslookup|getent\s+hosts)\s+({_HOST})")
_TEXT_HOST_PORT_RE = re.compile(rf"(?<![\w./:@-])({_HOST}):(\d{{1,5}})\b")
_NOT_A_PEER = frozenset({"localhost", "host.docker.internal"})
# A host setting in a config file: ``spring.data.mongodb.host=ts-auth-mongo``, ``host: redis``,
# ``"server": "db"``, ``[client] host = mysql``.
_CONFIG_HOST_RE = re.compile(
    rf"(?im)[\w.\-\"']*(?:host|hostname|address|addr|server|servers)[\"']?\s*[:=]\s*[\"']?({_HOST})[\"']?\s*,?\s*$"
)
# Env vars whose value names a thing, not a peer, though it may equal a Service name
# (OTEL_SERVICE_NAME=frontend, MYSQL_DATABASE=catalogue, KAFKA_TOPIC=orders).
_NOT_ADDRESS_VAR = re.compile(r"(?:^|_)(?:NAME|ID|USER|USERNAME|PASSWORD|DATABASE|DB|TOPIC|QUEUE|BUCKET|TABLE|"
                              r"INDEX|GROUP|NAMESPACE|MODE|LEVEL|ENV|PROFILE|KEY|TOKEN|SECRET|TYPE|KIND|DRIVER|BACKEND|PROVIDER|"
                              r"EXPORTER|EXPORTERS|PROTOCOL|FORMAT)$")


class ManifestImportError(ValueError):
    """An input file the importer cannot read as manifests (or as a compose file).

    Attributes:
        source: the file, as given.
        document: 0-based index of the YAML document in the file, when known.
        obj: the object, ``Kind/name``, when known.
    """

    def __init__(self, source: str | Path, message: str, *, document: int | None = None, obj: str | None = None):
        self.source = str(source)
        self.document = document
        self.obj = obj
        where = self.source
        if document is not None:
            where += f": document {document}"
        if obj:
            where += f" ({obj})"
        super().__init__(f"{where}: {message}")


# --------------------------------------------------------------------------------------------
# Reading the inputs


@dataclass
class _Workload:
    name: str
    kind: str
    source: str
    document: int
    namespace: str | None
    labels: dict[str, str]
    replicas: int
    containers: list[dict[str, Any]]
    init_containers: list[dict[str, Any]]
    main: dict[str, Any]
    persistent: bool
    volumes: list[dict[str, Any]] = field(default_factory=list)
    claim_templates: list[str] = field(default_factory=list)


@dataclass
class _KubeService:
    name: str
    type: str
    headless: bool
    selector: dict[str, str]
    ports: list[dict[str, Any]]
    workloads: list[str] = field(default_factory=list)


@dataclass
class _Edge:
    """One piece of evidence that ``caller`` connects to ``target``."""

    caller: str
    target: str
    via: str
    env: str | None = None
    container: str | None = None
    value: str | None = None
    port: int | None = None


@dataclass
class _ComposeService:
    name: str
    image: str | None
    container_name: str | None
    env: dict[str, str]
    depends_on: list[str]
    ports: list[int]
    memory_limit: str | None


def _where(kind: str, name: str) -> str:
    return f"{kind}/{name}"


def _read_yaml_documents(path: Path) -> list[Any]:
    """All documents of a YAML file, in order (``None`` for empty ones).

    Raises:
        ManifestImportError: unreadable file, not UTF-8, or not YAML (naming the document).
    """
    try:
        text = read_text(path)
    except YamlInputError:
        raise ManifestImportError(path, "not a UTF-8 text file, so not YAML") from None
    except OSError as exc:
        raise ManifestImportError(path, f"cannot read: {exc.strerror or exc}") from None
    try:
        return parse_yaml_documents(text)
    except YamlInputError as exc:
        line = f" at line {exc.line}" if exc.line is not None else ""
        problem = exc.problem.removeprefix("not valid YAML: ")
        what = "not valid YAML" if exc.problem.startswith("not valid YAML") else "cannot be read"
        raise ManifestImportError(path, f"{what}{line}: {problem}", document=exc.document) from None


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _text(value: Any) -> str:
    """A YAML scalar as the string Kubernetes or compose would see."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _kube_objects(path: Path) -> Iterable[tuple[int, dict[str, Any]]]:
    """(document index, object) for every Kubernetes object in a manifest file.

    ``kind: List`` documents are flattened; empty documents are skipped.

    Raises:
        ManifestImportError: a document that is not a Kubernetes object.
    """
    for index, doc in enumerate(_read_yaml_documents(path)):
        if doc is None:
            continue
        if not isinstance(doc, dict) or "kind" not in doc:
            what = type(doc).__name__ if not isinstance(doc, dict) else "a mapping without `kind`"
            raise ManifestImportError(
                path,
                f"not a Kubernetes object (got {what}); expected a mapping with apiVersion and kind",
                document=index,
            )
        if doc.get("kind") == "List":
            for item in _as_list(doc.get("items")):
                if isinstance(item, dict) and "kind" in item:
                    yield index, item
            continue
        yield index, doc


def _expand_kube_refs(value: str, env: Mapping[str, str]) -> str:
    """Expand ``$(VAR)`` as the kubelet does: from variables defined earlier; ``$$`` escapes."""

    def sub(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name = match.group(1)
        return env.get(name, match.group(0))

    return _K8S_REF_RE.sub(sub, value)


def _container_env(
    container: Mapping[str, Any], configmaps: Mapping[str, Mapping[str, str]]
) -> tuple[dict[str, str], list[str]]:
    """The literal env of a container, ``$(VAR)`` expanded, and the names it could not resolve.

    Values from ``configMapKeyRef``/``envFrom.configMapRef`` are resolved when the ConfigMap is in
    the manifests; secrets and field references are not (their names are returned).
    """
    env: dict[str, str] = {}
    unresolved: list[str] = []
    for source in _as_list(container.get("envFrom")):
        ref = _as_dict(_as_dict(source).get("configMapRef"))
        data = configmaps.get(_text(ref.get("name")))
        if data is not None:
            prefix = _text(_as_dict(source).get("prefix"))
            env.update({prefix + key: value for key, value in data.items()})
    for item in _as_list(container.get("env")):
        item = _as_dict(item)
        name = _text(item.get("name"))
        if not name:
            continue
        if "value" in item:
            env[name] = _expand_kube_refs(_text(item.get("value")), env)
            continue
        ref = _as_dict(_as_dict(item.get("valueFrom")).get("configMapKeyRef"))
        data = configmaps.get(_text(ref.get("name")))
        key = _text(ref.get("key"))
        if data is not None and key in data:
            env[name] = data[key]
        else:
            unresolved.append(name)
    return env, unresolved


def _pick_main_container(name: str, containers: list[dict[str, Any]]) -> dict[str, Any]:
    """The workload's application container: the one named after it, else the first with a port."""
    for container in containers:
        if container.get("name") == name:
            return container
    for container in containers:
        if _as_list(container.get("ports")):
            return container
    return containers[0]


_DNS_LABEL = r"^(?=.{1,63}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?$"


def _container_problem(container: Mapping[str, Any]) -> str | None:
    """What a Kubernetes API server would refuse in a container's name, env, ports or resources
    (``field: problem``, the field relative to the container), else None."""
    cname = container.get("name")
    if isinstance(cname, str) and not re.match(_DNS_LABEL, cname):
        return f"name: {cname!r} is not a DNS label (lower-case letters, digits and '-')"
    for j, item in enumerate(_as_list(container.get("env"))):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item["name"]:
            got = f"{type(item).__name__} {item!r}" if not isinstance(item, dict) else "a mapping without a name"
            return (f"env[{j}]: expected a mapping {{name: NAME, value: VALUE}} (or valueFrom), got {got}"
                    f"{' -- write `- name: A` / `value: b`, not `- A=b`' if isinstance(item, str) else ''}")
        if "value" in item and isinstance(item["value"], (dict, list)):
            return f"env[{j}].value: expected a string, got {type(item['value']).__name__}"
    for j, entry in enumerate(_as_list(container.get("ports"))):
        if not isinstance(entry, dict):
            return f"ports[{j}]: expected a mapping with containerPort, got {entry!r}"
        port = entry.get("containerPort")
        if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
            hint = " (a port's name goes in ports[].name; containerPort is its number)" if isinstance(port, str) else ""
            return f"ports[{j}].containerPort: expected an integer from 1 to 65535, got {port!r}{hint}"
    resources = container.get("resources")
    for section in ("requests", "limits"):
        values = _as_dict(_as_dict(resources).get(section))
        for key in ("cpu", "memory"):
            if key in values:
                try:
                    parse_quantity(_text(values[key]))
                except ValueError:
                    return (f"resources.{section}.{key}: {values[key]!r} is not a Kubernetes quantity "
                            "(e.g. '250m', '0.5' for CPU; '128Mi', '1Gi' for memory)")
    return None


def _parse_workload(path: Path, index: int, obj: dict[str, Any]) -> _Workload:
    kind = _text(obj.get("kind"))
    meta = _as_dict(obj.get("metadata"))
    name = _text(meta.get("name"))
    if not name:
        raise ManifestImportError(path, f"{kind} without metadata.name", document=index)
    where = _where(kind, name)
    spec = _as_dict(obj.get("spec"))
    pod = _as_dict(_as_dict(spec.get("template")).get("spec"))
    containers = [c for c in _as_list(pod.get("containers")) if isinstance(c, dict)]
    if not containers:
        raise ManifestImportError(path, "spec.template.spec.containers is missing or empty", document=index, obj=where)
    if not re.match(_DNS_LABEL, name):
        raise ManifestImportError(
            path, f"metadata.name {name!r} is not a DNS label (lower-case letters, digits and '-', "
                  "starting and ending with a letter or digit, at most 63): Kubernetes refuses it, and the "
                  "model names each service after its workload", document=index, obj=where)
    for i, container in enumerate(containers):
        if not container.get("name"):
            raise ManifestImportError(
                path, f"spec.template.spec.containers[{i}] has no name", document=index, obj=where
            )
    for key in ("containers", "initContainers"):
        for i, container in enumerate(_as_list(pod.get(key))):
            problem = _container_problem(_as_dict(container))
            if problem is not None:
                raise ManifestImportError(path, f"spec.template.spec.{key}[{i}].{problem}", document=index, obj=where)
    labels = {
        str(k): _text(v)
        for k, v in _as_dict(_as_dict(_as_dict(spec.get("template")).get("metadata")).get("labels")).items()
    }
    replicas_raw = spec.get("replicas", 1)
    if not isinstance(replicas_raw, int) or isinstance(replicas_raw, bool) or replicas_raw < 0:
        raise ManifestImportError(
            path, f"spec.replicas must be a non-negative integer, got {replicas_raw!r}", document=index, obj=where
        )
    claims = bool(_as_list(spec.get("volumeClaimTemplates"))) if kind == "StatefulSet" else False
    pvc_volumes = any("persistentVolumeClaim" in _as_dict(v) for v in _as_list(pod.get("volumes")))
    return _Workload(
        name=name,
        kind=kind,
        source=str(path),
        document=index,
        namespace=_text(meta.get("namespace")) or None,
        labels=labels,
        replicas=replicas_raw,
        containers=containers,
        init_containers=[c for c in _as_list(pod.get("initContainers")) if isinstance(c, dict)],
        main=_pick_main_container(name, containers),
        persistent=claims or pvc_volumes,
        volumes=[v for v in _as_list(pod.get("volumes")) if isinstance(v, dict)],
        claim_templates=[_text(_as_dict(_as_dict(t).get("metadata")).get("name"))
                         for t in _as_list(spec.get("volumeClaimTemplates"))] if kind == "StatefulSet" else [],
    )


def _parse_service(obj: dict[str, Any]) -> _KubeService | None:
    meta = _as_dict(obj.get("metadata"))
    name = _text(meta.get("name"))
    if not name:
        return None
    spec = _as_dict(obj.get("spec"))
    return _KubeService(
        name=name,
        type=_text(spec.get("type")) or "ClusterIP",
        headless=_text(spec.get("clusterIP")) == "None",
        selector={str(k): _text(v) for k, v in _as_dict(spec.get("selector")).items()},
        ports=[p for p in _as_list(spec.get("ports")) if isinstance(p, dict)],
    )


# --------------------------------------------------------------------------------------------
# Addresses in configuration values


def _split_host_port(text: str) -> tuple[str, int | None]:
    if text.startswith("["):  # [ipv6]:port is never a Service name
        return "", None
    host, _, port = text.partition(":")
    return host, int(port) if port.isdigit() else None


def _addresses(var: str, value: str) -> list[tuple[str, int | None]]:
    """Hosts (with ports where the value gives one) that an env var's value points at.

    Recognised forms: connection strings with a ``Host=``/``Server=``/``host=`` key, URLs
    (``http://name:port/...``, ``postgres://user:pw@name/db``, ``PLAINTEXT://name:9092``),
    ``name:port`` (also comma-separated lists) and, for variables named like an address
    (``*_HOST``, ``*_ADDR``...), a bare host name.
    """
    found: list[tuple[str, int | None]] = []
    conn = _CONN_KEY_RE.findall(value)
    if conn:
        for hostport in conn:
            host, port = _split_host_port(hostport.replace(",", ":", 1))
            found.append((host, port))
        return found
    urls = _URL_RE.findall(value)
    if urls:
        for netloc in urls:
            hosts = netloc.rsplit("@", 1)[-1]
            for hostport in hosts.split(","):
                found.append(_split_host_port(hostport))
        return found
    items = [item for item in re.split(r"[,\s]+", value.strip()) if item]
    pairs = [_HOST_PORT_RE.match(item) for item in items]
    if items and all(pairs):
        return [(m.group(1), int(m.group(2))) for m in pairs if m]
    normalized = re.sub(r"[^A-Z0-9]", "_", var.upper())
    if _ADDRESS_VAR.search(normalized) and _HOST_RE.match(value.strip()):
        return [(value.strip(), None)]
    return []


def _script_targets(text: str) -> list[tuple[str, int | None]]:
    """Hosts an init container's shell command waits for or probes."""
    found: list[tuple[str, int | None]] = []
    for match in _NC_RE.finditer(text):
        found.append((match.group(2), int(match.group(3))))
    for netloc in _URL_RE.findall(text):
        found.append(_split_host_port(netloc.rsplit("@", 1)[-1]))
    for match in _CLI_HOST_RE.finditer(text):
        found.append((match.group(1), None))
    for match in _NSLOOKUP_RE.finditer(text):
        found.append((match.group(1), None))
    for match in _TEXT_HOST_PORT_RE.finditer(text):
        found.append((match.group(1), int(match.group(2))))
    unique: dict[tuple[str, int | None], None] = {}
    for item in found:
        unique.setdefault(item, None)
    return list(unique)


def _expand_shell(text: str, env: Mapping[str, str]) -> str:
    def sub(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return env.get(name, match.group(0))

    return _SHELL_REF_RE.sub(sub, text)


def _peer_name(host: str) -> str | None:
    """The Service name a host refers to: ``kafka``, ``kafka.ns``, ``kafka.ns.svc.cluster.local``."""
    host = host.strip().rstrip(".").lower()
    if not host or host in _NOT_A_PEER or not _HOST_RE.match(host):
        return None
    first, _, rest = host.partition(".")
    if not rest or re.match(r"^[a-z0-9-]+(?:\.svc(?:\.cluster\.local)?)?$", rest):
        return first
    return None


# --------------------------------------------------------------------------------------------
# docker-compose


def _read_dotenv(path: Path) -> dict[str, str]:
    """A compose ``.env`` file: ``KEY=VALUE`` lines, quotes, ``export``, ``${VAR}`` of earlier keys.

    Raises:
        ManifestImportError: a line that is not ``KEY=VALUE``.
    """
    values: dict[str, str] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestImportError(path, f"cannot read the env file: {exc}") from None
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export ") :].lstrip()
        key, sep, value = line.partition("=")
        key = key.strip()
        if not sep or not re.match(r"^[A-Za-z_][A-Za-z0-9_.-]*$", key):
            raise ManifestImportError(path, f"line {number}: expected KEY=VALUE, got {raw!r}")
        value = value.strip()
        if value[:1] == "'" and value.count("'") >= 2:
            values[key] = value[1 : value.index("'", 1)]
            continue
        if value[:1] == '"' and value.count('"') >= 2:
            end = 1
            while end < len(value) and not (value[end] == '"' and value[end - 1] != "\\"):
                end += 1
            inner = value[1:end].replace('\\"', '"').replace("\\n", "\n")
            values[key] = _interpolate(inner, values, path)[0]
            continue
        value = re.split(r"\s+#", value, maxsplit=1)[0].strip()
        values[key] = _interpolate(value, values, path)[0]
    return values


def _interpolate(text: str, variables: Mapping[str, str], source: Path) -> tuple[str, set[str]]:
    """Compose variable interpolation; returns the text and the names that were not set.

    Supports ``$VAR``, ``${VAR}``, ``${VAR:-default}``, ``${VAR-default}``, ``${VAR:+alt}``,
    ``${VAR+alt}``, ``${VAR:?msg}``, ``${VAR?msg}`` (nested in defaults too) and ``$$``. An unset
    variable without a default is left as written (compose would substitute an empty string) and
    reported, so that the skeleton shows what is missing.

    Raises:
        ManifestImportError: a ``${VAR?msg}`` whose variable is unset, or an unclosed ``${``.
    """
    out: list[str] = []
    missing: set[str] = set()
    i = 0
    while i < len(text):
        ch = text[i]
        if ch != "$":
            out.append(ch)
            i += 1
            continue
        nxt = text[i + 1 : i + 2]
        if nxt == "$":
            out.append("$")
            i += 2
            continue
        if nxt == "{":
            depth, j = 1, i + 2
            while j < len(text) and depth:
                if text.startswith("${", j):
                    depth += 1
                    j += 2
                    continue
                if text[j] == "}":
                    depth -= 1
                j += 1
            if depth:
                raise ManifestImportError(source, f"unclosed '${{' in {text!r}")
            body = text[i + 2 : j - 1]
            match = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-+?])(.*))?$", body, re.DOTALL)
            if match is None:
                raise ManifestImportError(source, f"bad variable reference '${{{body}}}'")
            name, op, arg = match.group(1), match.group(2), match.group(3) or ""
            value = variables.get(name)
            unset_or_empty = value is None or (op is not None and op.startswith(":") and value == "")
            if op in (":-", "-"):
                if unset_or_empty:
                    inner, more = _interpolate(arg, variables, source)
                    out.append(inner)
                    missing |= more
                else:
                    out.append(value or "")
            elif op in (":+", "+"):
                if not unset_or_empty:
                    inner, more = _interpolate(arg, variables, source)
                    out.append(inner)
                    missing |= more
            elif op in (":?", "?"):
                if unset_or_empty:
                    raise ManifestImportError(source, f"required variable {name} is not set: {arg or 'no message'}")
                out.append(value or "")
            elif value is None:
                missing.add(name)
                out.append(text[i:j])
            else:
                out.append(value)
            i = j
            continue
        match = re.match(r"[A-Za-z_][A-Za-z0-9_]*", text[i + 1 :])
        if match is None:
            out.append("$")
            i += 1
            continue
        name = match.group(0)
        if name in variables:
            out.append(variables[name])
        else:
            missing.add(name)
            out.append("$" + name)
        i += 1 + len(name)
    return "".join(out), missing


def _compose_ports(entries: list[Any], variables: Mapping[str, str], source: Path) -> list[int]:
    ports: list[int] = []
    for entry in entries:
        if isinstance(entry, dict):
            target = _interpolate(_text(entry.get("target")), variables, source)[0]
        else:
            text = _interpolate(_text(entry), variables, source)[0].split("/", 1)[0]
            target = text.rsplit(":", 1)[-1].split("-", 1)[0]
        if target.strip().isdigit():
            ports.append(int(target))
    return ports


def _read_compose(path: Path) -> tuple[dict[str, _ComposeService], list[str]]:
    """Services of a compose file, with interpolated image, env, depends_on and ports.

    Returns:
        (services by name, warnings).

    Raises:
        ManifestImportError: not YAML, no ``services`` mapping, or a required variable unset.
    """
    docs = [d for d in _read_yaml_documents(path) if d is not None]
    if len(docs) != 1 or not isinstance(docs[0], dict) or not isinstance(docs[0].get("services"), dict):
        raise ManifestImportError(path, "not a compose file: expected one YAML mapping with a `services` mapping")
    variables: dict[str, str] = {}
    dotenv: Path | None = None
    for candidate in (path.parent / ".env", path.parent / "dotenv.env"):
        if candidate.is_file():
            dotenv = candidate
            variables = _read_dotenv(candidate)
            break
    warnings: list[str] = []
    missing: set[str] = set()
    services: dict[str, _ComposeService] = {}
    for name, raw in docs[0]["services"].items():
        spec = _as_dict(raw)
        image, gone = _interpolate(_text(spec.get("image")), variables, path) if spec.get("image") else (None, set())
        missing |= gone
        env: dict[str, str] = {}
        raw_env = spec.get("environment")
        items: list[tuple[str, str | None]] = []
        if isinstance(raw_env, dict):
            items = [(str(k), None if v is None else _text(v)) for k, v in raw_env.items()]
        else:
            for entry in _as_list(raw_env):
                key, sep, text = _text(entry).partition("=")
                items.append((key.strip(), text if sep else None))
        for key, raw_value in items:
            if raw_value is None:
                if key in variables:  # `- KAFKA_ADDR` takes the value of the .env file
                    env[key] = variables[key]
                continue
            env[key], gone = _interpolate(raw_value, variables, path)
            missing |= gone
        depends = spec.get("depends_on")
        depends_on = [str(d) for d in depends] if isinstance(depends, (list, dict)) else []
        depends_on += [_text(link).split(":", 1)[0] for link in _as_list(spec.get("links"))]
        limits = _as_dict(_as_dict(_as_dict(spec.get("deploy")).get("resources")).get("limits"))
        memory = _interpolate(_text(limits["memory"]), variables, path)[0] if "memory" in limits else None
        ports = _compose_ports(_as_list(spec.get("ports")) + _as_list(spec.get("expose")), variables, path)
        container_name = _text(spec.get("container_name")) or None
        services[str(name)] = _ComposeService(
            name=str(name),
            image=image,
            container_name=container_name,
            env=env,
            depends_on=depends_on,
            ports=ports,
            memory_limit=memory,
        )
    if missing:
        source = f"{dotenv.name}" if dotenv else "no .env or dotenv.env next to it"
        warnings.append(
            f"{path}: variables not set ({source}): {', '.join(sorted(missing))}; left as written "
            "(docker compose would substitute empty strings)"
        )
    return services, warnings


# --------------------------------------------------------------------------------------------
# Guessing role, engine, language and protocol


def _image_words(image: str) -> list[str]:
    image = image.lower().split("@", 1)[0]
    return [w for w in re.split(r"[/:._-]+", image) if w]


def _udp_ports(container: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The container's UDP/SCTP ports as ``{port, name?, protocol}`` (reported, not modelled)."""
    out: list[dict[str, Any]] = []
    for entry in _as_list(container.get("ports")):
        entry = _as_dict(entry)
        proto = _text(entry.get("protocol")).upper()
        if proto in ("UDP", "SCTP"):
            item: dict[str, Any] = {"port": entry.get("containerPort"), "protocol": proto}
            if entry.get("name"):
                item["name"] = _text(entry["name"])
            out.append(item)
    return out


def _command_words(container: Mapping[str, Any]) -> list[str]:
    """The container's command and args as words (a ``sh -c`` script split on blanks)."""
    words: list[str] = []
    for item in _as_list(container.get("command")) + _as_list(container.get("args")):
        words.extend(_text(item).split())
    return words


def _detect_store(image: str, container: Mapping[str, Any], env: Mapping[str, str]) -> tuple[str, str] | None:
    """(engine, evidence) when the image, the command, a port name, server-only env vars or the
    only port say the workload is a store or broker; None otherwise.

    The image word decides first (``redis:alpine``, ``mysql:5.6``, ``memcached:1.6``); then the
    command (``memcached -m 64``, ``redis-server``); then a port named for an engine (``mysql``,
    ``amqp``); then env vars only the server image reads (``MYSQL_ROOT_PASSWORD``,
    ``POSTGRES_PASSWORD``, ``KAFKA_BROKER_ID``: a client never sets them); last, the engine's
    default port when it is the container's only TCP port.
    """
    engine = _store_engine(image)
    if engine is not None:
        return engine, f"image {image}"
    words = [w.rsplit("/", 1)[-1] for w in _command_words(container)]
    for word in words[:3]:
        for command, eng in STORE_COMMANDS:
            if word == command or word.startswith(command + ".sh"):
                return eng, f"command {word}"
    ports, named = _container_ports(container)
    for name, port in named.items():
        by_name = STORE_PORT_NAMES.get(name.lower())
        if by_name is not None:
            return by_name, f"container port {port} named {name!r}"
    for var, eng in STORE_SERVER_ENV:
        if var in env:
            return eng, f"env {var} (read only by the {eng} server image)"
    if len(ports) == 1 and ports[0] in STORE_PORTS:
        return STORE_PORTS[ports[0]], f"only container port {ports[0]} ({STORE_PORTS[ports[0]]}'s default)"
    return None


def _detect_infrastructure(image: str, container: Mapping[str, Any]) -> tuple[str, str] | None:
    """(kind, evidence) for etcd, consul or zookeeper, from the image or the command."""
    words = _image_words(image)
    for word, kind, _ in INFRASTRUCTURE:
        if word in words:
            return kind, f"image {image}"
    for word in [w.rsplit("/", 1)[-1] for w in _command_words(container)][:2]:
        for name, kind, _ in INFRASTRUCTURE:
            if word == name:
                return kind, f"command {word}"
    return None


def _guess_language(image: str, container: Mapping[str, Any], env: Mapping[str, str]) -> tuple[str, str] | None:
    """(language, evidence) from the image name, then env vars only one runtime reads, then the
    command (``java -jar``, ``node``, ``python``, ``dotnet``); None when nothing tells."""
    words = _image_words(image)
    if "exporter" in words:
        return "go", f"image {image} (Prometheus exporters are Go programs)"
    language = _image_language(image)
    if language is not None:
        return language, f"image {image}"
    for var, lang in ENV_LANGUAGES:
        hits = [k for k in env if k == var or (var.endswith("_") and k.startswith(var))]
        if hits:
            return lang, f"env {hits[0]}"
    commands = {"java": "java", "node": "nodejs", "npm": "nodejs", "python": "python", "python3": "python",
                "gunicorn": "python", "uvicorn": "python", "dotnet": "csharp", "ruby": "ruby", "bundle": "ruby",
                "php": "php", "php-fpm": "php", "nginx": "nginx", "envoy": "envoy"}
    for word in [w.rsplit("/", 1)[-1] for w in _command_words(container)][:2]:
        if word in commands:
            return commands[word], f"command {word}"
    return None


def _store_engine(image: str) -> str | None:
    words = _image_words(image)
    if "exporter" in words:
        return None
    for word, engine in STORE_ENGINES:
        if word in words:
            return engine
    return None


def _guess_role(name: str, image: str) -> str:
    squashed = re.sub(r"[-_]", "", f"{name} {image}".lower())
    words = _image_words(image) + re.split(r"[-_.]+", name.lower())
    if any(w in squashed for w in LOADGEN_WORDS) or "k6" in words:
        return "loadgenerator"
    text = f"{name} {image}".lower()
    if any(w in text for w in MONITORING_WORDS) or "exporter" in words:
        return "monitoring"
    if _store_engine(image) is not None:
        return "store"
    return "app"


def _image_language(image: str) -> str | None:
    words = _image_words(image)
    if "openresty" in words:
        return "nginx"
    for word, language in IMAGE_LANGUAGES:
        if word in words:
            return language
    return None


# --------------------------------------------------------------------------------------------
# Conversions to app-model fields


def _resources(container: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    raw = _as_dict(container.get("resources"))
    for section in ("requests", "limits"):
        values = _as_dict(raw.get(section))
        picked = {key: _text(values[key]) for key in ("cpu", "memory") if key in values}
        if picked:
            out[section] = picked
    return out


def _resolve_port(value: Any, named: Mapping[str, int]) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = _text(value)
    if text.isdigit():
        return int(text)
    return named.get(text)


def _probe(raw: Mapping[str, Any], named: Mapping[str, int]) -> tuple[dict[str, Any] | None, str | None]:
    """A Kubernetes probe as ``Probe`` fields (only those the manifest sets), and a warning."""
    probe: dict[str, Any]
    warning = None
    for key, kind in (("httpGet", "http"), ("grpc", "grpc"), ("tcpSocket", "tcp")):
        if key in raw:
            handler = _as_dict(raw[key])
            probe = {"type": kind}
            port = _resolve_port(handler.get("port"), named)
            if port is not None:
                probe["port"] = port
            elif handler.get("port") is not None:
                warning = f"probe port {handler.get('port')!r} is not a container port name"
            if kind == "http" and handler.get("path"):
                probe["path"] = _text(handler["path"])
            break
    else:
        if "exec" not in raw:
            return None, "probe with no httpGet, grpc, tcpSocket or exec handler"
        probe = {"type": "exec"}
    for key, out_key in _PROBE_TIMINGS:
        if isinstance(raw.get(key), (int, float)) and not isinstance(raw.get(key), bool):
            probe[out_key] = raw[key]
    return probe, warning


def _container_ports(container: Mapping[str, Any]) -> tuple[list[int], dict[str, int]]:
    """TCP container ports in order, and the named ones; UDP and SCTP ports are left out (the
    model's services speak TCP: see :func:`_udp_ports`)."""
    ports: list[int] = []
    named: dict[str, int] = {}
    for entry in _as_list(container.get("ports")):
        entry = _as_dict(entry)
        if _text(entry.get("protocol")).upper() in ("UDP", "SCTP"):
            continue
        port = entry.get("containerPort")
        if isinstance(port, int) and not isinstance(port, bool):
            ports.append(port)
            if entry.get("name"):
                named[_text(entry["name"])] = port
    return ports, named


def _choose_service(workload: _Workload, services: list[_KubeService]) -> _KubeService | None:
    """The Service the model calls ``service_port``: same name, else ClusterIP, else the rest."""

    def rank(svc: _KubeService) -> tuple[int, int]:
        kind_rank = {"ClusterIP": 0, "NodePort": 1, "LoadBalancer": 2}.get(svc.type, 3)
        return (0 if svc.name == workload.name else 1, kind_rank + (4 if svc.headless else 0))

    candidates = [s for s in services if workload.name in s.workloads and s.ports]
    return min(candidates, key=rank) if candidates else None


# --------------------------------------------------------------------------------------------
# The import


@dataclass
class _Catalog:
    """Names the manifests define, for resolving addresses."""

    workloads: dict[str, _Workload]
    services: dict[str, _KubeService]
    container_owner: dict[str, str]

    def resolve(self, host: str) -> tuple[str | None, str | None]:
        """(workload, hint): the workload a peer name reaches, or a hint why it reaches none."""
        svc = self.services.get(host)
        if svc is not None:
            if not svc.workloads:
                return None, f"Service {host} selects no Deployment or StatefulSet of the manifests"
            return (host if host in svc.workloads else svc.workloads[0]), None
        if host in self.workloads:
            return host, None
        owner = self.container_owner.get(host)
        if owner is not None:
            return None, f"{host} is a container of {self.workloads[owner].kind} {owner}, not a Service of its own"
        return None, None


@dataclass
class _Extras:
    """What the manifests say besides workloads and Services: config objects, claims, HTTP routing."""

    secrets: dict[str, tuple[str, list[str]]] = field(default_factory=dict)  # name -> (type, keys)
    configmap_keys: dict[str, list[str]] = field(default_factory=dict)  # data and binaryData keys
    configmap_labels: dict[str, dict[str, str]] = field(default_factory=dict)
    sources: dict[tuple[str, str], str] = field(default_factory=dict)  # (kind, name) -> "file: document N"
    claims: set[str] = field(default_factory=set)  # PersistentVolumeClaim names
    http_routes: list[dict[str, Any]] = field(default_factory=list)  # {kind, name, service, path, host?}
    unmodelled: list[str] = field(default_factory=list)  # "DaemonSet/node-agent": pods the model cannot hold


def _backend_routes(kind: str, obj: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Backends of an Ingress (``networking.k8s.io`` v1 and v1beta1) or a Gateway API HTTPRoute,
    as ``{kind, name, service, path, host?}``."""
    name = _text(_as_dict(obj.get("metadata")).get("name"))
    spec = _as_dict(obj.get("spec"))
    out: list[dict[str, Any]] = []

    def add(service: str, path: str, host: str = "") -> None:
        if service:
            item = {"kind": kind, "name": name, "service": service, "path": path or "/"}
            if host:
                item["host"] = host
            if item not in out:
                out.append(item)

    def backend_name(backend: Mapping[str, Any]) -> str:
        return _text(_as_dict(backend.get("service")).get("name")) or _text(backend.get("serviceName"))

    if kind == "Ingress":
        default = _as_dict(spec.get("defaultBackend") or spec.get("backend"))
        add(backend_name(default), "/")
        for rule in _as_list(spec.get("rules")):
            rule = _as_dict(rule)
            for item in _as_list(_as_dict(rule.get("http")).get("paths")):
                item = _as_dict(item)
                add(backend_name(_as_dict(item.get("backend"))), _text(item.get("path")), _text(rule.get("host")))
        return out
    hosts = [_text(h) for h in _as_list(spec.get("hostnames"))]
    for rule in _as_list(spec.get("rules")):
        rule = _as_dict(rule)
        paths = [_text(_as_dict(_as_dict(m).get("path")).get("value")) for m in _as_list(rule.get("matches"))] or ["/"]
        for ref in _as_list(rule.get("backendRefs")):
            ref = _as_dict(ref)
            if _text(ref.get("kind")) in ("", "Service"):
                for path in paths:
                    add(_text(ref.get("name")), path, hosts[0] if hosts else "")
    return out


def _load_manifests(
    manifests: Sequence[Path],
) -> tuple[dict[str, _Workload], dict[str, _KubeService], dict[str, dict[str, str]], _Extras]:
    workloads: dict[str, _Workload] = {}
    services: dict[str, _KubeService] = {}
    configmaps: dict[str, dict[str, str]] = {}
    extras = _Extras()
    for path in manifests:
        for index, obj in _kube_objects(path):
            kind = _text(obj.get("kind"))
            if kind in WORKLOAD_KINDS:
                workload = _parse_workload(path, index, obj)
                if workload.name in workloads:
                    first = workloads[workload.name]
                    raise ManifestImportError(
                        path,
                        f"a second workload named {workload.name!r} (first: {first.kind} in {first.source}, "
                        f"document {first.document}); names must be unique",
                        document=index,
                        obj=_where(kind, workload.name),
                    )
                workloads[workload.name] = workload
            elif kind == "Service":
                svc = _parse_service(obj)
                if svc is not None:
                    services[svc.name] = svc
            elif kind == "ConfigMap":
                name = _text(_as_dict(obj.get("metadata")).get("name"))
                configmaps[name] = {str(k): _text(v) for k, v in _as_dict(obj.get("data")).items()}
                extras.configmap_keys[name] = [*configmaps[name], *map(str, _as_dict(obj.get("binaryData")))]
                labels = _as_dict(_as_dict(obj.get("metadata")).get("labels"))
                extras.configmap_labels[name] = {str(k): _text(v) for k, v in labels.items()}
                extras.sources[("ConfigMap", name)] = f"{path}: document {index}"
            elif kind == "Secret":
                name = _text(_as_dict(obj.get("metadata")).get("name"))
                keys = [*map(str, _as_dict(obj.get("data"))), *map(str, _as_dict(obj.get("stringData")))]
                extras.secrets[name] = (_text(obj.get("type")) or "Opaque", list(dict.fromkeys(keys)))
                extras.sources[("Secret", name)] = f"{path}: document {index}"
            elif kind == "PersistentVolumeClaim":
                extras.claims.add(_text(_as_dict(obj.get("metadata")).get("name")))
            elif kind in ("Ingress", "HTTPRoute"):
                extras.http_routes.extend(_backend_routes(kind, obj))
            elif kind in UNMODELLED_WORKLOADS:
                extras.unmodelled.append(f"{kind}/{_text(_as_dict(obj.get('metadata')).get('name'))}")
    if not workloads:
        files = ", ".join(str(p) for p in manifests) or "<no files>"
        raise ManifestImportError(files, "no Deployment or StatefulSet found; nothing to import")
    by_label: dict[tuple[str, str], list[_Workload]] = {}  # one pass, not workloads x Services
    for w in workloads.values():
        for pair in w.labels.items():
            by_label.setdefault(pair, []).append(w)
    for svc in services.values():
        if svc.selector:
            some_label = next(iter(svc.selector.items()))
            svc.workloads = [w.name for w in by_label.get(some_label, [])
                             if all(w.labels.get(k) == v for k, v in svc.selector.items())]
    return workloads, services, configmaps, extras


def _dns_label(text: str) -> str:
    label = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")
    return label[:63].strip("-") or "app"


def import_manifests(manifests: Sequence[Path], compose: Path | None = None, name: str | None = None,
                     traces: Path | None = None, config_files: Mapping[str, Path] | None = None) -> dict[str, Any]:
    """Build a runnable app model from Kubernetes manifests and, optionally, a compose file and
    a traces file.

    Args:
        manifests: YAML files of Kubernetes objects (multi-document files are fine; kinds other
            than Deployment, StatefulSet, Service, ConfigMap, Secret, PersistentVolumeClaim,
            Ingress and HTTPRoute are skipped).
        compose: a docker-compose file whose ``environment`` and ``depends_on`` add edges; its
            ``${VAR}`` references are resolved from ``.env`` or ``dotenv.env`` beside it.
        name: the app name (DNS label); default: the workloads' namespace, else the name of the
            first manifest's directory.
        traces: a file of observed calls (:func:`read_traces`), each added as an edge.
        config_files: workload name -> a config file baked into its image (an nginx.conf),
            scanned like a mounted ConfigMap.

    Returns:
        A dict that :func:`engine.apps.model.parse_app` accepts as it is: ``name``, ``title``,
        ``namespace``, ``description``, ``provenance``, ``load``, ``services`` (one per
        workload, in manifest order, plus a load generator when the manifests have none),
        ``routes``, ``config_objects`` and ``imported`` (``engine/apps/FORMAT.md``, *Imported
        models*): ``guesses`` and ``defaults`` (``{service, field, value, evidence}``),
        ``entry_points``, ``dangling`` (``{caller, name, via, env?, container?, value?,
        hint?}``), ``udp``, ``infrastructure``, ``evidence`` (every edge, ``{caller, callee,
        via, env?, container?, value?, port?, kubernetes_service?, telemetry?}``, ``via`` one of
        ``env``, ``env-bare-name``, ``args``, ``configmap``, ``config-file``, ``init-container``, ``trace``,
        ``name-pair``, ``compose-env``, ``compose-depends_on``), ``telemetry``,
        ``kubernetes_services``, ``extra_containers``, ``compose_only``,
        ``compose_edges_to_compose_only``, ``traces`` and ``warnings``.

    Raises:
        ManifestImportError: a file that cannot be read or is not YAML, a document that is not
            a Kubernetes object, a malformed workload, no Deployment/StatefulSet at all, a
            compose or traces file that is not one, or no app service at all; the message names
            the file, document and object (or line).
    """
    return _Importer([Path(p) for p in manifests]).run(
        Path(compose) if compose is not None else None, name, Path(traces) if traces is not None else None,
        {w: Path(p) for w, p in (config_files or {}).items()})


def read_traces(path: Path) -> list[dict[str, Any]]:
    """Observed calls from a traces file: JSON Lines, one call per line, or one JSON array.

    Each record is ``{"from": CALLER, "to": CALLEE}`` with an optional ``"calls": N`` (how many
    were seen, a positive integer; default 1). Names are Service or workload names of the
    manifests (``cartservice``, ``cartservice.shop.svc.cluster.local``). Blank lines and lines
    starting with ``#`` are skipped. An OpenTelemetry span export reduces to this shape: one
    record per client span, ``from`` its ``service.name`` and ``to`` its ``peer.service`` (or the
    server span's ``service.name``).

    Raises:
        ManifestImportError: unreadable file, a line that is not JSON, or a record without
            string ``from`` and ``to``; the message names the file and line.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestImportError(path, f"cannot read the traces file: {exc}") from None
    items: list[tuple[int, Any]] = []
    if text.lstrip().startswith("["):
        try:
            items = [(0, item) for item in json.loads(text)]
        except json.JSONDecodeError as exc:
            raise ManifestImportError(path, f"not a JSON array: {exc}") from None
    else:
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            try:
                items.append((number, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise ManifestImportError(path, f"line {number}: not JSON ({exc.msg})") from None
    records: list[dict[str, Any]] = []
    for number, item in items:
        where = f"line {number}" if number else f"item {len(records)}"
        if not isinstance(item, dict) or not isinstance(item.get("from"), str) or not isinstance(item.get("to"), str):
            raise ManifestImportError(path, f'{where}: expected {{"from": CALLER, "to": CALLEE}}, got {item!r}')
        calls = item.get("calls", 1)
        if not isinstance(calls, int) or isinstance(calls, bool) or calls < 1:
            raise ManifestImportError(path, f"{where}: calls must be a positive integer, got {calls!r}")
        records.append({"from": item["from"], "to": item["to"], "calls": calls})
    return records


def _sibling_port(var: str, env: Mapping[str, str]) -> int | None:
    """The port beside a ``*_HOST`` var: ``FOO_PORT``, else the only ``FOO_*PORT*`` (``JAEGER_UI_PORT``)."""
    prefix = re.sub(r"_HOST(NAME)?$", "", var)
    if prefix == var:
        return None
    exact = env.get(prefix + "_PORT", "")
    if exact.isdigit():
        return int(exact)
    others = [v for k, v in env.items() if k.startswith(prefix + "_") and "PORT" in k[len(prefix) :] and v.isdigit()]
    return int(others[0]) if len(others) == 1 else None


def _is_collector(name: str, image: str) -> bool:
    text = f"{name} {image}".lower()
    return any(w in text for w in ("otel-collector", "opentelemetry-collector", "otelcol"))


class _Importer:
    """One import: the parsed manifests, the service entries being built and the notes."""

    def __init__(self, paths: list[Path]) -> None:
        self.paths = paths
        self.workloads, self.kube_services, self.configmaps, self.extras = _load_manifests(paths)
        owner = {}
        for workload in self.workloads.values():
            for container in workload.containers:
                if container is not workload.main and container["name"] != workload.name:
                    owner[str(container["name"])] = workload.name
        self.catalog = _Catalog(self.workloads, self.kube_services, owner)
        self.entries: dict[str, dict[str, Any]] = {}
        self.evidence: list[_Edge] = []
        self.telemetry: list[_Edge] = []
        self.dangling: list[dict[str, Any]] = []
        self.warnings: list[str] = []
        self.http_callees: dict[str, set[str]] = {}
        self.guesses: list[dict[str, Any]] = []
        self.udp: list[dict[str, Any]] = []
        self.infrastructure: list[dict[str, Any]] = []

    # ---------------------------------------------------------------- the whole import

    def run(self, compose: Path | None, name: str | None, traces: Path | None = None,
            config_files: Mapping[str, Path] | None = None) -> dict[str, Any]:
        """The model described in :func:`import_manifests`."""
        namespace = self._namespace()
        app_name = _dns_label(name) if name else _dns_label(namespace or self.paths[0].resolve().parent.name)
        unresolved_env: dict[str, list[str]] = {}
        for workload in self.workloads.values():
            self.entries[workload.name] = self._entry(workload, unresolved_env)
        by_callee: dict[str, list[_Edge]] = {}  # evidence per callee, once (not workloads x edges)
        for edge in self.evidence:
            if edge.port is not None:
                by_callee.setdefault(self._callee(edge), []).append(edge)
        for workload in self.workloads.values():
            self._set_ports(workload, by_callee.get(workload.name, []))
        if unresolved_env:
            self.warnings.append(
                "env from secrets or field references, left out: "
                + "; ".join(f"{var} ({', '.join(names)})" for var, names in unresolved_env.items())
            )
        if self.extras.unmodelled:
            self.warnings.append("not modelled (the model holds Deployments and StatefulSets): "
                                 + ", ".join(self.extras.unmodelled))
        compose_notes: dict[str, Any] = {}
        if compose is not None:
            compose_notes.update(self._apply_compose(compose))
        trace_records = self._apply_traces(traces) if traces is not None else []
        self._apply_config_files(config_files or {})
        self._pair_stores()
        self._guess_protocols()
        sources = [str(p) for p in self.paths] + [str(f) for f in (compose, traces) if f is not None]
        sources += [f"{w}={p}" for w, p in (config_files or {}).items()]
        model: dict[str, Any] = {
            "name": app_name,
            "title": app_name.replace("-", " ").title(),
            "namespace": _dns_label(namespace) if namespace else app_name,
            "description": f"Imported by `marathon app import` from {', '.join(Path(s).name for s in sources)}.",
            "provenance": sources,
            "load": {},
            "services": list(self.entries.values()),
            "routes": [],
        }
        config_objects = self._config_objects()
        if config_objects:
            model["config_objects"] = config_objects
        entry_points = self._entry_points()
        imported: dict[str, Any] = {
            "tool": "marathon app import",
            "sources": sources,
            "guesses": self.guesses,
            "defaults": [],
            "entry_points": entry_points,
            "dangling": self.dangling,
            "udp": self.udp + self._service_udp(),
            "infrastructure": self.infrastructure,
            "evidence": [self._edge_record(e) for e in self.evidence],
            "telemetry": [{"caller": e.caller, "callee": self._callee(e), "env": e.env} for e in self.telemetry],
            "kubernetes_services": [_service_record(s) for s in self.kube_services.values()],
            "extra_containers": self._extra_containers(),
            **compose_notes,
            "traces": trace_records,
            "warnings": self.warnings,
        }
        try:
            complete_model(model, imported, {i["service"] for i in self.infrastructure})
        except AppModelError as exc:
            raise self._model_error(model, exc, sources) from None
        except ValueError as exc:
            raise ManifestImportError(", ".join(sources), f"cannot complete the model: {exc}") from None
        model["services"] = [_ordered(e) for e in model["services"]]
        model["imported"] = imported
        return model

    def _model_error(self, model: Mapping[str, Any], exc: AppModelError, sources: list[str]) -> ManifestImportError:
        """The model's problems, named by the manifest object each service came from: the first
        problem under ``services[i]`` of a workload gives the file, document and ``Kind/name``."""
        services = model.get("services") or []
        for loc, _ in exc.problems:
            found = re.match(r"^services\[(\d+)\]", loc)
            if found and int(found.group(1)) < len(services):
                workload = self.workloads.get(_text(_as_dict(services[int(found.group(1))]).get("name")))
                if workload is not None:
                    text = "; ".join(f"{loc or '<top>'}: {msg}" for loc, msg in exc.problems)
                    return ManifestImportError(workload.source, f"the imported model is invalid: {text}",
                                               document=workload.document, obj=_where(workload.kind, workload.name))
        text = "; ".join(f"{loc or '<top>'}: {msg}" for loc, msg in exc.problems)
        return ManifestImportError(", ".join(sources), f"cannot complete the model: {text}")

    def _config_objects(self) -> list[dict[str, Any]]:
        """Every ConfigMap and Secret of the manifests with its keys (never its values)."""
        out: list[dict[str, Any]] = []
        dns = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
        for name, keys in self.extras.configmap_keys.items():
            if dns.match(name):
                out.append({"kind": "ConfigMap", "name": name, "keys": keys,
                            "source": self.extras.sources.get(("ConfigMap", name), "")})
        for name, (kind, keys) in self.extras.secrets.items():
            if dns.match(name):
                out.append({"kind": "Secret", "name": name, "type": kind, "keys": keys,
                            "source": self.extras.sources.get(("Secret", name), "")})
        return out

    def _service_udp(self) -> list[dict[str, Any]]:
        out = []
        for svc in self.kube_services.values():
            for port in svc.ports:
                if _text(port.get("protocol")).upper() in ("UDP", "SCTP"):
                    out.append({"kubernetes_service": svc.name, "port": port.get("port"),
                                "protocol": _text(port.get("protocol")).upper(),
                                **({"name": _text(port["name"])} if port.get("name") else {})})
        return out

    def _entry_points(self) -> list[dict[str, Any]]:
        """Where outside traffic enters: Services of type LoadBalancer or NodePort, Ingress and
        HTTPRoute backends; when the manifests have none of these, the services the load generator
        sends to (those it addresses with an ``http://`` URL, else all of them).

        Returns:
            ``{service, via, path?}`` records, one per (service, evidence), in manifest order.
        """
        points: list[dict[str, Any]] = []
        for svc in self.kube_services.values():
            if svc.type in ("LoadBalancer", "NodePort"):
                for workload in svc.workloads:
                    points.append({"service": workload, "via": f"Service {svc.name} (type {svc.type})"})
        for route in self.extras.http_routes:
            target, hint = self.catalog.resolve(route["service"])
            if target is None:
                self._dangling_ref(f"{route['kind']}/{route['name']}", route["service"], "backend", "",
                                   hint or f"no Service {route['service']} in the manifests")
                continue
            points.append({"service": target, "via": f"{route['kind']} {route['name']}", "path": route["path"]})
        if not points:
            for entry in self.entries.values():
                if entry["role"] != "loadgenerator":
                    continue
                targets = [d["service"] for d in entry["dependencies"]]
                http = [t for t in targets if entry["name"] in self.http_callees.get(t, set())]
                for target in http or targets:
                    env = next((d["env"] for d in entry["dependencies"] if d["service"] == target), None)
                    points.append({"service": target, "via": f"load generator {entry['name']}"
                                                             + (f" (env {env})" if env else "")})
        return points

    def _apply_traces(self, path: Path) -> list[dict[str, Any]]:
        """Add the observed calls of a traces file (format in :func:`read_traces`) as edges."""
        records = read_traces(path)
        seen: list[dict[str, Any]] = []
        for record in records:
            caller, _ = self.catalog.resolve(_peer_name(record["from"]) or record["from"])
            callee, hint = self.catalog.resolve(_peer_name(record["to"]) or record["to"])
            if caller is None or callee is None:
                missing = record["from"] if caller is None else record["to"]
                self._dangling_ref(record["from"], missing, "trace", "",
                                   hint or f"{missing} is neither a Service nor a workload of the manifests")
                continue
            if caller == callee:
                continue
            edge = _Edge(caller, record["to"], "trace", value=f"{record['from']} -> {record['to']}")
            self._record(self.entries[caller], edge, callee)
            seen.append({"from": caller, "to": callee, "calls": record.get("calls", 1)})
        return seen

    def _pair_stores(self) -> None:
        """A store nobody addresses is guessed to belong to the app service that shares its name
        stem (``ts-auth-mongo`` -> ``ts-auth-service``, ``carts-db`` -> ``carts``,
        ``memcached-rate`` -> ``rate``), as in demos whose services hard-code the store's address
        in source or in a config file baked into the image."""
        called = {d["service"] for e in self.entries.values() for d in e["dependencies"]}
        apps = [e["name"] for e in self.entries.values() if e["role"] == "app"]
        for entry in self.entries.values():
            if entry["role"] != "store" or entry["name"] in called:
                continue
            words = r"(?:mongo|mongodb|db|database|mysql|postgres|postgresql|redis|valkey|cache|memcached|store)"
            stem = re.sub(rf"^{words}[-_]|[-_]{words}$", "", entry["name"])  # mongodb-geo, ts-auth-mongo
            if stem == entry["name"]:
                continue
            owners = [a for a in apps if a == stem or re.sub(r"[-_](?:service|svc|api|server)$", "", a) == stem]
            if len(owners) == 1:
                owner = self.entries[owners[0]]
                owner["dependencies"].append({"service": entry["name"], "env": None})
                self.evidence.append(_Edge(owners[0], entry["name"], "name-pair", value=entry["name"]))
                self._guess(owners[0], "dependencies", entry["name"],
                            f"store {entry['name']} is addressed by no configuration; its name stem "
                            f"{stem!r} matches this service")

    def _namespace(self) -> str | None:
        namespaces = sorted({w.namespace for w in self.workloads.values() if w.namespace})
        unset = [w.name for w in self.workloads.values() if not w.namespace]
        if namespaces and unset:
            set_on = [w.name for w in self.workloads.values() if w.namespace]
            self.warnings.append(
                f"metadata.namespace is {', '.join(namespaces)} on {', '.join(set_on)} and unset on the other "
                f"{len(unset)} workloads (they land in whatever namespace kubectl applies them to)"
            )
        if len(namespaces) > 1:
            self.warnings.append(f"workloads span namespaces {', '.join(namespaces)}; the model has one")
        return namespaces[0] if len(namespaces) == 1 else None

    # ---------------------------------------------------------------- one workload

    def _guess(self, service: str | None, path: str, value: Any, evidence: str) -> None:
        self.guesses.append({"service": service, "field": path, "value": value, "evidence": evidence})

    def _entry(self, workload: _Workload, unresolved_env: dict[str, list[str]]) -> dict[str, Any]:
        main = workload.main
        image = _text(main.get("image"))
        name = workload.name
        env, unresolved = _container_env(main, self.configmaps)
        role = _guess_role(name, image)
        store = _detect_store(image, main, env) if role in ("app", "store") else None
        infra = _detect_infrastructure(image, main) if store is None and role == "app" else None
        if store is not None:
            role = "store"
        if role != "app":
            why = store[1] if store else f"name {name!r} / image {image}"
            self._guess(name, "role", role, why)
        found = _guess_language(image, main, env)
        language = found[0] if found else (store[0] if store else None)
        entry: dict[str, Any] = {"name": name, "role": role, "workload": workload.kind}
        if language is not None:
            entry["language"] = language
            self._guess(name, "language", language, found[1] if found else f"store engine {language}")
            if language in STARTUP_S:
                entry["startup_s"] = STARTUP_S[language]
                self._guess(name, "startup_s", STARTUP_S[language],
                            f"start-up time of a {language} container (engine/apps/FORMAT.md table)")
        entry["image"] = image
        entry["container"] = _text(main.get("name"))
        entry["replicas"] = workload.replicas
        resources = _resources(main)
        if resources:
            entry["resources"] = resources
        _, named = _container_ports(main)
        for key, out_key in (("readinessProbe", "readiness_probe"), ("livenessProbe", "liveness_probe")):
            if isinstance(main.get(key), dict):
                probe, warning = _probe(main[key], named)
                if probe is not None:
                    entry[out_key] = probe
                if warning:
                    self.warnings.append(f"{name}: {key}: {warning}")
        for var in unresolved:
            unresolved_env.setdefault(var, []).append(name)
        entry["env"] = env
        refs = self._config_refs(workload)
        if refs:
            entry["config_refs"] = refs
        entry["dependencies"] = []
        entry["operations"] = []
        for container in workload.containers + workload.init_containers:
            for udp in _udp_ports(container):
                self.udp.append({"workload": name, "container": _text(container.get("name")), **udp})
        self._check_claims(workload)
        if store is not None:
            persistent = workload.persistent and store[0] != "memcached"
            entry["store"] = {"engine": store[0], "persistent": persistent}
            self._guess(name, "store.engine", store[0], store[1])
            self._guess(name, "store.persistent", persistent,
                        "memcached keeps its data in memory only" if store[0] == "memcached" else
                        "a PersistentVolumeClaim or volumeClaimTemplate holds the data" if persistent else
                        "no PersistentVolumeClaim: the data lives in the pod and a restart loses it")
        if infra is not None:
            self.infrastructure.append({"service": name, "kind": infra[0], "evidence": infra[1]})
            self._guess(name, "role", "app", f"{infra[0]} ({infra[1]}): coordination infrastructure, "
                                             "modelled as an app service whose calls are optional")
        for edge, target in self._env_edges(name, entry["container"], env, "env"):
            self._record(entry, edge, target)
        for edge, target in self._init_edges(workload):
            self._record(entry, edge, target)
        for edge, target in self._command_edges(workload, main, env):
            self._record(entry, edge, target)
        for edge, target in self._configmap_edges(workload):
            self._record(entry, edge, target)
        return entry

    def _config_refs(self, workload: _Workload) -> list[dict[str, Any]]:
        """The main container's ConfigMap/Secret references as ``ConfigRef`` fields; references
        from any container or volume to an object the manifests lack are reported as dangling."""
        refs: list[dict[str, Any]] = []
        main = workload.main

        def known(kind: str, name: str, key: str | None) -> bool:
            keys = self.extras.configmap_keys.get(name) if kind == "ConfigMap" else \
                (self.extras.secrets[name][1] if name in self.extras.secrets else None)
            return keys is not None and (key is None or key in keys)

        def check(kind: str, name: str, key: str | None, optional: bool, container: str, how: str) -> bool:
            if known(kind, name, key):
                return True
            if not optional:
                missing = f"{kind} {name}" + (f" has no key {key!r}" if key and self._has(kind, name) else "")
                self._dangling_ref(workload.name, name, how, container,
                                   f"{missing} is not in the manifests" if not self._has(kind, name)
                                   else missing)
            return False

        for container in workload.containers + workload.init_containers:
            cname = _text(container.get("name"))
            is_main = container is main
            for item in _as_list(container.get("env")):
                item = _as_dict(item)
                source = _as_dict(item.get("valueFrom"))
                for field_name, kind in (("configMapKeyRef", "ConfigMap"), ("secretKeyRef", "Secret")):
                    ref = _as_dict(source.get(field_name))
                    if not ref:
                        continue
                    obj, key, optional = _text(ref.get("name")), _text(ref.get("key")), ref.get("optional") is True
                    if check(kind, obj, key, optional, cname, f"env {item.get('name')} ({field_name})") and is_main:
                        refs.append({"kind": kind, "name": obj, "key": key, "env": _text(item.get("name")),
                                     **({"optional": True} if optional else {})})
            for item in _as_list(container.get("envFrom")):
                item = _as_dict(item)
                for field_name, kind in (("configMapRef", "ConfigMap"), ("secretRef", "Secret")):
                    ref = _as_dict(item.get(field_name))
                    if not ref:
                        continue
                    obj, optional = _text(ref.get("name")), ref.get("optional") is True
                    if check(kind, obj, None, optional, cname, f"envFrom {field_name}") and is_main:
                        refs.append({"kind": kind, "name": obj, **({"optional": True} if optional else {})})
        mounts = {_text(_as_dict(m).get("name")): _text(_as_dict(m).get("mountPath"))
                  for m in _as_list(main.get("volumeMounts"))}
        for volume in workload.volumes:
            vname = _text(volume.get("name"))
            for field_name, kind, key_name in (("configMap", "ConfigMap", "name"), ("secret", "Secret", "secretName")):
                spec = _as_dict(volume.get(field_name))
                if not spec:
                    continue
                obj, optional = _text(spec.get(key_name)), spec.get("optional") is True
                items = [_text(_as_dict(i).get("key")) for i in _as_list(spec.get("items"))]
                ok = all(check(kind, obj, key or None, optional, "", f"volume {vname}") for key in items or [""])
                if ok and vname in mounts and re.match(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", vname):
                    vref: dict[str, Any] = {"kind": kind, "name": obj, "volume": vname, "mount_path": mounts[vname]}
                    if len(items) == 1:
                        vref["key"] = items[0]
                    if optional:
                        vref["optional"] = True
                    refs.append(vref)
        return [r for r in refs if re.match(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", r["name"])]

    def _has(self, kind: str, name: str) -> bool:
        return name in (self.extras.configmap_keys if kind == "ConfigMap" else self.extras.secrets)

    def _dangling_ref(self, caller: str, name: str, via: str, container: str, hint: str) -> None:
        item: dict[str, Any] = {"caller": caller, "name": name, "via": via}
        if container:
            item["container"] = container
        item["hint"] = hint
        if item not in self.dangling:
            self.dangling.append(item)

    def _check_claims(self, workload: _Workload) -> None:
        """Report a ``persistentVolumeClaim`` volume whose claim the manifests do not define."""
        for volume in workload.volumes:
            claim = _text(_as_dict(volume.get("persistentVolumeClaim")).get("claimName"))
            if claim and claim not in self.extras.claims and claim not in workload.claim_templates:
                self._dangling_ref(workload.name, claim, f"volume {volume.get('name')} (persistentVolumeClaim)", "",
                                   f"no PersistentVolumeClaim {claim} in the manifests: the pod would stay Pending")

    def _command_edges(self, workload: _Workload, container: Mapping[str, Any],
                       env: Mapping[str, str]) -> list[tuple[_Edge, str]]:
        """Edges from the main container's command and args (``--redis=redis-cart:6379``,
        ``-db-url=http://catalogue-db:3306``, ``consul agent -join=consul``)."""
        words = [_text(w) for w in _as_list(container.get("command")) + _as_list(container.get("args"))]
        script = _expand_shell("\n".join(_expand_kube_refs(w, env) for w in words), env)
        targets = _script_targets(script)
        for match in re.finditer(r"(?:^|\s)--?[A-Za-z][\w.-]*(?:addr|host|url|uri|endpoint|server|join|dsn)[\w.-]*"
                                 rf"[=\s]+({_HOST})(?=\s|$|[,/])", script, re.IGNORECASE):
            targets.append((match.group(1), None))
        edges: list[tuple[_Edge, str]] = []
        for host, port in dict.fromkeys(targets):
            peer = _peer_name(host)
            if peer is None:
                continue
            value = f"{host}:{port}" if port is not None else host
            edge = _Edge(workload.name, peer, "args", container=_text(container.get("name")), value=value, port=port)
            target, hint = self.catalog.resolve(peer)
            if target is None:
                if host.endswith((".svc", ".svc.cluster.local")) or hint:
                    self._dangling(edge, hint)
                continue
            if target != workload.name:
                edges.append((edge, target))
        return edges

    def _configmap_edges(self, workload: _Workload) -> list[tuple[_Edge, str]]:
        """Edges from the ConfigMaps mounted as files (a collector's exporter endpoints, Grafana's
        datasource URLs, an nginx ``proxy_pass``): URLs and ``host:port`` in their text, kept only
        when the host is a Service or workload of the manifests (config text names many others)."""
        edges: list[tuple[_Edge, str]] = []
        names = [_text(_as_dict(volume.get("configMap")).get("name")) for volume in workload.volumes]
        for container in workload.containers:
            # The k8s-sidecar convention (Grafana's chart): a sidecar with env LABEL (and
            # LABEL_VALUE) copies every ConfigMap carrying that label into the pod.
            env, _ = _container_env(container, self.configmaps)
            if env.get("LABEL"):
                names += [n for n, labels in self.extras.configmap_labels.items() if env["LABEL"] in labels
                          and labels[env["LABEL"]] == env.get("LABEL_VALUE", labels[env["LABEL"]])]
        for name in dict.fromkeys(names):
            for key, text in self.configmaps.get(name, {}).items():
                edges.extend(self._config_text_edges(workload.name, text, "configmap", f"{name}/{key}"))
        return edges

    def _config_text_edges(self, caller: str, text: str, via: str, where: str) -> list[tuple[_Edge, str]]:
        """Edges from a config file's text: URLs, ``host:port`` and host settings whose host is a
        Service or workload of the manifests (a config file names many other hosts)."""
        hosts = [_split_host_port(n.rsplit("@", 1)[-1]) for n in _URL_RE.findall(text)]
        hosts += [(m.group(1), int(m.group(2))) for m in _TEXT_HOST_PORT_RE.finditer(text)]
        hosts += [(m.group(1), None) for m in _CONFIG_HOST_RE.finditer(text)]
        edges: list[tuple[_Edge, str]] = []
        for host, port in dict.fromkeys(hosts):
            peer = _peer_name(host)
            if peer is None:
                continue
            target, _ = self.catalog.resolve(peer)
            if target is None or target == caller:
                continue
            edge = _Edge(caller, peer, via, container=where, value=f"{host}:{port}" if port else host, port=port)
            edges.append((edge, target))
        return edges

    def _apply_config_files(self, files: Mapping[str, Path]) -> None:
        """Edges from config files baked into a workload's image (``--config WORKLOAD=FILE``:
        an nginx.conf, an application.yml), read like a mounted ConfigMap."""
        for workload, path in files.items():
            if workload not in self.entries:
                raise ManifestImportError(path, f"--config names {workload!r}, which is no Deployment or "
                                                f"StatefulSet of the manifests")
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise ManifestImportError(path, f"cannot read the config file: {exc}") from None
            entry = self.entries[workload]
            if "language" not in entry and re.search(r"^\s*(?:proxy_pass|upstream|server_name)\s", text, re.M):
                entry["language"], entry["startup_s"] = "nginx", STARTUP_S["nginx"]
                self._guess(workload, "language", "nginx", f"{path} has nginx directives (proxy_pass, upstream)")
            for edge, target in self._config_text_edges(workload, text, "config-file", str(path)):
                self._record(entry, edge, target)

    def _record(self, entry: dict[str, Any], edge: _Edge, target: str) -> None:
        """Keep an edge as evidence and, unless it only exports telemetry, as a dependency."""
        self.evidence.append(edge)
        self._check_port(edge, target)
        if self._is_telemetry(edge, target):
            self.telemetry.append(edge)
            return
        deps: list[dict[str, Any]] = entry["dependencies"]
        if all(d["service"] != target for d in deps):
            deps.append({"service": target, "env": edge.env})
            if edge.via.endswith("-bare-name"):
                self._guess(entry["name"], "dependencies", target,
                            f"env {edge.env}={edge.value}: the value is the name of Service {edge.target}")
        elif edge.env is not None and edge.env in entry["env"]:
            for dep in deps:
                if dep["service"] == target and dep["env"] is None:
                    dep["env"] = edge.env

    def _is_telemetry(self, edge: _Edge, target: str) -> bool:
        """True for telemetry export: an OTEL/OTLP variable, or any address of a collector.

        Exporting spans, metrics and logs is batched and fire-and-forget; it never fails a
        request, so the app models do not list it as a dependency (the edge stays evidence).
        """
        if edge.env and re.search(r"OTEL|OTLP", edge.env.upper()):
            return True
        callee = self.workloads.get(target)
        return callee is not None and _is_collector(callee.name, _text(callee.main.get("image")))

    def _env_edges(self, caller: str, container: str, env: Mapping[str, str], via: str) -> list[tuple[_Edge, str]]:
        """Edges from env vars to manifest workloads; dangling names are recorded on the way."""
        edges: list[tuple[_Edge, str]] = []
        for var, value in env.items():
            found = _addresses(var, value)
            how = via
            bare = value.strip().lower()
            if not found and _HOST_RE.match(bare) and not _NOT_ADDRESS_VAR.search(var.upper()) and (
                    self.catalog.resolve(bare)[0] is not None or bare.endswith((".svc", ".svc.cluster.local"))
                    or (_peer_name(bare) or "") in self.kube_services):
                found, how = [(bare, None)], f"{via}-bare-name"  # ZIPKIN=zipkin.jaeger.svc.cluster.local
            for host, port in found:
                peer = _peer_name(host)
                if peer is None:
                    continue
                if port is None:
                    port = _sibling_port(var, env)
                edge = _Edge(caller, peer, how, env=var, container=container, value=value, port=port)
                target, hint = self.catalog.resolve(peer)
                if target is None:
                    if "." not in host or host.endswith((".svc", ".svc.cluster.local")) or hint:
                        self._dangling(edge, hint)
                    continue
                if target == caller:
                    continue
                if value.lower().startswith(("http://", "https://")):
                    self.http_callees.setdefault(target, set()).add(caller)
                edges.append((edge, target))
        return edges

    def _init_edges(self, workload: _Workload) -> list[tuple[_Edge, str]]:
        """Edges from init containers that wait for a peer (``nc -z kafka 9092``, ``wget``...)."""
        edges: list[tuple[_Edge, str]] = []
        for init in workload.init_containers:
            env, _ = _container_env(init, self.configmaps)
            words = [_text(w) for w in _as_list(init.get("command")) + _as_list(init.get("args"))]
            script = _expand_shell("\n".join(_expand_kube_refs(w, env) for w in words), env)
            for host, port in _script_targets(script):
                peer = _peer_name(host)
                if peer is None:
                    continue
                value = f"{host}:{port}" if port is not None else host
                edge = _Edge(workload.name, peer, "init-container", container=_text(init.get("name")), value=value)
                edge.port = port
                target, hint = self.catalog.resolve(peer)
                if target is None:
                    if "." not in host or hint:
                        self._dangling(edge, hint)
                    continue
                if target != workload.name:
                    edges.append((edge, target))
        return edges

    def _dangling(self, edge: _Edge, hint: str | None) -> None:
        item: dict[str, Any] = {"caller": edge.caller, "name": edge.target, "via": edge.via}
        if edge.env:
            item["env"] = edge.env
        if edge.container:
            item["container"] = edge.container
        if edge.value is not None:
            item["value"] = edge.value
        if hint:
            item["hint"] = hint
        if item not in self.dangling:
            self.dangling.append(item)

    def _check_port(self, edge: _Edge, target: str) -> None:
        """Warn when an address's port is not one the Service (or the container) offers."""
        if edge.port is None or edge.via.startswith("compose"):
            return
        svc = self.kube_services.get(edge.target)
        if svc is not None:
            offered = [p.get("port") for p in svc.ports]
            if edge.port not in offered:
                self.warnings.append(
                    f"{edge.caller} -> {edge.target}:{edge.port} ({edge.env or edge.via}): Service {edge.target} "
                    f"exposes {', '.join(str(p) for p in offered) or 'no ports'}"
                )
            return
        ports, _ = _container_ports(self.workloads[target].main)
        self.warnings.append(
            f"{edge.caller} -> {edge.target}:{edge.port} ({edge.env or edge.via}): there is no Service named "
            f"{edge.target}; the container listens on {', '.join(map(str, ports)) or 'no declared port'}"
        )

    def _set_ports(self, workload: _Workload, evidence: list[_Edge]) -> None:
        """``port`` and ``service_port``: the pair callers address most, else the first port.

        A container with several ports (a collector's 4317 and 4318 among six others) is
        represented by the port the other workloads' addresses reach, counted over the
        manifest's env and init-container evidence; the Service is the one those addresses
        name, else the workload's own-name Service, else a ClusterIP one. ``evidence``: the
        edges with a port whose callee is this workload.
        """
        entry = self.entries[workload.name]
        ports, named = _container_ports(workload.main)
        services = [s for s in self.kube_services.values() if workload.name in s.workloads and s.ports]
        votes: dict[tuple[int, str | None], int] = {}
        for edge in evidence:
            if edge.port is None:
                continue
            svc = self.kube_services.get(edge.target)
            if svc is None:
                key: tuple[int, str | None] = (edge.port, None)
            else:
                entry_port = next((p for p in svc.ports if p.get("port") == edge.port), None)
                target = None if entry_port is None else _target_port(entry_port, named)
                if target is None:
                    continue
                key = (target, svc.name)
            votes[key] = votes.get(key, 0) + 1
        chosen_svc: _KubeService | None = None
        port: int | None
        if votes:
            (port, svc_name), count = max(votes.items(), key=lambda kv: (kv[1], -_index(ports, kv[0][0])))
            chosen_svc = self.kube_services.get(svc_name) if svc_name else None
            reason = f"the port {count} caller address(es) reach"
        else:
            port, reason = (ports[0], "the first") if ports else (None, "")
            exposed = _choose_service(workload, services)
            for item in exposed.ports if exposed is not None else []:
                target = _target_port(item, named)
                if _text(item.get("protocol")).upper() in ("UDP", "SCTP") or target is None:
                    continue
                if exposed is not None and (target in ports or not ports):
                    port, chosen_svc = target, exposed
                    reason = f"the one Service {exposed.name} exposes (port {item.get('port')})"
                    break
        if port is not None:
            entry["port"] = port
            if len(ports) > 1:
                self.warnings.append(f"{workload.name}: container ports {ports}; port {port} is {reason}")
        if chosen_svc is None:
            chosen_svc = _choose_service(workload, [s for s in services if _maps_to(s, port, named)] or services)
        if chosen_svc is not None:
            port_entry = next((p for p in chosen_svc.ports if _target_port(p, named) == port), chosen_svc.ports[0])
            if isinstance(port_entry.get("port"), int):
                entry["service_port"] = port_entry["port"]

    def _callee(self, edge: _Edge) -> str:
        target, _ = self.catalog.resolve(edge.target)
        return target or edge.target

    # ---------------------------------------------------------------- compose

    def _apply_compose(self, compose: Path) -> dict[str, Any]:
        """Add the compose file's edges; describe its services that the manifests lack."""
        services, warnings = _read_compose(compose)
        self.warnings.extend(warnings)
        matched: dict[str, str] = {}
        for cname, cservice in services.items():
            for candidate in (cname, cservice.container_name):
                if candidate and candidate in self.workloads:
                    matched[cname] = candidate
                    break
        only = [c for c in services if c not in matched]
        start_order: list[str] = []
        to_compose_only: list[dict[str, Any]] = []
        for cname, workload_name in matched.items():
            entry = self.entries[workload_name]
            for edge, target, in_manifest in self._compose_edges(services, matched, cname, workload_name):
                if not in_manifest:
                    record = {"caller": workload_name, "callee": target, "via": edge.via}
                    if edge.env:
                        record["env"] = edge.env
                    if record not in to_compose_only:
                        to_compose_only.append(record)
                    continue
                known = any(d["service"] == target for d in entry["dependencies"])
                self._record_compose(entry, edge, target)
                if not known and edge.via == "compose-depends_on" and edge not in self.telemetry:
                    start_order.append(f"{workload_name} -> {target}")
        if start_order:
            self.warnings.append(
                "dependencies from compose depends_on only (start order, not proof of a call); keep or drop: "
                + ", ".join(start_order)
            )
        compose_only = [self._compose_only_entry(services, matched, cname) for cname in only]
        for item in self.dangling:
            if item["name"] in only and "hint" not in item:
                item["hint"] = "defined only in the compose file (see notes.compose_only)"
        return {"compose_only": compose_only, "compose_edges_to_compose_only": to_compose_only}

    def _record_compose(self, entry: dict[str, Any], edge: _Edge, target: str) -> None:
        """A compose edge between manifest workloads: evidence, and a dependency if it is new."""
        if self._is_telemetry(edge, target) or any(d["service"] == target for d in entry["dependencies"]):
            self._record(entry, edge, target)
            return
        if edge.env is not None:
            if edge.env not in entry["env"]:
                entry["env"][edge.env] = edge.value or ""
                self.warnings.append(
                    f"{entry['name']}: env {edge.env} taken from the compose file (the manifest lacks it)"
                )
            elif entry["env"][edge.env] != edge.value:
                edge.env = None  # the manifest's value of that var points elsewhere
        self._record(entry, edge, target)

    def _compose_target(
        self, services: Mapping[str, _ComposeService], matched: Mapping[str, str], host: str
    ) -> tuple[str | None, bool]:
        """(name, is a manifest workload) for a host named in the compose file."""
        target, _ = self.catalog.resolve(host)
        if target is not None:
            return target, True
        for cname, cservice in services.items():
            if host in (cname, cservice.container_name):
                return matched.get(cname, cname), cname in matched
        return None, False

    def _compose_edges(
        self, services: Mapping[str, _ComposeService], matched: Mapping[str, str], cname: str, caller: str
    ) -> list[tuple[_Edge, str, bool]]:
        cservice = services[cname]
        found: list[tuple[_Edge, str, bool]] = []
        for var, value in cservice.env.items():
            for host, port in _addresses(var, value):
                peer = _peer_name(host)
                if peer is None:
                    continue
                edge = _Edge(
                    caller, peer, "compose-env", env=var, value=value, port=port or _sibling_port(var, cservice.env)
                )
                target, in_manifest = self._compose_target(services, matched, peer)
                if target is None:
                    if "." not in host:
                        self._dangling(edge, "not a service of the compose file either")
                elif target != caller:
                    found.append((edge, target, in_manifest))
        for dep in cservice.depends_on:
            target, in_manifest = self._compose_target(services, matched, dep)
            edge = _Edge(caller, dep, "compose-depends_on", value=dep)
            if target is None:
                self._dangling(edge, "depends_on names no service of the compose file")
            elif target != caller:
                found.append((edge, target, in_manifest))
        return found

    def _compose_only_entry(
        self, services: Mapping[str, _ComposeService], matched: Mapping[str, str], cname: str
    ) -> dict[str, Any]:
        cservice = services[cname]
        image = cservice.image or ""
        item: dict[str, Any] = {"name": cname, "compose_only": True, "role": _guess_role(cname, image)}
        language = _image_language(image)
        if language:
            item["language"] = language
        item["image"] = image
        if cservice.ports:
            item["port"] = cservice.ports[0]
        if cservice.memory_limit:
            item["resources"] = {"limits": {"memory": cservice.memory_limit}}
        item["env"] = dict(cservice.env)
        deps: dict[str, str | None] = {}
        for edge, target, _ in self._compose_edges(services, matched, cname, cname):
            deps.setdefault(target, edge.env)
        item["dependencies"] = [{"service": s, "env": e} for s, e in deps.items()]
        engine = _store_engine(image)
        if item["role"] == "store" and engine:
            item["store"] = {"engine": engine}
        owner = self.catalog.container_owner.get(cname)
        if owner:
            item["note"] = f"in the manifests, {cname} is a container of {self.workloads[owner].kind} {owner}"
        return item

    # ---------------------------------------------------------------- finishing

    def _guess_protocols(self) -> None:
        for entry in self.entries.values():
            why = _set_protocol(entry, self.kube_services, self.workloads[entry["name"]])
            if "protocol" not in entry and entry["role"] == "app" and entry["name"] in self.http_callees:
                entry["protocol"] = "http"  # its callers address it with http:// URLs
                why = "addressed with http:// URLs by " + ", ".join(sorted(self.http_callees[entry["name"]]))
            if why is not None:
                self._guess(entry["name"], "protocol", entry["protocol"], why)

    def _extra_containers(self) -> list[dict[str, Any]]:
        extra: list[dict[str, Any]] = []
        for workload in self.workloads.values():
            for container in workload.containers:
                if container is workload.main:
                    continue
                ports, named = _container_ports(container)
                item: dict[str, Any] = {
                    "workload": workload.name,
                    "container": _text(container.get("name")),
                    "image": _text(container.get("image")),
                }
                if ports:
                    item["ports"] = ports
                    exposed = [
                        f"{s.name}:{p.get('port')}"
                        for s in self.kube_services.values()
                        if workload.name in s.workloads
                        for p in s.ports
                        if _target_port(p, named) in ports
                    ]
                    if exposed:
                        item["exposed_on"] = exposed
                extra.append(item)
        return extra

    def _edge_record(self, edge: _Edge) -> dict[str, Any]:
        callee = self._callee(edge)
        record: dict[str, Any] = {"caller": edge.caller, "callee": callee, "via": edge.via}
        if edge.env:
            record["env"] = edge.env
        if edge.container and edge.via != "env":
            record["container"] = edge.container
        if edge.value is not None:
            record["value"] = edge.value
        if edge.port is not None:
            record["port"] = edge.port
        if edge.target != callee and edge.target in self.kube_services:
            record["kubernetes_service"] = edge.target
        if edge in self.telemetry:
            record["telemetry"] = True
        return record


def _index(items: Sequence[int], value: int) -> int:
    return items.index(value) if value in items else len(items)


def _target_port(entry: Mapping[str, Any], named: Mapping[str, int]) -> int | None:
    """The container port a Service port forwards to (``targetPort`` 0 or absent means ``port``)."""
    target = entry.get("targetPort")
    if target in (None, 0, "0"):
        port = entry.get("port")
        return port if isinstance(port, int) else None
    return _resolve_port(target, named)


def _maps_to(svc: _KubeService, port: int | None, named: Mapping[str, int]) -> bool:
    return port is not None and any(_target_port(p, named) == port for p in svc.ports)


_SERVICE_FIELDS = (
    "name", "role", "workload", "language", "image", "container", "port", "service_port", "protocol", "replicas",
    "startup_s", "memory_idle", "resources", "readiness_probe", "liveness_probe", "env", "config_refs",
    "dependencies", "operations", "store",
)  # fmt: skip


def _ordered(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A service entry with its keys in the order of ``engine/apps/FORMAT.md``."""
    return {key: entry[key] for key in _SERVICE_FIELDS if key in entry}


def _set_protocol(entry: dict[str, Any], kube_services: Mapping[str, _KubeService], workload: _Workload) -> str | None:
    """Protocol from what is evident: store engine, probe type, then Service/container port names.

    Returns:
        The evidence for the protocol set (None when none was set).
    """
    if "protocol" in entry:
        return None
    store = entry.get("store")
    if store is not None:
        entry["protocol"] = "kafka" if store["engine"] == "kafka" else "tcp"
        return f"store engine {store['engine']}"
    for key in ("readiness_probe", "liveness_probe"):
        probe = entry.get(key)
        if probe and probe["type"] in ("grpc", "http"):
            entry["protocol"] = probe["type"]
            return f"{key} of type {probe['type']}"
    names = [_text(p.get("name")).lower() for p in _as_list(workload.main.get("ports")) if isinstance(p, dict)]
    names += [
        _text(p.get("name")).lower() for s in kube_services.values() if workload.name in s.workloads for p in s.ports
    ]
    for proto in ("grpc", "http"):
        hit = next((n for n in names if n == proto or n.startswith(proto + "-")), None)
        if hit is not None:
            entry["protocol"] = proto
            return f"port named {hit!r}"
    return None


def _service_record(svc: _KubeService) -> dict[str, Any]:
    record: dict[str, Any] = {"name": svc.name, "type": svc.type}
    if svc.headless:
        record["headless"] = True
    record["workloads"] = list(svc.workloads)
    ports = []
    for entry in svc.ports:
        port: dict[str, Any] = {"port": entry.get("port")}
        target = entry.get("targetPort")
        port["target_port"] = entry.get("port") if target in (None, 0, "0") else target
        if entry.get("name"):
            port["name"] = entry["name"]
        if entry.get("nodePort"):
            port["node_port"] = entry["nodePort"]
        ports.append(port)
    record["ports"] = ports
    return record


# --------------------------------------------------------------------------------------------
# Output


class _SkeletonDumper(yaml.SafeDumper):
    """Block style for structure, flow style for small flat mappings; no anchors."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_dict(dumper: yaml.SafeDumper, data: dict[Any, Any]) -> yaml.MappingNode:
    flat = all(v is None or isinstance(v, (str, int, float, bool)) for v in data.values())
    short = sum(len(str(k)) + len(str(v)) + 4 for k, v in data.items()) <= 90
    flow = bool(data) and flat and short and len(data) <= 6 and not any(len(str(v)) > 40 for v in data.values())
    return dumper.represent_mapping("tag:yaml.org,2002:map", data, flow_style=flow)


_SkeletonDumper.add_representer(dict, _represent_dict)


def dump_skeleton(skeleton: Mapping[str, Any]) -> str:
    """Readable YAML for a model from :func:`import_manifests`, with a header comment.

    The header says where the model came from, what the importer found, and that every value
    the manifests did not state is listed under ``imported.guesses`` / ``imported.defaults``
    (``marathon app check FILE`` shows those still in use). The file loads as it is.

    Returns:
        The YAML text, ending in a newline.
    """
    services = list(skeleton.get("services", []))
    imported = _as_dict(skeleton.get("imported"))
    deps = sum(len(s.get("dependencies", [])) for s in services)
    with_env = sum(1 for s in services for d in s.get("dependencies", []) if d.get("env"))
    sources = list(imported.get("sources", skeleton.get("provenance", [])))
    lines = [
        "# App model written by `marathon app import` (engine/apps/importer.py) from:",
        *[f"#   {source}" for source in sources],
        f"# {len(services)} services, {deps} dependencies ({with_env} named by an env var), "
        f"{len(_as_list(skeleton.get('routes')))} route(s) from {len(_as_list(imported.get('entry_points')))} "
        f"entry point(s), {len(_as_list(imported.get('dangling')))} dangling reference(s), "
        f"{len(_as_list(imported.get('udp')))} UDP port(s).",
        f"# {len(_as_list(imported.get('guesses')))} guesses and {len(_as_list(imported.get('defaults')))} defaults "
        "are listed under `imported` (engine/apps/FORMAT.md, Imported models):",
        "# it loads and runs as it is; `marathon app check FILE` lists the defaults still in use.",
        "",
    ]
    body = yaml.dump(
        dict(skeleton),
        Dumper=_SkeletonDumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=110,
    )
    return "\n".join(lines) + body
