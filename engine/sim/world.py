"""The simulated world behind ``marathon cluster``'s Kubernetes API: what a write means to the simulator.

On a real cluster a write changes what runs: a new image runs new code, an env value changes
what the code does, a Chaos Mesh object makes ``stress-ng`` burn CPU or ``tc`` delay packets,
a taint evicts pods. The simulator models behaviour as effects (:mod:`engine.sim.effects`), so
:class:`SimWorld` turns the administrator's writes into them, knowing the app's fault catalog
(and nothing else about faults), as :mod:`engine.sim.faults` does for the embedded run:

* **images** -- a rollout of ``<repository>/<service>:<change id>`` (:mod:`faults.images`) is a
  rollout of an image built elsewhere from the catalog change: the change's edit is applied to
  the source the Deployment runs, committed, and rolled out at once with that image (no build
  in the simulator's pipeline, :meth:`Simulator.deploy_image`); the defect's effect is
  registered conditioned on its marker line in the deployed source, so a rollback, or an image
  whose source lacks the line, repairs it by construction. The registry holds every catalog
  change's image (a pull succeeds); any other tag in that repository is ``not found`` and the
  pods meet ``ErrImagePull``/``ImagePullBackOff`` as the simulator's kubelet models it. An
  image that an earlier revision ran (the release image, a pipeline build) rolls out with that
  revision's source, as the image carries it;
* **env** -- a value that equals a catalog config fault's (same service, first key, value)
  registers that fault's :class:`~engine.sim.effects.EnvEquals` effect (once; it stays
  registered and is inert while the value is not deployed);
* **Chaos Mesh** -- a ``StressChaos`` (``spec.stressors.cpu.workers``/``load``,
  ``spec.stressors.memory.workers``/``size``) is CPU (memory) burned by the selected pods'
  containers started before its creation; a ``NetworkChaos`` (``action`` ``delay``, ``loss`` or
  ``netem``; ``delay.latency``, ``loss.loss``; ``direction``; ``target``) is an
  :class:`~engine.sim.effects.EdgeEffect` on each call edge between the selected service and the
  target's (whichever of the two calls the other, in the app model), or on every edge into the
  selected service without a target; deleting the object (or its ``duration`` passing) ends it.
  A ``StressChaos`` matching a catalog ``cpu-pressure`` fault (same target, the same cores to
  within one load percent per worker) gets that fault's effect, as the embedded run has it;
  A ``PodChaos`` ``pod-kill`` deletes the selected pods now; killing a store's pods is the
  catalog's ``store-restart`` of that store where it has one (its effect holds until the
  object is deleted; an operator's ``kubectl delete pod`` of the store is only a restart);
* **nodes** -- ``spec.unschedulable`` (cordon) and taints: see :meth:`SimWorld.change_node`.

Departures from Chaos Mesh and a real cluster, by design: a NetworkChaos's rule is modelled
where the simulator keeps edge effects, on the callee's containers started before the object
(restarting the callee ends it, whichever side the selector names), ``jitter``,
``correlation`` and ``reorder`` are ignored, and a NetworkChaos acts on every pod of the
selected service (``mode: all`` only); a StressChaos's ``mode`` ``one``/``fixed``/
``fixed-percent`` picks pods by name (Chaos Mesh picks at random); ``random-max-percent``,
``stressngStressors``, node, field, annotation and expression selectors, ``externalTargets``
and the other NetworkChaos actions are refused. The object's ``status`` is written once, at
creation.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from engine.apps.model import Probe, Resources
from engine.sim.effects import EdgeEffect, Effect, EnvEquals, LogHint, SourceContains
from engine.sim.faults import fault_effect
from engine.substrate import ChangeRecord, Substrate, SubstrateError
from faults.images import change_image, default_repository
from faults.spec import Catalog, EffectSpec, FaultSpec

if TYPE_CHECKING:
    from engine.sim.simulator import Simulator

CHAOS_GROUP = "chaos-mesh.org"
STRESS = "stresschaos"
NETWORK = "networkchaos"
POD = "podchaos"
UNREACHABLE_KEYS = ("node.kubernetes.io/unreachable", "node.kubernetes.io/not-ready")
"""Taint keys every pod tolerates for ``tolerationSeconds: 300`` (DefaultTolerationSeconds)."""

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_UNIT_S = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*([KMGT]i?B?|B)?$", re.IGNORECASE)


class ChaosInvalid(SubstrateError):
    """A Chaos Mesh object the simulated world refuses (the API answers ``422 Invalid``)."""


def go_duration(text: str, field_name: str) -> float:
    """A Go ``time.Duration`` string (``250ms``, ``1m30s``, ``3s``) in seconds.

    Raises:
        ChaosInvalid: not a duration, naming ``field_name``.
    """
    s = str(text).strip()
    pos, total = 0, 0.0
    for m in _DURATION.finditer(s):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNIT_S[m.group(2)]
        pos = m.end()
    if not s or pos != len(s):
        raise ChaosInvalid(f"{field_name}: Invalid value: {text!r}: time: invalid duration")
    return total


def _percent(text: Any, field_name: str) -> float:
    try:
        value = float(str(text).strip().rstrip("%"))
    except ValueError:
        raise ChaosInvalid(f"{field_name}: Invalid value: {text!r}: not a percentage") from None
    if not 0.0 <= value <= 100.0:
        raise ChaosInvalid(f"{field_name}: Invalid value: {text!r}: must be between 0 and 100")
    return value / 100.0


def _bytes(text: Any, field_name: str) -> float:
    """stress-ng's ``--vm-bytes`` size as Chaos Mesh writes it (``256MB``, ``1GB``; ``B`` units
    are powers of 1024 there, as in stress-ng)."""
    m = _SIZE.match(str(text).strip())
    if m is None:
        raise ChaosInvalid(f"{field_name}: Invalid value: {text!r}: the simulated cluster takes a size such as "
                           "256MB (not a percentage)")
    unit = (m.group(2) or "B").upper().rstrip("B").rstrip("I")
    return float(m.group(1)) * 1024.0 ** ("KMGT".index(unit) + 1 if unit else 0)


@dataclass
class _Chaos:
    """One Chaos Mesh object in force: its effects and when its ``duration`` ends it."""

    effect_ids: list[str] = field(default_factory=list)
    ends_at: float | None = None


@dataclass(frozen=True)
class ProxyAnswer:
    """The simulator's model of one request through the service proxy.

    Attributes:
        status: 200 (the request succeeded) or 503.
        latency_ms: the request's latency, drawn from the model's distribution, ms.
        success: the model's success probability of such a request, 0..1.
        p95_ms: the model's p95 latency of such a request, ms.
        what: the route or operation modelled.
    """

    status: int
    latency_ms: float
    success: float
    p95_ms: float
    what: str


def _path_matches(template: str, path: str) -> bool:
    """Whether request path ``path`` (without its leading ``/``) is route path ``template``
    with each ``{parameter}`` one segment (or the literal ``{parameter}``)."""
    pattern = re.sub(r"\\\{[^/]*?\\\}", "[^/]+", re.escape(template.strip("/")))
    return re.fullmatch(pattern, path) is not None


def _op_path(operation: str) -> str:
    """An operation's proxy path: ``GET /cart`` -> ``cart``; ``/pkg.Svc/Method`` -> ``pkg.Svc/Method``."""
    return operation.split(" ", 1)[-1].lstrip("/")


class SimWorld:
    """The simulated world's reading of the administrator's writes (module docstring).

    Args:
        sim: the simulation.
        catalog: the app's fault catalog (:func:`faults.spec.load_catalog`).
        repository: where catalog change images live (default
            :func:`faults.images.default_repository` of the app).
    """

    def __init__(self, sim: Simulator, catalog: Catalog, *, repository: str | None = None) -> None:
        self.sim = sim
        self.catalog = catalog
        self.repository = (repository or default_repository(sim.app.name)).rstrip("/")
        self.change_images: dict[str, FaultSpec] = {
            change_image(self.repository, spec.target, spec): spec
            for spec in catalog.faults if spec.mechanism == "code-change" and spec.change is not None}
        # The user's build system pushed every catalog change's image: pulls succeed, and any
        # other tag of the repository is "not found" (not "no such host").
        sim.images.update(self.change_images)
        self.env_faults: dict[tuple[str, str, str], FaultSpec] = {}
        for spec in catalog.faults:
            cfg = spec.config
            if spec.effect is not None and cfg is not None and cfg.env and cfg.flag is None:
                key, value = next(iter(cfg.env.items()))
                self.env_faults.setdefault((spec.target, key, value), spec)
        self.registered: set[str] = set()
        """Ids of the conditioned effects registered so far (``world:<fault id>``)."""
        self.builds: dict[str, dict[str, str]] = {}
        """Image reference -> the source tree it was built from (:meth:`build`)."""
        self.chaos: dict[tuple[str, str, str], _Chaos] = {}
        """(plural, namespace, name) -> the effects of a Chaos Mesh object in force."""
        self._serial = 0
        self._rng = random.Random(sim.seed)

    # ----------------------------------------------------------------- Deployments

    def roll_out(self, deployment: str, *, image: str | None = None, env: Mapping[str, str | None] | None = None,
                 resources: Resources | None = None, readiness_probe: Probe | Literal["keep"] | None = "keep",
                 liveness_probe: Probe | Literal["keep"] | None = "keep", summary: str,
                 author: str) -> ChangeRecord:
        """One rollout of a Deployment's pod template (module docstring for images and env).

        Args:
            deployment: the workload's name.
            image: the app container's new image, or None (unchanged).
            env: env vars set (value) or removed (None).
            resources, readiness_probe, liveness_probe: as :meth:`Simulator.deploy_change`.
            summary: the change's one-line description (a catalog image's record takes the
                change's commit subject, the image's own).
            author: who shipped it (the requester).

        Returns:
            The change record of the rollout.

        Raises:
            SubstrateError: unknown workload, or nothing to change.
        """
        sim = self.sim
        env_d = dict(env or {})
        edits: dict[str, Any] = {"env": env_d or None, "resources": resources, "readiness_probe": readiness_probe,
                                 "liveness_probe": liveness_probe}
        if image is None:
            rec = sim.deploy_change(deployment, summary=summary, author=author, **edits)
        elif image in self.builds:
            rec = sim.deploy_image(deployment, image, source=self.builds[image], summary=summary, author=author,
                                   **edits)
        else:
            spec = self.change_images.get(image)
            if spec is not None and spec.target == deployment:
                assert spec.change is not None
                rec = sim.deploy_image(deployment, image, source=self._change_source(deployment, spec),
                                       summary=spec.change.summary, author=author, **edits)
                self._register_defect(spec)
            else:
                commit = self._image_commit(deployment, image)
                if commit is None:
                    rec = sim.deploy_change(deployment, image=image, summary=summary, author=author, **edits)
                else:
                    rec = sim.deploy_image(deployment, image, source=commit, summary=summary, author=author, **edits)
        for key, value in env_d.items():
            if value is not None:
                env_spec = self.env_faults.get((deployment, key, value))
                if env_spec is not None:
                    self._register_env(env_spec, key, value)
        return rec

    def build(self, service: str, files: Mapping[str, str], commit: str) -> str:
        """The simulated cluster's CI: build the source tree of ``service`` that differs from its
        release by ``files`` (path -> full text; ``""`` deletes the file) at ``commit``, push the
        image and return its reference, ``<release repository>:<release tag>-<commit[:7]>`` --
        the form the embedded pipeline's builds take, so a build of a fault's commit, a benign
        commit, a revert and an operator's patch look alike. Rolling the image out
        (:meth:`roll_out`) deploys that tree; a catalog defect whose marker line the tree holds
        brings its behaviour, as the embedded injection conditions it, so whatever removes the
        line repairs it.

        Raises:
            SubstrateError: unknown service, or ``commit`` not 7-40 lowercase hex digits.
        """
        if service not in self.sim.cluster.workloads:
            raise SubstrateError(f"unknown service {service!r}")
        if not (7 <= len(commit) <= 40 and all(c in "0123456789abcdef" for c in commit)):
            raise SubstrateError(f"commit {commit[:50]!r}: 7-40 lowercase hex digits")
        tree = {**self.sim.repos[service].commits[0].files, **files}
        tree = {path: text for path, text in tree.items() if text != ""}
        release = self.sim.app.service(service).image
        repository, _, tag = release.rpartition(":")
        image = f"{repository}:{tag}-{commit[:7]}" if repository else f"{release}:{commit[:7]}"
        self.builds[image] = tree
        self.sim.images.add(image)
        for spec in self.catalog.faults:
            ch = spec.change
            if (spec.mechanism == "code-change" and ch is not None and spec.effect is not None
                    and spec.target == service and ch.defect_marker() in tree.get(ch.file, "")):
                self._register_defect(spec)
        return image

    def _change_source(self, service: str, spec: FaultSpec) -> dict[str, str]:
        """The files of the image built of catalog change ``spec``: the running source with the
        change's edit (the release source with it when the running file no longer has the
        text the change replaces and lacks the defect)."""
        ch = spec.change
        assert ch is not None
        files = self.sim.source_files(service)
        text = files.get(ch.file, "")
        if ch.find in text:
            files[ch.file] = text.replace(ch.find, ch.replace, 1)
            return files
        if ch.defect_marker() in text:
            return files
        release = dict(self.sim.repos[service].commits[0].files)
        release[ch.file] = release.get(ch.file, "").replace(ch.find, ch.replace, 1)
        return release

    def _image_commit(self, service: str, image: str) -> str | None:
        """The source commit an image that ran before carries: the newest ReplicaSet of the
        workload with that image, the release commit for the app's own image, or the commit a
        pipeline build names in its tag (``<tag>-<short sha>``); None when unknown."""
        sim = self.sim
        wl = sim.cluster.workloads.get(service)
        if wl is None:
            return None
        for rs in sorted(wl.replicasets, key=lambda r: -r.revision):
            if rs.template.image == image:
                return str(rs.template.commit)
        repo = sim.repos[service]
        if image == sim.app.service(service).image:
            return repo.commits[0].id
        tag = image.rpartition(":")[2]
        short = tag.rpartition("-")[2]
        if len(short) >= 7 and all(c in "0123456789abcdef" for c in short):
            try:
                return repo.get(short).id
            except KeyError:
                return None
        return None

    def _register_defect(self, spec: FaultSpec) -> None:
        eid = f"world:{spec.id}"
        if eid in self.registered:
            return
        ch, es = spec.change, spec.effect
        assert ch is not None and es is not None
        # As engine.sim.faults.inject: a symptom in another service still reads the target's file.
        owner = spec.target if es.service not in (None, spec.target) else None
        self.sim.inject(fault_effect(spec, es, eid, when=SourceContains(path=ch.file, text=ch.defect_marker(),
                                                                        service=owner)))
        self.registered.add(eid)

    def _register_env(self, spec: FaultSpec, key: str, value: str) -> None:
        eid = f"world:{spec.id}"
        if eid in self.registered:
            return
        assert spec.effect is not None
        self.sim.inject(fault_effect(spec, spec.effect, eid, when=EnvEquals(key=key, value=value)))
        self.registered.add(eid)

    # ----------------------------------------------------------------- Chaos Mesh

    def create_chaos(self, plural: str, namespace: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        """A Chaos Mesh object created: its effects start now (module docstring).

        Args:
            plural: ``stresschaos`` or ``networkchaos``.
            namespace: the object's namespace (the selector's default namespace).
            obj: the object as sent.

        Returns:
            The object as stored: as sent, with ``status`` (``desiredPhase: Run`` and the
            ``Selected``/``AllInjected`` conditions).

        Raises:
            ChaosInvalid: a field the simulated cluster does not model, or a selector that
                selects no pod of the app.
        """
        if plural not in (STRESS, NETWORK, POD):
            raise ChaosInvalid(f"the simulated cluster models StressChaos, NetworkChaos and PodChaos, not {plural}")
        meta = obj.get("metadata") or {}
        name = str(meta.get("name") or "")
        spec = obj.get("spec")
        if not isinstance(spec, Mapping):
            raise ChaosInvalid("spec: Required value")
        key = (plural, namespace, name)
        if key in self.chaos:
            raise ChaosInvalid(f"{plural} {namespace}/{name} is already in force")
        self._serial += 1
        base = f"chaos:{plural}:{namespace}:{name}:{self._serial}"
        effects: list[Effect | EdgeEffect]
        if plural == STRESS:
            effects = self._stress_effects(base, namespace, spec)
        elif plural == NETWORK:
            effects = self._network_effects(base, namespace, spec)
        else:
            effects = self._pod_kill(base, namespace, spec)
        record = _Chaos()
        if spec.get("duration") is not None:
            record.ends_at = self.sim.now + go_duration(spec["duration"], "spec.duration")
        for eff in effects:
            self.sim.inject(eff)
            record.effect_ids.append(eff.id)
        self.chaos[key] = record
        stored = dict(obj)
        stored["status"] = {
            "conditions": [{"type": "Selected", "status": "True"}, {"type": "AllInjected", "status": "True"},
                           {"type": "AllRecovered", "status": "False"}, {"type": "Paused", "status": "False"}],
            "experiment": {"desiredPhase": "Run"},
        }
        return stored

    def delete_chaos(self, plural: str, namespace: str, name: str) -> None:
        """A Chaos Mesh object deleted: its effects end now (nothing when it had ended already)."""
        record = self.chaos.pop((plural, namespace, name), None)
        if record is not None:
            self._end(record)

    def step(self) -> None:
        """End the Chaos Mesh objects whose ``duration`` has passed (call after each advance)."""
        now = self.sim.now
        for record in self.chaos.values():
            if record.ends_at is not None and now >= record.ends_at - 1e-9 and record.effect_ids:
                self._end(record)

    def _end(self, record: _Chaos) -> None:
        for eid in record.effect_ids:
            if eid in self.sim.effects or eid in self.sim.edge_effects:
                self.sim.revert(eid)
        record.effect_ids = []

    def _selected(self, selector: Any, namespace: str, what: str) -> dict[str, list[str]]:
        """service -> pod names (not terminating) a Chaos Mesh ``PodSelectorSpec`` selects."""
        if not isinstance(selector, Mapping):
            raise ChaosInvalid(f"{what}: Required value")
        unsupported = sorted(k for k in selector if k not in ("namespaces", "labelSelectors", "pods"))
        if unsupported:
            raise ChaosInvalid(f"{what}.{unsupported[0]}: Unsupported value: the simulated cluster selects pods by "
                               "namespaces, labelSelectors and pods")
        app_ns = self.sim.app.namespace
        namespaces = selector.get("namespaces") or [namespace]
        if app_ns not in namespaces:
            raise ChaosInvalid(f"{what}.namespaces: no pod selected: the app runs in namespace {app_ns}")
        labels = dict(selector.get("labelSelectors") or {})
        pods = selector.get("pods")
        names = set(pods.get(app_ns) or []) if isinstance(pods, Mapping) else None
        out: dict[str, list[str]] = {}
        for pod in self.sim.objects("Pod"):
            meta = pod["metadata"]
            if meta.get("deletionTimestamp"):
                continue
            if names is not None and meta["name"] not in names:
                continue
            plabels = meta.get("labels") or {}
            if all(plabels.get(k) == v for k, v in labels.items()):
                out.setdefault(str(plabels.get("app", "")), []).append(str(meta["name"]))
        out.pop("", None)
        if not out:
            raise ChaosInvalid(f"{what}: no pod of the app matches the selector")
        return out

    def _pick(self, pods: list[str], spec: Mapping[str, Any]) -> list[str] | None:
        """The pods ``spec.mode`` picks (None: every pod of the service, ``mode: all``)."""
        mode = spec.get("mode") or "all"
        pods = sorted(pods)
        if mode == "all":
            return None
        if mode == "one":
            return pods[:1]
        value = spec.get("value")
        try:
            n = float(str(value))
        except ValueError:
            raise ChaosInvalid(f"spec.value: Invalid value: {value!r}: mode {mode} needs a number") from None
        if mode == "fixed":
            return pods[:max(0, int(n))]
        if mode == "fixed-percent":
            return pods[:math.floor(len(pods) * n / 100.0)]
        raise ChaosInvalid(f"spec.mode: Unsupported value: {mode!r}: the simulated cluster models all, one, fixed "
                           "and fixed-percent")

    def _stress_effects(self, base: str, namespace: str, spec: Mapping[str, Any]) -> list[Effect | EdgeEffect]:
        if spec.get("stressngStressors"):
            raise ChaosInvalid("spec.stressngStressors: Unsupported value: the simulated cluster models "
                               "spec.stressors.cpu and spec.stressors.memory")
        stressors = spec.get("stressors")
        if not isinstance(stressors, Mapping) or not (stressors.get("cpu") or stressors.get("memory")):
            raise ChaosInvalid("spec.stressors: Required value: cpu or memory")
        cores, workers, memory = 0.0, 0, 0.0
        cpu = stressors.get("cpu")
        if cpu:
            workers = _int(cpu.get("workers"), "spec.stressors.cpu.workers")
            load = 100 if cpu.get("load") is None else _int(cpu.get("load"), "spec.stressors.cpu.load")
            if not 0 <= load <= 100:
                raise ChaosInvalid(f"spec.stressors.cpu.load: Invalid value: {load}: must be between 0 and 100")
            cores = workers * load / 100.0
        mem = stressors.get("memory")
        if mem:
            mworkers = _int(mem.get("workers"), "spec.stressors.memory.workers")
            memory = mworkers * _bytes(mem.get("size", "256MB"), "spec.stressors.memory.size")
        now = self.sim.now
        out: list[Effect | EdgeEffect] = []
        for service, pods in sorted(self._selected(spec.get("selector"), namespace, "spec.selector").items()):
            catalog = self._cpu_fault(service, cores, workers) if cpu and not mem else None
            if catalog is not None:
                assert catalog.runtime is not None and catalog.runtime.cpu_cores is not None
                es = (catalog.effect or EffectSpec()).model_copy(update={"cpu_cores": catalog.runtime.cpu_cores})
            else:
                es = EffectSpec(cpu_cores=cores)
            picked = self._pick(pods, spec)
            for pod in ([None] if picked is None else picked):
                eid = f"{base}:{service}" + (f":{pod}" if pod else "")
                if catalog is not None:
                    eff = fault_effect(catalog, es, eid, started_before=now + 1e-6, pod=pod)
                else:
                    eff = Effect(id=eid, service=service, cpu_cores=cores, memory_bytes=memory, pod=pod,
                                 started_before=now + 1e-6, log=LogHint(message="stress-ng running"))
                out.append(eff)
        return out

    def _pod_kill(self, base: str, namespace: str, spec: Mapping[str, Any]) -> list[Effect | EdgeEffect]:
        """``PodChaos`` ``action: pod-kill``: the selected pods are deleted now (their controllers
        replace them). A store's pods killed so are the catalog's ``store-restart`` of that store
        when it has one: its effect (what the app does with the data gone) holds on the
        containers started before, as the embedded run has it, until the object is deleted."""
        action = spec.get("action")
        if action != "pod-kill":
            raise ChaosInvalid(f"spec.action: Unsupported value: {action!r}: the simulated cluster models pod-kill")
        if spec.get("gracePeriod") not in (None, 0):
            raise ChaosInvalid("spec.gracePeriod: Unsupported value: the simulated cluster kills with the pods' own "
                               "grace period")
        selected = self._selected(spec.get("selector"), namespace, "spec.selector")
        killed: list[str] = []
        for _, pods in sorted(selected.items()):
            picked = self._pick(pods, spec)
            killed += sorted(pods) if picked is None else picked
        now = self.sim.now
        for pod in killed:
            self.sim.restart_pod(pod)
        out: list[Effect | EdgeEffect] = []
        for fault in self.catalog.faults:
            rt = fault.runtime
            if fault.mechanism == "store-restart" and rt is not None and rt.store in selected \
                    and fault.effect is not None:
                out.append(fault_effect(fault, fault.effect, f"{base}:{fault.id}", started_before=now + 1e-6))
        return out

    def _cpu_fault(self, service: str, cores: float, workers: int) -> FaultSpec | None:
        """The catalog cpu-pressure fault on ``service`` whose cores a StressChaos of
        ``workers`` workers expresses (load is a whole percent per worker)."""
        for spec in self.catalog.faults:
            rt = spec.runtime
            if spec.mechanism == "cpu-pressure" and spec.target == service and rt is not None \
                    and rt.cpu_cores is not None and abs(rt.cpu_cores - cores) <= 0.005 * max(1, workers) + 1e-9:
                return spec
        return None

    def _network_effects(self, base: str, namespace: str, spec: Mapping[str, Any]) -> list[Effect | EdgeEffect]:
        action = spec.get("action") or "delay"
        if action not in ("delay", "loss", "netem"):
            raise ChaosInvalid(f"spec.action: Unsupported value: {action!r}: the simulated cluster models delay, loss "
                               "and netem")
        if (spec.get("mode") or "all") != "all":
            raise ChaosInvalid("spec.mode: Unsupported value: the simulated cluster models a NetworkChaos on every "
                               "pod of a service (mode: all)")
        if spec.get("externalTargets"):
            raise ChaosInvalid("spec.externalTargets: Unsupported value: the simulated cluster has no external hosts")
        direction = spec.get("direction") or "to"
        if direction not in ("to", "from", "both"):
            raise ChaosInvalid(f"spec.direction: Unsupported value: {direction!r}: supported values: to, from, both")
        target = spec.get("target")
        if direction != "to" and target is None:
            raise ChaosInvalid("spec.direction: Invalid value: `from` and `both` direction cannot be used when "
                               "targets is empty in netem action")
        delay_s, drop = 0.0, 0.0
        if spec.get("delay") is not None:
            d = spec["delay"]
            if not isinstance(d, Mapping) or d.get("latency") is None:
                raise ChaosInvalid("spec.delay.latency: Required value")
            delay_s = go_duration(d["latency"], "spec.delay.latency")
        if spec.get("loss") is not None:
            loss = spec["loss"]
            if not isinstance(loss, Mapping) or loss.get("loss") is None:
                raise ChaosInvalid("spec.loss.loss: Required value")
            drop = _percent(loss["loss"], "spec.loss.loss")
        if (action == "delay" and spec.get("delay") is None) or (action == "loss" and spec.get("loss") is None):
            raise ChaosInvalid(f"spec.{action}: Required value: action {action} needs it")
        if delay_s == 0.0 and drop == 0.0:
            raise ChaosInvalid("spec: a NetworkChaos needs a delay or a loss the simulated cluster models")
        if direction == "both":  # both ways: the request and its answer
            delay_s, drop = 2 * delay_s, 1.0 - (1.0 - drop) ** 2
        selected = sorted(self._selected(spec.get("selector"), namespace, "spec.selector"))
        edges = set(self.sim.app.edges())
        pairs: list[tuple[str, str]] = []
        if target is None:
            pairs = [(caller, callee) for caller, callee in self.sim.app.edges() if callee in selected]
        else:
            if not isinstance(target, Mapping):
                raise ChaosInvalid("spec.target: Invalid value: expected a PodSelector")
            if (target.get("mode") or "all") != "all":
                raise ChaosInvalid("spec.target.mode: Unsupported value: the simulated cluster models every pod of "
                                   "the target service (mode: all)")
            targets = sorted(self._selected(target.get("selector"), namespace, "spec.target.selector"))
            for a in selected:
                for b in targets:
                    if (a, b) in edges:
                        pairs.append((a, b))
                    elif (b, a) in edges:
                        pairs.append((b, a))
        if not pairs:
            raise ChaosInvalid("spec: the selected pods and the target make no call to each other in this app")
        now = self.sim.now
        return [EdgeEffect(id=f"{base}:{caller}->{callee}", caller=caller, callee=callee, delay_s=delay_s, drop=drop,
                           started_before=now + 1e-6) for caller, callee in sorted(set(pairs))]

    # ----------------------------------------------------------------- requests (the service proxy)

    def model_request(self, service: str, path: str, attributes: Mapping[str, str],
                      method: str = "GET") -> ProxyAnswer | None:
        """The simulator's model of ``<method> <path>`` on ``service`` with request attributes
        ``attributes`` (the query), or None when the service serves no such path.

        A path matches a route's path with its ``{parameters}`` as any one segment
        (``/product/OLJCESPC7Z`` or ``/product/{id}`` itself); of two routes with the same path
        (``GET /cart``, ``POST /cart``) the one with the request's method is meant, else the
        first.

        * an entry route's path on its entry service: the user request along the route (what
          :func:`engine.sim.probes.evaluate_probe` judges for a route probe);
        * an entry route's path on another service the route reaches: that route's request
          judged where it reaches the service (a route probe with a target; the simulated
          cluster's convention, a real service would answer 404);
        * ``/<operation>`` on a service (``cart``, ``hipstershop.CartService/GetCart``): a
          direct call to the operation, as its busiest caller makes it (an operation probe).

        The status is drawn with the model's success probability, and the latency from its
        distribution (at most its 99.9th percentile), from a generator seeded with the
        simulation's seed.
        """
        app = self.sim.app
        if service not in app.service_names():
            return None
        want = path.strip("/")
        attrs = {str(k): str(v) for k, v in attributes.items()}
        outcome = None
        what = ""
        matching = [r for r in app.routes if _path_matches(r.path, want)]
        matching.sort(key=lambda r: r.method.upper() != method.upper())  # stable: file order otherwise
        for route in matching:
            if route.entry.service == service:
                outcome, what = self.sim.probe_route(route.name, attrs), f"route {route.name}"
                break
            if any(s == service for _, s, _, _ in app.walk(route.entry.service, route.entry.operation)):
                outcome = self.sim.probe_route(route.name, attrs, at_service=service)
                what = f"route {route.name} at {service}"
                break
        if outcome is None:
            for op in app.service(service).operations:
                if _op_path(op.name) == want:
                    outcome, what = self.sim.probe_operation(service, op.name, attrs), f"{service} {op.name}"
                    break
        if outcome is None:
            return None
        ok = self._rng.random() < outcome.success
        latency = outcome.quantile_ms(min(self._rng.random(), 0.999))
        return ProxyAnswer(200 if ok else 503, latency, outcome.success, outcome.quantile_ms(0.95), what)

    # ----------------------------------------------------------------- nodes

    def change_node(self, node: str, *, unschedulable: bool | None = None,
                    taints: tuple[Mapping[str, str], ...] | None = None) -> None:
        """A Node's cordon state and taints (``kubectl cordon``, ``kubectl taint``).

        A cordoned node takes no new pods (the scheduler's ``NodeUnschedulable`` filter; the
        node gets the ``node.kubernetes.io/unschedulable:NoSchedule`` taint); a ``NoSchedule`` or
        ``NoExecute`` taint keeps new pods off it (no pod of these apps tolerates one), and a
        ``NoExecute`` taint evicts its pods -- at once, or after the 300 s every pod tolerates for
        ``node.kubernetes.io/unreachable`` and ``not-ready``. Not modelled: ``PreferNoSchedule``
        (stored, no effect on placement), the kubelet or network of the node (a taint does not
        stop it: ``marathon`` zone outages do).

        Raises:
            SubstrateError: unknown node, or a taint without a key or with an unknown effect.
        """
        parsed: list[tuple[str, str, str]] | None = None
        if taints is not None:
            parsed = []
            for t in taints:
                key, effect = str(t.get("key") or ""), str(t.get("effect") or "")
                if not key:
                    raise SubstrateError("spec.taints.key: Required value")
                if effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
                    raise SubstrateError(f'spec.taints.effect: Unsupported value: "{effect}": supported values: '
                                         '"NoSchedule", "PreferNoSchedule", "NoExecute"')
                parsed.append((key, str(t.get("value") or ""), effect))
        self.sim.set_node_spec(node, unschedulable=unschedulable, taints=parsed)


def _int(value: Any, field_name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ChaosInvalid(f"{field_name}: Invalid value: {value!r}: must be a non-negative integer")
    return value


def world_for(substrate: Substrate, catalog: Catalog, *, repository: str | None = None) -> SimWorld:
    """The simulated world of a substrate the factory opened (``open_substrate(kind="sim")``), so
    that callers outside ``engine/sim`` need not name the simulator.

    Raises:
        TypeError: ``substrate`` is not the simulator (a real cluster's world is real).
    """
    from engine.sim.simulator import Simulator

    if not isinstance(substrate, Simulator):
        raise TypeError(f"a simulated world needs the simulator, not {type(substrate).__name__}")
    return SimWorld(substrate, catalog, repository=repository)
