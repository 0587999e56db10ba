"""Mutation fuzzing of every input-file loader (issue 12 part 5), shared by
``tests/test_input_fuzz.py`` (CI, a few hundred examples) and
``benchmarks/bench_input_fuzz.py`` (thousands).

Each :class:`Target` is one loader with real seed files: the shipped app models, fault
catalogs and rule packs, a kube-prometheus rule file, a generated schedule, a keymap, an
LLM configuration (TOML and YAML) and a small sealed bundle (and its run directory) made
here. A mutation deletes a key, changes a value's type, injects NaN, infinities, huge,
negative or absurd numbers, duplicates a list entry (duplicate ids), renames a key,
truncates the file, inserts bytes that are not UTF-8, prepends an alias bomb or replaces
the document by one that is not a mapping. The loader must then load, or raise its
documented error type whose message names the file -- within :data:`TIME_LIMIT_S`.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import re
import shutil
import signal
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hypothesis
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.bundle.events import GENESIS, Event, canonical

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = Path("/work/shared/data")
TIME_LIMIT_S = 5.0
"""Most CPU seconds a loader may spend on one file before the example counts as a hang
(CPU time, not wall time, so that a busy shared CI machine does not make a slow example; a
wall time over three times this counts too)."""

WEIRD_VALUES: list[Any] = ["false", "true", "3", "", "x" * 300, 3, 0, -1, -10**9, 10**30, 10**400, 1e9, 1e300,
                           -1e300, float("nan"), float("inf"), float("-inf"), 0.5, True, False, None, [], {},
                           ["a", "a"], {"x": 1}, "2026-01-01", "../../../../etc/passwd", "a\0b"]
BOMB = ("bomb0: &b0 [x, x, x, x, x, x, x, x, x, x]\n"
        + "".join(f"bomb{i}: &b{i} [{', '.join([f'*b{i - 1}'] * 10)}]\n" for i in range(1, 9)))
NOT_MAPPINGS = ["- a\n- b\n", "just a string\n", "42\n", "", "~\n", "[1, 2, 3]\n"]


class Hang(Exception):
    """A loader ran past :data:`TIME_LIMIT_S`."""


@dataclass
class Target:
    """One loader and its seed files."""

    name: str
    seeds: list[tuple[str, bytes]]
    load: Callable[[Path], object]
    error: type[BaseException]
    fmt: str  # yaml | toml | bundle-dir | bundle-file


@dataclass
class Tally:
    examples: int = 0
    loaded: int = 0
    rejected: int = 0
    tracebacks: int = 0
    hangs: int = 0
    unnamed: int = 0
    failures: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        for k in ("examples", "loaded", "rejected", "tracebacks", "hangs", "unnamed"):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        self.failures += other.failures

    def line(self, name: str) -> str:
        return (f"{name:12} examples {self.examples:5}  loaded {self.loaded:5}  rejected {self.rejected:5}  "
                f"tracebacks {self.tracebacks}  hangs {self.hangs}  errors not naming the file {self.unnamed}")


# ----------------------------------------------------------------------------- TOML out


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v if x is not None) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {_toml_value(x)}" for k, x in v.items() if x is not None) + "}"
    return '""'


def dump_toml(data: dict[str, Any]) -> str:
    """A minimal TOML writer (enough for the keymap and LLM configuration; None is left out)."""
    top = [f"{json.dumps(str(k))} = {_toml_value(v)}" for k, v in data.items() if not isinstance(v, dict)
           and v is not None]
    tables = [f"[{json.dumps(str(k))}]\n" + "\n".join(f"{json.dumps(str(k2))} = {_toml_value(v2)}"
                                                       for k2, v2 in v.items() if v2 is not None)
              for k, v in data.items() if isinstance(v, dict)]
    return "\n".join(top) + "\n" + "\n\n".join(tables) + "\n"


# ----------------------------------------------------------------------------- seeds


SCHEDULE_TEXT = "app: online-boutique\n"
"""The schedule file of the small run (never replayed: the tests score without the counterfactual)."""


def small_run_events() -> list[dict[str, Any]]:
    """The payloads of a small, plausible run: (t, kind, payload)."""
    sched_sha = hashlib.sha256(SCHEDULE_TEXT.encode()).hexdigest()
    labels = {"alertname": "HighErrorRate", "service": "cartservice"}
    return [
        {"t": 0.0, "kind": "run.start", "payload": {
            "run_id": "fuzz", "app": "online-boutique", "seed": 1, "regime": "single", "operator": "noop",
            "substrate": "simulator", "schedule_sha256": sched_sha, "duration_s": 600.0, "oracle": False,
            "edges": [["frontend", "cartservice"]], "rule_pack": {"pack": "paper", "id": "x", "files": {}}}},
        {"t": 60.0, "kind": "fault.inject", "payload": {
            "fault": "cart-fault", "title": "cart fails", "category": "runtime", "subtype": None,
            "mechanism": "cpu-pressure", "target": "cartservice", "scope": ["add-to-cart"],
            "artifact": {"kind": "process", "ref": "cartservice"}, "changes": [], "artifact_refs": ["cartservice"],
            "artifact_services": ["cartservice"], "expected_alerts": ["HighErrorRate"], "intermittent": False,
            "lifetime_s": 400, "replicas_before": 1, "probe": {"route": "add-to-cart"},
            "remedy": {"action": "restart-pods"}}},
        {"t": 75.0, "kind": "health.sample", "payload": {
            "services": [{"service": "cartservice", "ready": 1, "desired": 1}],
            "routes": [{"route": "add-to-cart", "rps": 3.0, "error_share": 0.5, "p95_ms": 900.0}],
            "stores": {"redis-cart": 1}}},
        {"t": 90.0, "kind": "alert.pending", "payload": {
            "alert": "HighErrorRate", "labels": labels, "fingerprint": "ab", "value": 0.5, "id": "a1",
            "active_at": 90.0}},
        {"t": 120.0, "kind": "alert.firing", "payload": {
            "alert": "HighErrorRate", "labels": labels, "fingerprint": "ab", "value": 0.5, "id": "a1",
            "active_at": 90.0}},
        {"t": 120.0, "kind": "probe.result", "payload": {
            "fault": "cart-fault", "ok": False, "success": 0.5, "p95_ms": 900.0, "detail": "errors"}},
        {"t": 150.0, "kind": "report.incident", "payload": {
            "incident": "INC-1", "alerts": ["a1"], "title": "cart errors", "operator": "noop"}},
        {"t": 160.0, "kind": "report.rca", "payload": {
            "incident": "INC-1", "service": "cartservice", "category": "runtime", "artifact": "cartservice",
            "summary": "cpu", "operator": "noop"}},
        {"t": 170.0, "kind": "action.executed", "payload": {
            "tool": "restart", "args": {"service": "cartservice"}, "targets": ["cartservice"], "operator": "noop"}},
        {"t": 180.0, "kind": "llm.call", "payload": {
            "model": "m", "prompt_tokens": 10, "completion_tokens": 5, "tokens": 15, "latency_s": 0.5,
            "cost_usd": 0.001}},
        {"t": 240.0, "kind": "probe.result", "payload": {
            "fault": "cart-fault", "ok": True, "success": 1.0, "p95_ms": 90.0, "detail": "ok"}},
        {"t": 300.0, "kind": "report.resolved", "payload": {"incident": "INC-1", "operator": "noop"}},
        {"t": 460.0, "kind": "fault.revert", "payload": {"fault": "cart-fault", "changes": []}},
        {"t": 470.0, "kind": "repair.check", "payload": {
            "fault": "cart-fault", "recovered_at": 240.0, "ok": True, "detail": "ok"}},
        {"t": 600.0, "kind": "run.end", "payload": {"reason": "schedule done"}},
    ]


def write_events(run_dir: Path, items: list[dict[str, Any]]) -> None:
    """Write ``events.jsonl`` for (t, kind, payload) items with a valid hash chain (canonical JSON)."""
    prev = GENESIS
    lines = []
    for seq, item in enumerate(items):
        payload = item["payload"]
        try:
            h = Event.digest(prev, seq, item["t"], item["kind"], payload)
            line = canonical({"seq": seq, "t": item["t"], "kind": item["kind"], "payload": payload, "prev": prev,
                              "hash": h})
        except ValueError:  # NaN: not JSON; written the way a non-Python writer would
            h = "f" * 64
            line = json.dumps({"seq": seq, "t": item["t"], "kind": item["kind"], "payload": payload, "prev": prev,
                               "hash": h}, sort_keys=True, separators=(",", ":"))
        lines.append(line + "\n")
        prev = h
    (run_dir / "events.jsonl").write_text("".join(lines), encoding="utf-8")


def make_run_dir(where: Path) -> Path:
    """A small, complete run directory (unsealed)."""
    run_dir = where / "fuzz-run"
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "schedule.yaml").write_text(SCHEDULE_TEXT, encoding="utf-8")
    (run_dir / "run.json").write_text("{}\n", encoding="utf-8")
    write_events(run_dir, small_run_events())
    return run_dir


def targets(work: Path) -> dict[str, Target]:
    """Every loader with its seed files (``work``: a scratch directory for the bundle)."""
    from alerts.rules import RuleFileError, load_rule_file
    from engine.apps.model import AppModelError, load_app_file
    from engine.bundle.format import BundleError, open_bundle
    from engine.operate.llm.config import LLMConfigError, load_llm_config
    from engine.run.sealinputs import seal_run
    from faults.generator import generate
    from faults.schedule import ScheduleError, dump_schedule, load_schedule
    from faults.spec import CatalogError, load_catalog
    from tui.keymap import KeymapError, load_keymap

    def read(p: Path) -> bytes:
        return p.read_bytes()

    def bundle_load(path: Path) -> object:
        b = open_bundle(path)
        return b.events, b.meta, b.complete

    def llm_load(path: Path) -> object:
        return load_llm_config(path, env={})

    def rule_seeds() -> list[tuple[str, bytes]]:
        out = [(p.name, read(p)) for p in sorted((ROOT / "alerts" / "pack").glob("*.yaml"))]
        kube = SHARED_DATA / "prometheus-rules" / "kubeStateMetrics-prometheusRule.yaml"
        if kube.is_file():
            out.append((kube.name, read(kube)))
        return out

    run_dir = make_run_dir(work / "seed")
    seal_run(run_dir)
    bundle = run_dir.with_suffix(".marathon")
    keymap = b'[keymap]\npause = "space"\ntool-rollback = "ctrl+b"\npane-1 = "f1"\n'
    llm_toml = (b'base_url = "http://127.0.0.1:11434/v1"\nmodel = "qwen"\nlabel = "q7"\ntimeout_s = 120\n'
                b'max_retries = 4\nretry_backoff_s = 1.0\ntemperature = 0.0\nmax_completion_tokens = 1024\n'
                b'[prices]\n"qwen" = { prompt = 0.15, completion = 0.60 }\n\n[budget.invocation]\nsteps = 12\n'
                b'tokens = 60000\nusd = 0.05\n')
    llm_yaml = (b"base_url: http://127.0.0.1:11434/v1\nmodel: qwen\ntimeout_s: 120\nmax_retries: 4\n"
                b"temperature: 0.0\nprices:\n  qwen: {prompt: 0.15, completion: 0.6}\nbudget:\n  invocation:\n"
                b"    steps: 12\n    usd: 0.05\n  run:\n    usd: 2.0\n")
    return {
        "schedule": Target("schedule", [("schedule.yaml", dump_schedule(generate("online-boutique", 1, "short-5"))
                                         .encode())], load_schedule, ScheduleError, "yaml"),
        "catalog": Target("catalog", [(p.name, read(p)) for p in sorted((ROOT / "faults" / "catalog").glob("*.yaml"))],
                          load_catalog, CatalogError, "yaml"),
        "app": Target("app", [(p.name, read(p)) for p in sorted((ROOT / "engine" / "apps").glob("*.yaml"))],
                      load_app_file, AppModelError, "yaml"),
        "rules": Target("rules", rule_seeds(), load_rule_file, RuleFileError, "yaml"),
        "keymap": Target("keymap", [("keymap.toml", keymap)], load_keymap, KeymapError, "toml"),
        "llm-config": Target("llm-config", [("llm.toml", llm_toml), ("llm.yaml", llm_yaml)], llm_load,
                             LLMConfigError, "toml"),
        "bundle-dir": Target("bundle-dir", [("events.jsonl", read(run_dir / "events.jsonl"))], bundle_load,
                             BundleError, "bundle-dir"),
        "bundle": Target("bundle", [(bundle.name, read(bundle))], bundle_load, BundleError, "bundle-file"),
    }


# ----------------------------------------------------------------------------- mutations


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(data, dict):
        for k, v in data.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            yield from _paths(v, (*prefix, i))


def _get(data: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        data = data[p]
    return data


def mutate_data(draw: Callable[[Any], Any], data: Any) -> Any:
    """One structural mutation of parsed data (a deep copy is changed)."""
    data = copy.deepcopy(data)
    paths = [p for p in _paths(data) if p]
    if not paths:
        return draw(st.sampled_from(WEIRD_VALUES))
    path = draw(st.sampled_from(paths))
    parent = _get(data, path[:-1])
    key = path[-1]
    op = draw(st.sampled_from(["delete", "value", "value", "value", "duplicate", "rename", "swap-type"]))
    if op == "delete":
        del parent[key]
    elif op == "value":
        parent[key] = draw(st.sampled_from(WEIRD_VALUES))
    elif op == "duplicate":
        target = parent if isinstance(parent, list) else _get(data, path)
        if isinstance(target, list) and target:
            i = draw(st.integers(0, len(target) - 1))
            target.insert(i, copy.deepcopy(target[i]))
        else:
            parent[key] = [parent[key], parent[key]]
    elif op == "rename" and isinstance(parent, dict):
        parent[f"{key}_typo"] = parent.pop(key)
    else:
        v = parent[key]
        parent[key] = (str(v).lower() if isinstance(v, (bool, int, float)) else [v] if not isinstance(v, list)
                       else {"item": v})
    return data


def mutate_text(draw: Callable[[Any], Any], blob: bytes) -> bytes:
    """One byte- or text-level mutation."""
    op = draw(st.sampled_from(["truncate", "bytes", "number", "bomb", "not-mapping", "dup-line", "nesting"]))
    if op == "truncate":
        return blob[:draw(st.integers(0, max(0, len(blob) - 1)))]
    if op == "bytes":
        at = draw(st.integers(0, len(blob)))
        junk = draw(st.sampled_from([b"\xff\xfe", b"\xc3", b"\x00", b"\x80\x80\x80", b"\xed\xa0\x80"]))
        return blob[:at] + junk + blob[at:]
    text = blob.decode("utf-8", "replace")
    if op == "number":
        numbers = list(re.finditer(r"(?<=: )-?\d+(\.\d+)?\b", text))
        if numbers:
            m = draw(st.sampled_from(numbers))
            new = draw(st.sampled_from([".nan", ".inf", "-.inf", "1e999", "-5", "99999999999999999999999", "0",
                                        "1e9", "nan", "inf", '"3"', '"false"', "9" * 5000]))
            return (text[:m.start()] + new + text[m.end():]).encode()
        return blob
    if op == "bomb":
        return (BOMB + text).encode()
    if op == "not-mapping":
        return draw(st.sampled_from(NOT_MAPPINGS)).encode()
    if op == "nesting":
        return ("x: " + "[" * 3000 + "]" * 3000 + "\n" + text).encode()
    lines = text.splitlines(keepends=True)
    if not lines:
        return blob
    i = draw(st.integers(0, len(lines) - 1))
    return "".join([*lines[: i + 1], lines[i], *lines[i + 1:]]).encode()


def mutate(draw: Callable[[Any], Any], target: Target, blob: bytes) -> bytes:
    """A mutated copy of ``blob`` in the target's format."""
    structural = draw(st.booleans())
    if target.fmt == "bundle-file":
        at = draw(st.integers(0, len(blob) - 1))
        if draw(st.booleans()):
            return blob[:at]
        return blob[:at] + bytes([blob[at] ^ draw(st.integers(1, 255))]) + blob[at + 1:]
    if target.fmt == "bundle-dir":
        items = small_run_events()
        i = draw(st.integers(0, len(items) - 1))
        items[i]["payload"] = mutate_data(draw, items[i]["payload"])
        if not isinstance(items[i]["payload"], dict):
            items[i]["payload"] = {"value": items[i]["payload"]}
        return json.dumps(items).encode()
    if structural:
        try:
            if target.fmt == "toml":
                import tomllib

                try:
                    data = tomllib.loads(blob.decode())
                except tomllib.TOMLDecodeError:
                    data = yaml.safe_load(blob)
            else:
                data = yaml.safe_load(blob)
        except yaml.YAMLError:
            return mutate_text(draw, blob)
        new = mutate_data(draw, data)
        if target.fmt == "toml" and isinstance(new, dict) and draw(st.booleans()):
            return dump_toml(new).encode()
        return yaml.safe_dump(new, sort_keys=False, allow_unicode=True).encode()
    return mutate_text(draw, blob)


# ----------------------------------------------------------------------------- running one example


def _alarm(signum: int, frame: object) -> None:
    raise Hang


KEEP_DIR = Path(tempfile.gettempdir()) / "sre-marathon-fuzz-failures"
"""Where inputs that made a loader fail are copied, to reproduce them."""


def _keep(path: Path) -> Path:
    KEEP_DIR.mkdir(parents=True, exist_ok=True)
    dest = KEEP_DIR / f"{int(time.time() * 1000)}-{path.name}"
    if path.is_dir():
        shutil.copytree(path, dest, dirs_exist_ok=True)
    else:
        shutil.copyfile(path, dest)
    return dest


def run_example(target: Target, name: str, blob: bytes, work: Path, tally: Tally) -> None:
    """Write the mutated file, load it, and count the outcome."""
    tally.examples += 1
    if target.fmt == "bundle-dir":
        run_dir = work / f"run-{tally.examples}"
        shutil.rmtree(run_dir, ignore_errors=True)
        run_dir.mkdir(parents=True)
        (run_dir / "schedule.yaml").write_text(SCHEDULE_TEXT, encoding="utf-8")
        write_events(run_dir, json.loads(blob))
        path = run_dir
    else:
        path = work / f"{tally.examples}-{name}"
        path.write_bytes(blob)
    old = signal.signal(signal.SIGPROF, _alarm)
    signal.setitimer(signal.ITIMER_PROF, TIME_LIMIT_S)
    started = time.perf_counter()
    hung = False
    try:
        target.load(path)
        signal.setitimer(signal.ITIMER_PROF, 0)
        tally.loaded += 1
    except Hang:
        hung = True
        tally.hangs += 1
        kept = _keep(path)
        tally.failures.append(f"{target.name}: hang (> {TIME_LIMIT_S} s) on {path} (kept as {kept})")
    except target.error as exc:
        signal.setitimer(signal.ITIMER_PROF, 0)
        tally.rejected += 1
        if str(path) not in str(exc):
            tally.unnamed += 1
            tally.failures.append(f"{target.name}: error does not name {path}: {str(exc)[:300]}")
    except Exception as exc:
        signal.setitimer(signal.ITIMER_PROF, 0)
        tally.tracebacks += 1
        tally.failures.append(f"{target.name}: {type(exc).__name__} on {path} (kept as {_keep(path)}): "
                              f"{str(exc)[:300]}")
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)
    if time.perf_counter() - started > 3 * TIME_LIMIT_S and not hung:
        tally.hangs += 1
        tally.failures.append(f"{target.name}: slow (> {3 * TIME_LIMIT_S} s wall) on {path} (kept as {_keep(path)})")


def fuzz(target: Target, examples: int, work: Path, seed: int | None = None) -> Tally:
    """Run ``examples`` mutated files through one loader; the counts. Deterministic: a given
    ``seed``, or hypothesis' derandomized order when None (CI)."""
    tally = Tally()
    work.mkdir(parents=True, exist_ok=True)

    @settings(max_examples=examples, deadline=None, database=None, derandomize=seed is None,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def one(data: st.DataObject) -> None:
        name, blob = data.draw(st.sampled_from(target.seeds))
        run_example(target, name, mutate(data.draw, target, blob), work, tally)

    (hypothesis.seed(seed)(one) if seed is not None else one)()
    return tally
