"""Live mode: a real Prometheus (Debian's 2.42) scrapes the simulator and raises the same alert.

The simulation runs on the wall clock (4x) behind ``/metrics`` on loopback; Prometheus
scrapes and evaluates every second with a copy of the pack whose
DeploymentGenerationMismatch holds for 2 s; the embedded evaluator runs the same rules
on the simulator's own scrapes. A bad image rollout must raise DeploymentGenerationMismatch
for the same deployment, with the same labels, through both paths.

Without ``prometheus`` (or aiohttp / prometheus-api-client) the test skips, except in CI.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from alerts.evaluator import AlertEvaluator, AlertTransition
from alerts.rules import PACK_PATH, load_rule_file

BAD_IMAGE = "us-central1-docker.pkg.dev/google-samples/microservices-demo/cartservice:v9.9.9"


def _require(ok: bool, what: str) -> None:
    if ok:
        return
    if os.environ.get("CI", "").lower() not in ("", "0", "false"):
        pytest.fail(f"{what} is required in CI")
    pytest.skip(f"{what} not installed")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_prometheus_config_command_writes_config_and_pack(tmp_path: Path) -> None:
    from alerts.live import cmd_prometheus_config

    args = argparse.Namespace(output=str(tmp_path / "prom"), target=["127.0.0.1:9999"], scrape_interval="5s",
                              evaluation_interval="5s", rules=str(PACK_PATH))
    assert cmd_prometheus_config(args) == 0
    cfg = yaml.safe_load((tmp_path / "prom" / "prometheus.yml").read_text())
    assert cfg["scrape_configs"][0]["static_configs"][0]["targets"] == ["127.0.0.1:9999"]
    assert (tmp_path / "prom" / PACK_PATH.name).read_text() == PACK_PATH.read_text()
    bad = tmp_path / "bad.yaml"
    bad.write_text("groups: [{name: g, rules: [{alert: A, expr: 'sum('}]}]\n")
    args.rules = str(bad)
    assert cmd_prometheus_config(args) == 2
    if shutil.which("promtool"):
        res = subprocess.run(["promtool", "check", "config", str(tmp_path / "prom" / "prometheus.yml")],
                             capture_output=True, text=True, check=False)
        assert res.returncode == 0, res.stdout + res.stderr


def test_same_fault_same_alert_through_prometheus_and_embedded(tmp_path: Path) -> None:
    exe = shutil.which("prometheus")
    _require(exe is not None, "prometheus (apt-get install prometheus)")
    try:
        import aiohttp  # noqa: F401
        import prometheus_api_client  # noqa: F401
    except ImportError:
        _require(False, "aiohttp and prometheus-api-client")
    from alerts.live import AlertSource, write_prometheus_config
    from engine.run.live import LiveSimulation
    from engine.sim.simulator import Simulator

    pack = yaml.safe_load(PACK_PATH.read_text())
    for rule in pack["groups"][0]["rules"]:
        if rule.get("alert") == "DeploymentGenerationMismatch":
            rule["for"] = "2s"
    rules_path = tmp_path / "fast.rules.yaml"
    rules_path.write_text(yaml.safe_dump(pack, sort_keys=False))
    rules = load_rule_file(rules_path)

    sim = Simulator("online-boutique", seed=2)
    embedded = AlertEvaluator(rules)
    seen: list[AlertTransition] = []
    live = LiveSimulation(sim, speed=4.0)
    live.on_tick = lambda s: seen.extend(embedded.step(s.store, s.now))
    assert live.start() > 0
    prom_port = _free_port()
    cfg = write_prometheus_config(tmp_path / "prom", [f"127.0.0.1:{live.port}"], scrape_interval="1s",
                                  evaluation_interval="1s", rules=rules_path)
    proc = subprocess.Popen([str(exe), f"--config.file={cfg}", f"--storage.tsdb.path={tmp_path / 'data'}",
                             f"--web.listen-address=127.0.0.1:{prom_port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        source = AlertSource(f"http://127.0.0.1:{prom_port}")
        deadline = time.monotonic() + 30
        while True:
            try:
                if source.ready():
                    break
            except Exception:  # connection refused while starting
                pass
            assert time.monotonic() < deadline, "Prometheus did not become ready"
            time.sleep(0.3)
        time.sleep(3)  # a few scrapes of the healthy app first
        with live.lock:
            sim.deploy_change("cartservice", image=BAD_IMAGE, summary="bad image", author="test")
        remote: list[AlertTransition] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            remote += source.poll()
            with live.lock:
                local = [t for t in seen if t.rule == "DeploymentGenerationMismatch" and t.to_state == "firing"]
            prom = [t for t in remote if t.rule == "DeploymentGenerationMismatch" and t.to_state == "firing"]
            if local and prom:
                break
            time.sleep(0.5)
        assert local, "embedded evaluator did not fire DeploymentGenerationMismatch"
        assert prom, "Prometheus did not fire DeploymentGenerationMismatch"
        assert prom[0].labels == local[0].labels
        assert prom[0].labels["deployment"] == "cartservice"
        assert prom[0].fingerprint == local[0].fingerprint
    finally:
        live.stop()
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
