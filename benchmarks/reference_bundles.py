"""Reference bundles: 3 apps x noop/runbook/oracle, short-10, seed 1, each digested.

A refactoring step must not change what a run does. This script runs the nine reference
marathons through the ``marathon`` command (so it keeps working whatever moves inside the
engine), seals them and prints one SHA-256 per bundle over every member except
``manifest.json``, with what follows from the engine's code digest masked: the digest
itself (``run.start`` ``engine.code_sha256``, which changes with any edit to the code by
design), the events' hash chain (``hash``, ``prev``: the first event's hash covers the
digest, and the ``seal`` event names the head) and the counterfactual's ``reference`` (the
no-op run's head hash). Equal lines before and after a step mean bundles identical in
every other byte.

Usage: python benchmarks/reference_bundles.py [--out DIR] [--apps a,b] [--agents x,y]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

APPS = ("online-boutique", "astronomy-shop", "train-ticket")
AGENTS = ("noop", "runbook", "oracle")


def bundle_digest(path: Path) -> str:
    """SHA-256 (hex) over the bundle's members but the manifest, code digest masked."""
    with tarfile.open(path) as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]
    first = members["events.jsonl"].split(b"\n", 1)[0]
    code = json.loads(first)["payload"]["engine"]["code_sha256"].encode()
    h = hashlib.sha256()
    for name in sorted(members):
        if name == "manifest.json":
            continue
        data = members[name].replace(code, b"<code>")
        if name == "events.jsonl":
            lines = [json.loads(line) for line in data.splitlines() if line.strip()]
            for ev in lines:
                if ev["kind"] == "seal":
                    ev["payload"].pop("sha256", None)  # the head hash
            data = "\n".join(json.dumps({k: v for k, v in ev.items() if k not in ("hash", "prev")},
                                         sort_keys=True) for ev in lines).encode()
        elif name == "counterfactual.json":
            doc = json.loads(data)
            doc.pop("reference", None)
            data = json.dumps(doc, sort_keys=True).encode()
        h.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="keep the bundles here (default: a temporary directory)")
    parser.add_argument("--apps", default=",".join(APPS))
    parser.add_argument("--agents", default=",".join(AGENTS))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.out or tmp)
        out.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, SRE_MARATHON_STATE=str(Path(tmp) / "state"))
        for app in args.apps.split(","):
            for agent in args.agents.split(","):
                run_dir = out / f"{app}-{agent}"
                t0 = time.perf_counter()
                subprocess.run([sys.executable, "-m", "engine.cli", "run", "--app", app, "--seed", "1",
                                "--regime", "short-10", "--agent", agent, "--run-dir", str(run_dir)],
                               check=True, env=env, stdout=subprocess.DEVNULL)
                wall = time.perf_counter() - t0
                print(f"{app:16} {agent:8} {bundle_digest(run_dir.with_suffix('.marathon'))}  ({wall:.1f} s)",
                      flush=True)


if __name__ == "__main__":
    main()
