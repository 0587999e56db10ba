"""The progress bar of ``marathon sweep`` in a terminal (rich), beside the headless core.

:class:`SweepBar` implements :class:`engine.run.sweep.Progress`: one bar over the sweep's runs
(done of total, elapsed, estimated time left), with a line printed above it for each run that
ends (its name, status, wall seconds, and why it failed). ``engine`` never imports ``rich``;
``engine/cli.py`` reaches this through :func:`tui.cli.sweep_progress`.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

if TYPE_CHECKING:
    from engine.run.sweep import RunResult

_STYLE = {"ok": "green", "skipped": "cyan", "failed": "bold red"}


class SweepBar:
    """A rich progress bar on stderr (module docstring)."""

    def __init__(self) -> None:
        self.console = Console(file=sys.stderr)
        self.bar = Progress(TextColumn("[bold]sweep[/]"), BarColumn(), MofNCompleteColumn(), TextColumn("runs"),
                            TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn(),
                            TextColumn("{task.description}"), console=self.console, transient=False)
        self.task: TaskID | None = None

    def start(self, total: int, skipped: int) -> None:
        if skipped:
            self.console.print(f"[cyan]{skipped} runs already sealed: skipped[/]")
        self.bar.start()
        self.task = self.bar.add_task("", total=total)

    def run_done(self, result: RunResult) -> None:
        style = _STYLE.get(result.status, "")
        note = f": {result.error}" if result.error else ""
        self.bar.console.print(f"[{style}]{result.status:7}[/] {result.name} ({result.wall_s:.1f} s){note}",
                               markup=True, highlight=False)
        if self.task is not None:
            self.bar.advance(self.task)

    def phase(self, text: str) -> None:
        if self.task is not None:
            self.bar.update(self.task, description=text)
        else:
            self.console.print(text)

    def close(self) -> None:
        self.bar.stop()
