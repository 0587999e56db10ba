"""The ``marathon`` command line, run as a user would."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from engine.cli import main


def test_sim_prints_a_health_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "--app", "online-boutique", "--minutes", "3", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "frontend" in out and "checkout" in out
    assert "simulated 3 min of online-boutique" in out
    for line in out.splitlines():
        if line.startswith("frontend "):
            assert "2/2" in line and "Running" in line


def test_sim_reports_an_unknown_app(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "--app", "no-such-app", "--minutes", "1"]) == 2
    assert "no-such-app" in capsys.readouterr().err


def test_app_list_and_show(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["app", "list"]) == 0
    listing = capsys.readouterr().out
    assert all(name in listing for name in ("online-boutique", "astronomy-shop", "train-ticket"))
    assert main(["app", "show", "astronomy-shop", "--routes"]) == 0
    shown = capsys.readouterr().out
    assert "zone-a" in shown and "frontend-proxy" in shown
    assert "checkout -> " in shown  # the call graph
    assert "async" in shown  # Kafka consumers in the checkout route's tree


def test_app_import_writes_a_skeleton(shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "ob.yaml"
    manifest = shared_data / "online-boutique" / "kubernetes-manifests.yaml"
    assert main(["app", "import", str(manifest), "-o", str(out)]) == 0
    data = yaml.safe_load(out.read_text())
    assert {s["name"] for s in data["services"]} >= {"frontend", "cartservice", "redis-cart"}


def test_app_import_rejects_a_non_manifest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: ConfigMap\nmetadata: {name: x}\n")
    assert main(["app", "import", str(bad)]) == 2
    assert "bad.yaml" in capsys.readouterr().err


def test_console_script_entry_point() -> None:
    out = subprocess.run([sys.executable, "-m", "engine.cli", "app", "list"], capture_output=True, text=True,
                         check=True)
    assert "train-ticket" in out.stdout
