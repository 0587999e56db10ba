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


def test_app_import_writes_a_runnable_model(shared_data: Path, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """import, check and sim through the command line, with no edit in between."""
    out = tmp_path / "ob.yaml"
    manifest = shared_data / "online-boutique" / "kubernetes-manifests.yaml"
    assert main(["app", "import", str(manifest), "-o", str(out)]) == 0
    data = yaml.safe_load(out.read_text())
    assert {s["name"] for s in data["services"]} >= {"frontend", "cartservice", "redis-cart"}
    capsys.readouterr()
    assert main(["app", "check", str(out)]) == 0
    assert "defaults still in use" in capsys.readouterr().out
    assert main(["sim", "--app", str(out), "--minutes", "2", "--quiet"]) == 0
    assert "simulated 2 min of online-boutique" in capsys.readouterr().out


def test_app_import_rejects_a_non_manifest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: ConfigMap\nmetadata: {name: x}\n")
    assert main(["app", "import", str(bad)]) == 2
    assert "bad.yaml" in capsys.readouterr().err


def test_console_script_entry_point() -> None:
    out = subprocess.run([sys.executable, "-m", "engine.cli", "app", "list"], capture_output=True, text=True,
                         check=True)
    assert "train-ticket" in out.stdout


def test_sim_rejects_bad_minutes_and_seeds(capsys: pytest.CaptureFixture[str]) -> None:
    for minutes in ("0", "-5", "nan", "inf"):
        assert main(["sim", "--minutes", minutes, "--quiet"]) == 2
        assert "--minutes" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["sim", "--seed", "-3"])
    assert "non-negative" in capsys.readouterr().err


def test_sim_accepts_fractional_minutes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "--minutes", "0.01", "--quiet"]) == 0  # rounds up to the next whole second
    assert "simulated 0.0166667 min" in capsys.readouterr().out


def test_output_to_a_closed_pipe_is_quiet() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "engine.cli", "app", "show", "train-ticket", "--routes"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    proc.stdout.readline()
    proc.stdout.close()
    _, err = proc.communicate(timeout=60)
    assert b"Traceback" not in err


def test_ctrl_c_stops_a_long_sim_cleanly() -> None:
    import signal
    import time

    # SIGINT at its default in the child: a shell that started the suite in the background (`&`)
    # leaves it ignored, and the child would inherit that.
    proc = subprocess.Popen([sys.executable, "-m", "engine.cli", "sim", "--minutes", "600", "--speed", "60"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(4)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert b"Traceback" not in err
    assert b"interrupted after" in out


def test_app_file_errors_are_clear(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    assert main(["sim", "--app", str(binary), "--minutes", "1"]) == 2
    assert "UTF-8" in capsys.readouterr().err
    assert main(["sim", "--app", "nope", "--minutes", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("marathon: unknown app 'nope'")
