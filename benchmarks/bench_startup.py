"""Start-up and per-call costs (issue 17 item 3): what every run pays besides simulating.

Prints, each as a median over ``--repeat`` runs (wall and CPU seconds; the CPU figure is
the steadier one on a shared machine):

1. ``marathon --help``: a fresh interpreter printing the top-level help.
2. CLI import: a fresh interpreter importing ``engine.cli`` (minus one doing nothing).
3. YAML: each shipped app model and fault catalog parsed by the path
   :func:`engine.inputs.safeyaml.parse_yaml` takes (libyaml where it reads the text as the
   pure-Python loader would), by the pure-Python loader alone (the ratio), and from the
   in-process cache.
4. Per-run fixed cost: ``marathon run`` of a one-minute schedule (Online Boutique, no
   faults), end to end in a fresh interpreter, minus the wall time its simulation loop
   reports (``... min of run time in X s wall``): imports, parsing, the simulator's warm
   start, recording and sealing (after one warm-up run, so with the caches filled).
5. ``kubectl get -o json`` formatting per call: :func:`engine.kubectl.gofmt.go_json` (the
   standard library's encoder where its output is Go's) against the ``encoding/json`` port
   it replaced, on the documents ``kubectl get pods,deployments,services -o json`` prints
   for Train Ticket.
6. Event encoding per event: :meth:`engine.bundle.events.EventStream.emit` plus the
   recorder's ``to_json`` against the three encodings it replaced, on the events of an
   Online Boutique ``short-5`` run recorded here (or ``--events FILE``).

With ``--baseline DIR`` (a checkout of the code before, e.g. ``/work/main``), items 1, 2 and
4 are also measured on that checkout in the same run and printed as ratios.

Usage: python benchmarks/bench_startup.py [--repeat N] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ONE_MINUTE = ("app: online-boutique\nseed: 1\nregime: short-5\ngenerator: '5'\nduration_s: 60\n"
              "faults: []\nchanges: []\n")


def _child(argv: list[str], root: Path, env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """(wall s, CPU s, stdout) of one fresh interpreter running ``argv`` on the code in ``root``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, *argv], cwd=root, capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(root), **(env or {})})
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout


def _median(samples: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)


def _line(label: str, now: tuple[float, float], before: tuple[float, float] | None) -> None:
    text = f"  {label:34} wall {now[0]:6.3f} s  cpu {now[1]:6.3f} s"
    if before is not None:
        text += (f"   before wall {before[0]:6.3f} s cpu {before[1]:6.3f} s"
                 f"   (x{before[0] / now[0]:.1f} wall, x{before[1] / now[1]:.1f} cpu)")
    print(text, flush=True)


def bench_help(roots: list[Path], repeat: int) -> list[tuple[float, float]]:
    return [_median([_child(["-m", "engine.cli", "--help"], r)[:2] for _ in range(repeat)]) for r in roots]


def bench_import(roots: list[Path], repeat: int) -> list[tuple[float, float]]:
    out = []
    for r in roots:
        bare = _median([_child(["-c", "pass"], r)[:2] for _ in range(repeat)])
        full = _median([_child(["-c", "import engine.cli"], r)[:2] for _ in range(repeat)])
        out.append((full[0] - bare[0], full[1] - bare[1]))
    return out


def bench_fixed_cost(roots: list[Path], repeat: int, tmp: Path) -> tuple[list[tuple[float, float, float]], Path]:
    """(end-to-end wall s, simulation wall s, CPU s) medians per root, after one warm-up run
    per root (which fills the parse and counterfactual caches, as any run after the first
    finds them); and the events of the last run."""
    out = []
    sched = tmp / "one-minute.yaml"
    sched.write_text(ONE_MINUTE, encoding="utf-8")
    run_dir = tmp
    for r in roots:
        runs = []
        for i in range(repeat + 1):
            run_dir = tmp / f"{hashlib.sha256(str(r).encode()).hexdigest()[:8]}-{i}"
            wall, cpu, stdout = _child(["-m", "engine.cli", "run", "--schedule", str(sched), "--run-dir",
                                        str(run_dir)], r, {"SRE_MARATHON_CACHE": str(tmp / "cache")})
            m = re.search(r"min of run time in ([0-9.]+) s wall", stdout)
            if i:
                runs.append((wall, float(m.group(1)) if m else float("nan"), cpu))
        out.append((statistics.median(x[0] for x in runs), statistics.median(x[1] for x in runs),
                    statistics.median(x[2] for x in runs)))
    return out, tmp / f"{hashlib.sha256(str(roots[0]).encode()).hexdigest()[:8]}-{repeat}" / "events.jsonl"


def _timed(fn: Callable[[], Any], repeat: int) -> float:
    best = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best.append(time.process_time() - t0)
    return statistics.median(best)


def bench_yaml(repeat: int) -> None:
    from engine.inputs import safeyaml

    files = sorted((ROOT / "engine/apps").glob("*.yaml")) + sorted((ROOT / "faults/catalog").glob("*.yaml"))
    total_fast = total_pure = 0.0
    for path in files:
        text = path.read_text(encoding="utf-8")
        libyaml = safeyaml._fast_loader(text) is not None
        fast = _timed(partial(safeyaml._parse_uncached, text), repeat)
        saved = safeyaml._CLoader
        safeyaml._CLoader = None
        try:
            pure = _timed(partial(safeyaml._parse_uncached, text), repeat)
        finally:
            safeyaml._CLoader = saved
        safeyaml.parse_yaml(text)
        cached = _timed(partial(safeyaml.parse_yaml, text), repeat)
        total_fast += fast
        total_pure += pure
        print(f"  {path.relative_to(ROOT).as_posix():38} {len(text) / 1024:6.0f} KiB  "
              f"{'libyaml' if libyaml else 'pure   '} {fast:6.3f} s  pure {pure:6.3f} s  (x{pure / fast:4.1f})  "
              f"cached {cached * 1000:6.1f} ms", flush=True)
    print(f"  {'all six, first parse in a process':38} {'':10} {total_fast:6.3f} s  pure {total_pure:6.3f} s  "
          f"(x{total_pure / total_fast:4.1f})")


def _kubectl_documents() -> list[Any]:
    """The unstructured documents ``kubectl get <kind> -o json`` prints for Train Ticket after
    two minutes (as the runbook operator's ``kubectl_get`` tool renders them)."""
    from datetime import timedelta

    from engine.kubectl import printers
    from engine.run.substrates import open_substrate
    from engine.sim.k8s import EPOCH

    sim = open_substrate("train-ticket", seed=1, retention_s=600.0)
    sim.advance(sim.now + 120.0)
    docs: list[Any] = []
    namespace = vars(printers)
    original = namespace["go_json"]

    def capture(value: Any, indent: str = "    ") -> str:
        docs.append(value)
        return str(original(value, indent))

    namespace["go_json"] = capture
    try:
        for kind in ("Pod", "Deployment", "ReplicaSet", "Service", "Event"):
            printers.get(kind, sim.objects(kind), output="json", now=EPOCH + timedelta(seconds=sim.now),
                         namespace=sim.app.namespace)
    finally:
        namespace["go_json"] = original
    return docs


def bench_kubectl_json(repeat: int) -> None:
    from engine.kubectl import gofmt

    docs = _kubectl_documents()
    assert all(gofmt.go_json(d) == gofmt.go_json_port(d) for d in docs)
    new = _timed(lambda: [gofmt.go_json(d) for d in docs], repeat) / len(docs)
    old = _timed(lambda: [gofmt.go_json_port(d) for d in docs], repeat) / len(docs)
    size = statistics.mean(len(gofmt.go_json(d)) for d in docs)
    print(f"  per call ({len(docs)} documents, {size / 1024:.0f} KiB mean): stdlib path {new * 1000:.2f} ms, "
          f"port {old * 1000:.2f} ms (x{old / new:.1f}); byte-identical on all")


def bench_events(repeat: int, source: Path) -> None:
    from engine.bundle.events import Event, EventStream, canonical

    events = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    events = [e for e in events if e["kind"] != "seal"]

    def new() -> None:
        stream = EventStream()
        for e in events:
            stream.emit(e["t"], e["kind"], e["payload"]).to_json()

    def old() -> None:
        head = "0" * 64
        for seq, e in enumerate(events):
            payload = json.loads(canonical(e["payload"]))
            ev = Event(seq, round(float(e["t"]), 3), e["kind"], payload, head,
                       Event.digest(head, seq, round(float(e["t"]), 3), e["kind"], payload))
            canonical(ev.to_dict())
            head = ev.hash

    t_new, t_old = _timed(new, repeat) / len(events), _timed(old, repeat) / len(events)
    print(f"  per event ({len(events)} events of {source.parent.name}): one encoding {t_new * 1e6:.0f} us, "
          f"three {t_old * 1e6:.0f} us (x{t_old / t_new:.2f})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--baseline", type=Path, help="a checkout of the code before, measured in the same run")
    ap.add_argument("--events", type=Path, help="an events.jsonl for item 6 (default: record one here)")
    args = ap.parse_args()
    roots = [ROOT] + ([args.baseline.resolve()] if args.baseline else [])

    print("1. marathon --help (fresh interpreter)")
    helps = bench_help(roots, args.repeat)
    _line("marathon --help", helps[0], helps[1] if len(helps) > 1 else None)
    print("2. import engine.cli (minus a bare interpreter)")
    imports = bench_import(roots, args.repeat)
    _line("import engine.cli", imports[0], imports[1] if len(imports) > 1 else None)
    print("3. YAML, CPU seconds per parse (libyaml where safeyaml takes it vs pure-Python)")
    bench_yaml(max(1, args.repeat // 2))
    print("4. per-run fixed cost: `marathon run` of a one-minute schedule minus its simulation loop")
    tmp = tempfile.TemporaryDirectory()
    fixed, _ = bench_fixed_cost(roots, max(1, args.repeat // 2), Path(tmp.name))
    for label, (wall, sim, cpu) in zip(("now", "before"), fixed, strict=False):
        print(f"  {label:7} end to end {wall:6.2f} s wall ({cpu:5.2f} s cpu), simulation {sim:5.2f} s, "
              f"fixed {wall - sim:5.2f} s")
    print("5. kubectl get -o json formatting, CPU per call")
    bench_kubectl_json(args.repeat)
    print("6. event encoding, CPU per event (emit + line)")
    if args.events is None:
        run_dir = Path(tmp.name) / "online-boutique-short-5"
        _child(["-m", "engine.cli", "run", "--app", "online-boutique", "--regime", "short-5", "--seed", "1",
                "--run-dir", str(run_dir)], ROOT, {"SRE_MARATHON_CACHE": str(Path(tmp.name) / "cache")})
        events = run_dir / "events.jsonl"
    else:
        events = args.events
    bench_events(args.repeat, events)
    tmp.cleanup()


if __name__ == "__main__":
    main()
