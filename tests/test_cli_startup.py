"""Cheap start-up: ``marathon --help`` loads none of the heavy modules, and the parser
built for one subcommand is, for that subcommand, the full parser."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.cli import COMMANDS, build_parser

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("numpy", "pydantic", "yaml", "textual", "rich", "alerts.evaluator", "engine.sim", "engine.run.session",
         "faults.spec", "scoring.score")


def _loaded_after(argv: list[str]) -> set[str]:
    code = (f"import json, sys\nfrom engine.cli import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n"
            "    pass\nprint(json.dumps(sorted(sys.modules)), file=sys.stderr)")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=120, check=True)
    return set(json.loads(proc.stderr.strip().splitlines()[-1]))


def test_top_level_help_imports_nothing_heavy() -> None:
    loaded = _loaded_after(["--help"])
    assert "argparse" in loaded
    heavy = sorted(m for m in loaded if any(m == h or m.startswith(h + ".") for h in HEAVY))
    assert heavy == []


def test_one_subcommands_help_imports_only_its_modules() -> None:
    loaded = _loaded_after(["keys", "--help"])
    assert "engine.bundle.cli" in loaded
    assert not {"numpy", "textual", "alerts.evaluator"} & loaded


def _sub(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    sub = action.choices[name]
    assert isinstance(sub, argparse.ArgumentParser)
    return sub


@pytest.mark.parametrize("name", [name for name, _, _ in COMMANDS])
def test_lazy_parser_matches_the_full_one(name: str) -> None:
    full, lazy = build_parser(), build_parser({name})
    assert lazy.format_help() == full.format_help()
    assert _sub(lazy, name).format_help() == _sub(full, name).format_help()
    assert _sub(lazy, name).get_default("func") is _sub(full, name).get_default("func")
