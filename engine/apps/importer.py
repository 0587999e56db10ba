"""Build an app-model skeleton from real Kubernetes manifests (and, optionally, a compose file).

``marathon app import MANIFEST... [--compose FILE]`` turns the manifests an application ships
with into the start of an app model (``engine/apps/FORMAT.md``). The importer records what the
manifests say and nothing more:

* every Deployment and StatefulSet, with its first application container's image, container
  port, resources, env and readiness/liveness probes (converted to the ``Probe`` fields), its
  replica count and, for stores, whether the data survives a pod restart;
* the Service in front of each workload (matched by selector labels), giving ``service_port``;
  every Service with its ``port -> targetPort`` mapping is listed under ``notes``;
* dependencies named by configuration: env vars whose value is another Service's address
  (``*_ADDR``, ``*_HOST`` with its sibling ``*_PORT``, ``*_URL``, ``*_ENDPOINT``, connection
  strings such as ``Host=postgresql;...``, ``http://name:port/...`` and ``name:port`` values),
  and init containers that wait for a peer (``nc -z kafka 9092``, ``wget http://frontend:80``).
  Kubernetes ``$(VAR)`` references are expanded the way the kubelet does, from the variables
  defined earlier in the same container. A name that is neither a workload nor a Service of the
  manifests is reported under ``notes.dangling``, never as a dependency. Telemetry export (an
  ``OTEL_*``/``OTLP`` variable, or any address of an OpenTelemetry collector) is batched and
  never fails a request, so it is kept as evidence (``notes.telemetry``), not as a dependency,
  as in the shipped models.

A container with several ports is represented by the port the other workloads' addresses reach
(the collector's 4317 of seven), else by its first port; ``service_port`` is the port of the
Service those addresses name, else of the workload's own-name or ClusterIP Service.

With a docker-compose file, its ``environment`` (``${VAR}`` resolved from a sibling ``.env`` or
``dotenv.env``, never from the calling shell, so that an import is reproducible) and
``depends_on`` add the edges the manifests lack; services that exist only in the compose file are
described under ``notes.compose_only`` (each flagged ``compose_only: true``) so that
``services`` stays valid.

What configuration cannot tell -- the operations each service serves and their cost, the entry
routes, the load, most languages -- is left to the user: every service gets ``operations: []``,
the app gets ``routes: []``, and ``notes.todo`` lists the rest. ``notes`` is the only key that is
not part of the app-model schema; the user reads it and deletes it before loading the model.

Errors: :class:`ManifestImportError` (a ``ValueError``) names the file, the YAML document index
and the object (``Deployment/frontend``) where the input is not what the importer can read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

WORKLOAD_KINDS = ("Deployment", "StatefulSet")
"""Kubernetes kinds that become services of the app model."""

STORE_ENGINES: tuple[tuple[str, str], ...] = (
    ("valkey", "valkey"),
    ("redis", "redis"),
    ("mongodb", "mongodb"),
    ("mongo", "mongodb"),
    ("mysql", "mysql"),
    ("postgresql", "postgresql"),
    ("postgres", "postgresql"),
    ("kafka", "kafka"),
)
"""(image word, ``Store.engine``) pairs, most specific first."""

IMAGE_LANGUAGES: tuple[tuple[str, str], ...] = (
    *STORE_ENGINES,
    ("nginx", "nginx"),
    ("envoy", "envoy"),
    ("opensearch", "opensearch"),
)
"""(image word, ``Language``) pairs for images whose runtime is evident from the name."""

STARTUP_S: dict[str, float] = {
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
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ManifestImportError(path, "not a UTF-8 text file, so not YAML") from None
    except OSError as exc:
        raise ManifestImportError(path, f"cannot read: {exc.strerror or exc}") from None
    docs: list[Any] = []
    try:
        for doc in yaml.safe_load_all(text):
            docs.append(doc)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ManifestImportError(path, f"not valid YAML{line}: {problem}", document=len(docs)) from None
    return docs


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
    for i, container in enumerate(containers):
        if not container.get("name"):
            raise ManifestImportError(
                path, f"spec.template.spec.containers[{i}] has no name", document=index, obj=where
            )
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
    ports: list[int] = []
    named: dict[str, int] = {}
    for entry in _as_list(container.get("ports")):
        entry = _as_dict(entry)
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


def _load_manifests(
    manifests: Sequence[Path],
) -> tuple[dict[str, _Workload], dict[str, _KubeService], dict[str, dict[str, str]]]:
    workloads: dict[str, _Workload] = {}
    services: dict[str, _KubeService] = {}
    configmaps: dict[str, dict[str, str]] = {}
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
    if not workloads:
        files = ", ".join(str(p) for p in manifests) or "<no files>"
        raise ManifestImportError(files, "no Deployment or StatefulSet found; nothing to import")
    for svc in services.values():
        if svc.selector:
            svc.workloads = [
                w.name for w in workloads.values() if all(w.labels.get(k) == v for k, v in svc.selector.items())
            ]
    return workloads, services, configmaps


def _dns_label(text: str) -> str:
    label = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")
    return label[:63].strip("-") or "app"


def import_manifests(manifests: Sequence[Path], compose: Path | None = None, name: str | None = None) -> dict[str, Any]:
    """Build an app-model skeleton from Kubernetes manifests and, optionally, a compose file.

    Args:
        manifests: YAML files of Kubernetes objects (multi-document files are fine; kinds other
            than Deployment, StatefulSet, Service and ConfigMap are skipped).
        compose: a docker-compose file whose ``environment`` and ``depends_on`` add edges; its
            ``${VAR}`` references are resolved from ``.env`` or ``dotenv.env`` beside it.
        name: the app name (DNS label); default: the workloads' namespace, else the name of the
            first manifest's directory.

    Returns:
        A dict shaped like an app-model file: ``name``, ``title``, ``namespace``,
        ``provenance``, ``load`` (``generator`` only), ``services`` (one per workload, in
        manifest order, each with ``operations: []``), ``routes: []`` and ``notes``, a mapping
        the schema does not know, holding:

        * ``todo``: what the user must fill in (strings);
        * ``dangling``: references to names the manifests do not define,
          ``{caller, name, via, env?, container?, value, hint?}``;
        * ``evidence``: every edge found, ``{caller, callee, via, env?, container?, value?,
          port?, kubernetes_service?, telemetry?}`` with ``via`` one of ``env``,
          ``init-container``, ``compose-env``, ``compose-depends_on``;
        * ``telemetry``: edges that only export telemetry (OTLP to a collector), which are
          evidence but not dependencies, ``{caller, callee, env}``;
        * ``kubernetes_services``: every Service with its ``port -> target_port`` mapping;
        * ``extra_containers``: the containers beside each workload's application container;
        * with ``compose``: ``compose_only`` (services only the compose file defines, each
          with ``compose_only: true``) and ``compose_edges_to_compose_only``;
        * ``warnings``: oddities worth a look (strings).

    Raises:
        ManifestImportError: a file that cannot be read or is not YAML, a document that is not
            a Kubernetes object, a malformed workload, no Deployment/StatefulSet at all, or a
            compose file that is not one; the message names the file, document and object.
    """
    return _Importer([Path(p) for p in manifests]).run(Path(compose) if compose is not None else None, name)


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
        self.workloads, self.kube_services, self.configmaps = _load_manifests(paths)
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
        self.todo: list[str] = []
        self.warnings: list[str] = []
        self.http_callees: dict[str, set[str]] = {}

    # ---------------------------------------------------------------- the whole import

    def run(self, compose: Path | None, name: str | None) -> dict[str, Any]:
        """The skeleton described in :func:`import_manifests`."""
        namespace = self._namespace()
        app_name = _dns_label(name) if name else _dns_label(namespace or self.paths[0].resolve().parent.name)
        unresolved_env: dict[str, list[str]] = {}
        for workload in self.workloads.values():
            self.entries[workload.name] = self._entry(workload, unresolved_env)
        for workload in self.workloads.values():
            self._set_ports(workload)
        if unresolved_env:
            self.warnings.append(
                "env from secrets or field references, left out: "
                + "; ".join(f"{var} ({', '.join(names)})" for var, names in unresolved_env.items())
            )
        notes: dict[str, Any] = {}
        if compose is not None:
            notes.update(self._apply_compose(compose))
        self._guess_protocols()
        self._todo_summary()
        generators = [e["name"] for e in self.entries.values() if e["role"] == "loadgenerator"]
        skeleton: dict[str, Any] = {
            "name": app_name,
            "title": app_name.replace("-", " ").title(),
            "namespace": _dns_label(namespace) if namespace else app_name,
            "provenance": [str(p) for p in self.paths] + ([str(compose)] if compose is not None else []),
            "load": {"generator": generators[0]} if generators else {},
            "services": [_ordered(e) for e in self.entries.values()],
            "routes": [],
        }
        skeleton["notes"] = {
            "todo": self.todo,
            "dangling": self.dangling,
            "evidence": [self._edge_record(e) for e in self.evidence],
            "telemetry": [{"caller": e.caller, "callee": self._callee(e), "env": e.env} for e in self.telemetry],
            "kubernetes_services": [_service_record(s) for s in self.kube_services.values()],
            "extra_containers": self._extra_containers(),
            **notes,
            "warnings": self.warnings,
        }
        return skeleton

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

    def _entry(self, workload: _Workload, unresolved_env: dict[str, list[str]]) -> dict[str, Any]:
        main = workload.main
        image = _text(main.get("image"))
        role = _guess_role(workload.name, image)
        language = _image_language(image)
        entry: dict[str, Any] = {"name": workload.name, "role": role, "workload": workload.kind}
        if language is not None:
            entry["language"] = language
            if language in STARTUP_S:
                entry["startup_s"] = STARTUP_S[language]
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
                    self.warnings.append(f"{workload.name}: {key}: {warning}")
        env, unresolved = _container_env(main, self.configmaps)
        for var in unresolved:
            unresolved_env.setdefault(var, []).append(workload.name)
        entry["env"] = env
        entry["dependencies"] = []
        entry["operations"] = []
        if role == "store":
            entry["store"] = {"engine": _store_engine(image), "persistent": workload.persistent}
        for edge, target in self._env_edges(workload.name, entry["container"], env, "env"):
            self._record(entry, edge, target)
        for edge, target in self._init_edges(workload):
            self._record(entry, edge, target)
        return entry

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
            for host, port in _addresses(var, value):
                peer = _peer_name(host)
                if peer is None:
                    continue
                if port is None:
                    port = _sibling_port(var, env)
                edge = _Edge(caller, peer, via, env=var, container=container, value=value, port=port)
                target, hint = self.catalog.resolve(peer)
                if target is None:
                    if "." not in host or host.endswith(".svc.cluster.local") or hint:
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

    def _set_ports(self, workload: _Workload) -> None:
        """``port`` and ``service_port``: the pair callers address most, else the first port.

        A container with several ports (a collector's 4317 and 4318 among six others) is
        represented by the port the other workloads' addresses reach, counted over the
        manifest's env and init-container evidence; the Service is the one those addresses
        name, else the workload's own-name Service, else a ClusterIP one.
        """
        entry = self.entries[workload.name]
        ports, named = _container_ports(workload.main)
        services = [s for s in self.kube_services.values() if workload.name in s.workloads and s.ports]
        votes: dict[tuple[int, str | None], int] = {}
        for edge in self.evidence:
            if edge.port is None or self._callee(edge) != workload.name:
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
            port = ports[0] if ports else None
            reason = "the first"
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
            self.todo.append(
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
            _set_protocol(entry, self.kube_services, self.workloads[entry["name"]])
            if "protocol" not in entry and entry["role"] == "app" and entry["name"] in self.http_callees:
                entry["protocol"] = "http"  # its callers address it with http:// URLs

    def _todo_summary(self) -> None:
        entries = list(self.entries.values())
        no_language = [e["name"] for e in entries if "language" not in e]
        no_protocol = [e["name"] for e in entries if "port" in e and "protocol" not in e and e["role"] == "app"]
        no_resources = [e["name"] for e in entries if "resources" not in e]
        if no_language:
            self.todo.append(f"language: the image does not reveal it for {', '.join(no_language)}")
        if no_protocol:
            self.todo.append(
                f"protocol (http, grpc, tcp or kafka; default grpc): not evident for {', '.join(no_protocol)}"
            )
        if no_resources:
            self.todo.append(
                f"resources: none in the manifests for {', '.join(no_resources)}; set a memory request or limit"
            )
        if any(e["role"] == "loadgenerator" for e in entries):
            self.todo.append("load.base_rps: mean entry requests per second (the manifests give users, not a rate)")
        else:
            self.todo.append("load: no workload looks like a load generator; add one, then set generator and base_rps")
        self.todo.append("operations (every service) and routes: the endpoints, their cost and calls, the entry routes")
        if self.dangling:
            self.todo.append(f"notes.dangling: {len(self.dangling)} reference(s) to undefined names; decide each")

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
    "startup_s", "resources", "readiness_probe", "liveness_probe", "env", "dependencies", "operations", "store",
)  # fmt: skip


def _ordered(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A service entry with its keys in the order of ``engine/apps/FORMAT.md``."""
    return {key: entry[key] for key in _SERVICE_FIELDS if key in entry}


def _set_protocol(entry: dict[str, Any], kube_services: Mapping[str, _KubeService], workload: _Workload) -> None:
    """Protocol from what is evident: store engine, probe type, then Service/container port names."""
    if "protocol" in entry:
        return
    store = entry.get("store")
    if store is not None:
        entry["protocol"] = "kafka" if store["engine"] == "kafka" else "tcp"
        return
    for key in ("readiness_probe", "liveness_probe"):
        probe = entry.get(key)
        if probe and probe["type"] in ("grpc", "http"):
            entry["protocol"] = probe["type"]
            return
    names = [_text(p.get("name")).lower() for p in _as_list(workload.main.get("ports")) if isinstance(p, dict)]
    names += [
        _text(p.get("name")).lower() for s in kube_services.values() if workload.name in s.workloads for p in s.ports
    ]
    for proto in ("grpc", "http"):
        if any(n == proto or n.startswith(proto + "-") for n in names):
            entry["protocol"] = proto
            return


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
    """Readable YAML for a skeleton from :func:`import_manifests`, with a header comment.

    The header says where the skeleton came from, what the importer found and what the user
    still has to write (operations, routes, the load, the ``notes.todo`` items), and that
    ``notes`` must go before the file is loaded as an app model.

    Returns:
        The YAML text, ending in a newline.
    """
    services = list(skeleton.get("services", []))
    notes = _as_dict(skeleton.get("notes"))
    deps = sum(len(s.get("dependencies", [])) for s in services)
    with_env = sum(1 for s in services for d in s.get("dependencies", []) if d.get("env"))
    sources = list(skeleton.get("provenance", []))
    lines = [
        "# App-model skeleton written by `marathon app import` (engine/apps/importer.py) from:",
        *[f"#   {source}" for source in sources],
        f"# {len(services)} workloads, {deps} dependencies ({with_env} named by an env var), "
        f"{len(_as_list(notes.get('dangling')))} dangling reference(s), "
        f"{len(_as_list(notes.get('compose_only')))} compose-only service(s).",
        "#",
        "# Still yours to write (see engine/apps/FORMAT.md):",
        "#   * operations: [] on every service -- the endpoints it serves, their cpu_ms/latency_ms",
        "#     and the downstream calls;",
        "#   * routes: [] -- the entry routes the load generator drives, with shares and SLOs;",
        "#   * load.base_rps, memory_idle, and every item under notes.todo;",
        "#   * replicas are copied from the manifests; FORMAT.md runs stateless app services at 2.",
        "# `notes` is not part of the app-model schema: read it, then delete it before loading.",
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
