"""Shared command-line types: one ``--speed`` meaning and one set of regime names for every CLI."""

from __future__ import annotations

import argparse

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.cli import build_parser
from engine.cliargs import FASTEST_SPEED_WORDS, speed_arg
from faults.generator import REGIMES
from faults.schedule import DEFAULT_REGIME, RUN_REGIMES, Regime


@given(st.floats(min_value=1e-300, max_value=1e300, allow_nan=False, allow_infinity=False))
def test_a_positive_number_is_that_speed(value: float) -> None:
    assert speed_arg(repr(value)) == value


@pytest.mark.parametrize("text", ["0", "0.0", "-0", " 0 ", *FASTEST_SPEED_WORDS, "MAX", " Fast ", "Full"])
def test_zero_and_the_words_mean_as_fast_as_possible(text: str) -> None:
    assert speed_arg(text) is None


@pytest.mark.parametrize("text", ["-1", "-0.5", "nan", "inf", "-inf", "", "quick", "max speed", "1x"])
def test_anything_else_is_refused(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="invalid speed"):
        speed_arg(text)


# What each --speed flag accepted before the two speed types became one, and its default now.
SPEED_FLAGS = {
    "run": None, "sim": None, "serve": None,  # were speed >= 0 (0: virtual clock), default 0
    "watch": 20.0, "play": None, "replay": 30.0,  # were > 0 or max/0/fast/full (None)
}


def _parse(command: str, *flags: str) -> argparse.Namespace:
    positional = ["runs/x.marathon"] if command == "replay" else []
    return build_parser().parse_args([command, *positional, *flags])


@pytest.mark.parametrize("command", SPEED_FLAGS)
def test_every_speed_flag_takes_every_spelling_with_one_meaning(command: str) -> None:
    assert _parse(command).speed == SPEED_FLAGS[command]
    for text in ("0", "0.0", "max", "fast", "full"):
        assert _parse(command, "--speed", text).speed is None
    for text, value in (("2.5", 2.5), ("40", 40.0), ("1e3", 1000.0)):
        assert _parse(command, "--speed", text).speed == value
    for text in ("-3", "nan", "inf", "quick"):
        with pytest.raises(SystemExit):
            _parse(command, "--speed", text)


def test_run_regimes_are_the_generated_ones() -> None:
    assert RUN_REGIMES == tuple(REGIMES) == ("short-5", "short-10", "marathon")
    assert DEFAULT_REGIME in RUN_REGIMES
    assert "single" in Regime.__args__ and "single" not in RUN_REGIMES  # type: ignore[attr-defined]


@pytest.mark.parametrize("command", ["run", "schedule", "validate", "serve", "watch", "play"])
def test_every_regime_flag_offers_the_run_regimes(command: str) -> None:
    assert _parse(command).regime == DEFAULT_REGIME
    for regime in RUN_REGIMES:
        assert _parse(command, "--regime", regime).regime == regime
    for other in ("single", "short-20"):
        with pytest.raises(SystemExit):
            _parse(command, "--regime", other)
