"""The core packages never import the terminal UI (DESIGN section 2, STYLE: a headless core, proven)."""

from __future__ import annotations

import subprocess
import sys

import pytest

CORE_MODULES = [
    "engine",
    "engine.apps.model",
    "engine.cli",
    "engine.apps.importer",
    "engine.substrate",
    "engine.sim.simulator",
    "engine.sim.cluster",
    "engine.sim.traffic",
    "engine.bundle.format",
    "engine.bundle.cli",
    "engine.run.orchestrator",
    "engine.operate.tools",
    "engine.operate.operators.runbook",
    "engine.operate.operators.oracle",
    "engine.operate.operators.adversaries",
    "engine.run.validate",
    "scoring.gates",
    "scoring.leaderboard",
    "alerts.evaluator",
    "engine.run.qualify",
    "faults.schedule",
    "scoring.score",
    "scoring.cli",
    "faults",
    "alerts",
    "scoring",
]


@pytest.mark.parametrize("module", CORE_MODULES)
def test_core_module_imports_without_textual_or_rich(module: str) -> None:
    code = (
        "import importlib, sys\n"
        f"importlib.import_module({module!r})\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"{module} pulled in {out.stdout.strip()}"
