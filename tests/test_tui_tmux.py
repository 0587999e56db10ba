"""``marathon watch`` in a real terminal: started under tmux, read with capture-pane, driven
with send-keys, and quit cleanly (exit status 0, the stopped run sealed as incomplete).

Needs tmux (``.ci/run`` installs it): skipped without it, except under CI where it fails.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from engine.bundle.format import verify


def watch_command() -> list[str]:
    """``marathon watch`` through the engine's CLI once it has the command, else ``python -m tui``."""
    from engine.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    if "watch" in getattr(sub, "choices", {}):
        return [sys.executable, "-m", "engine.cli", "watch"]
    return [sys.executable, "-m", "tui", "watch"]


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Callable[..., str]]:
    exe = shutil.which("tmux")
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("tmux is required under CI (apt-get install tmux)")
        pytest.skip("tmux not installed")
    socket = f"marathon-test-{os.getpid()}"

    def run(*args: str) -> str:
        return subprocess.run([exe, "-L", socket, *args], capture_output=True, text=True, check=True).stdout

    yield run
    subprocess.run([exe, "-L", socket, "kill-server"], capture_output=True)


def wait_for_screen(tmux: Callable[..., str], text: str, seconds: float = 60.0) -> str:
    deadline = time.monotonic() + seconds
    screen = ""
    while time.monotonic() < deadline:
        screen = tmux("capture-pane", "-p", "-t", "watch")
        if text in screen:
            return screen
        time.sleep(0.2)
    raise AssertionError(f"{text!r} not on screen after {seconds} s:\n{screen}")


def test_marathon_watch_in_a_real_terminal(tmux: Callable[..., str], tmp_path: Path) -> None:
    rc_file = tmp_path / "rc"
    cmd = [*watch_command(), "--speed", "5", "--run-dir", "runs/tmux-watch"]
    # COLUMNS/LINES inherited from the test runner would override the terminal's real size
    shell = (f"unset COLUMNS LINES; cd {shlex.quote(str(tmp_path))} && {shlex.join(cmd)}; "
             f"echo $? > {shlex.quote(str(rc_file))}")
    env = {"TERM": "xterm-256color", "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    tmux("new-session", "-d", "-s", "watch", "-x", "120", "-y", "36",
         *[a for k, v in env.items() for a in ("-e", f"{k}={v}")], shell)
    wait_for_screen(tmux, "frontend")  # the first health sample arrived: the run is live
    screen = wait_for_screen(tmux, "runbook")
    for text in ("WATCH", "online-boutique", "seed 1", "short-5", "5x", "Service health", "[2] Alerts by incident",
                 "Timeline"):
        assert text in screen, screen
    tmux("send-keys", "-t", "watch", "p")
    wait_for_screen(tmux, "paused")
    tmux("send-keys", "-t", "watch", "?")
    wait_for_screen(tmux, "BINDING ID")
    tmux("send-keys", "-t", "watch", "Escape")
    deadline = time.monotonic() + 10
    while "BINDING ID" in tmux("capture-pane", "-p", "-t", "watch") and time.monotonic() < deadline:
        time.sleep(0.2)
    tmux("send-keys", "-t", "watch", "2")  # hide the alerts pane
    deadline = time.monotonic() + 10
    while "[2] Alerts by incident" in tmux("capture-pane", "-p", "-t", "watch") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert "[2] Alerts by incident" not in tmux("capture-pane", "-p", "-t", "watch")
    tmux("send-keys", "-t", "watch", "q")
    deadline = time.monotonic() + 30
    while not rc_file.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert rc_file.exists(), tmux("capture-pane", "-p", "-t", "watch")
    assert rc_file.read_text().strip() == "0"
    bundle = tmp_path / "runs" / "tmux-watch.marathon"
    report = verify(bundle)
    assert report.ok and report.sealed and not report.complete  # stopped early: kept, marked incomplete
