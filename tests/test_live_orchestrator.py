"""The run loop reading its alerts from a real Prometheus instead of the embedded evaluator.

The orchestrator runs on the wall clock (4x), serves its simulation at /metrics, and a
real Prometheus (Debian's 2.42) scrapes it every second with the pack (``for`` durations
shortened to 2 s). A bad image rollout from the schedule must reach the event stream as
``alert.firing`` events that came from Prometheus. Skips without prometheus, except in CI.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from alerts.rules import PACK_PATH
from engine.run.orchestrator import Orchestrator
from faults.schedule import parse_schedule
from faults.spec import load_catalog


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_run_loop_reads_alerts_from_prometheus(tmp_path: Path) -> None:
    exe = shutil.which("prometheus")
    if exe is None:
        if os.environ.get("CI", "").lower() not in ("", "0", "false"):
            pytest.fail("prometheus is required in CI")
        pytest.skip("prometheus not installed")
    from alerts.live import write_prometheus_config

    fault = next(f for f in load_catalog("online-boutique").faults if f.mechanism == "image")
    sched = parse_schedule({"app": "online-boutique", "seed": 1, "regime": "short-5", "duration_s": 600,
                            "faults": [{"at": 10, "fault": fault.id, "target": fault.target, "lifetime": 500}]},
                           "<test>")
    pack = yaml.safe_load(PACK_PATH.read_text())
    for rule in pack["groups"][0]["rules"]:
        if "alert" in rule:
            rule["for"] = "2s"
    rules_path = tmp_path / "fast.rules.yaml"
    rules_path.write_text(yaml.safe_dump(pack, sort_keys=False))
    prom_port = _free_port()
    run = Orchestrator(sched, clock="wall", speed=4.0, alert_source=f"prometheus=http://127.0.0.1:{prom_port}")
    metrics_port = run.serve_metrics(0)
    cfg = write_prometheus_config(tmp_path / "prom", [f"127.0.0.1:{metrics_port}"], scrape_interval="1s",
                                  evaluation_interval="1s", rules=rules_path)
    proc = subprocess.Popen([exe, f"--config.file={cfg}", f"--storage.tsdb.path={tmp_path / 'data'}",
                             f"--web.listen-address=127.0.0.1:{prom_port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        run.start()
        wall0 = time.monotonic()
        firing = []
        while time.monotonic() - wall0 < 75:
            run.advance_to((time.monotonic() - wall0) * 4.0)
            firing = [e for e in run.stream.events if e.kind == "alert.firing"
                      and fault.target in str(e.payload["labels"])]
            if firing:
                break
            time.sleep(0.25)
        assert firing, "no alert about the faulty deployment arrived from Prometheus"
        assert run.alert_history is not None and len(run.alert_history) >= 1
    finally:
        run.close()
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
