"""The libyaml fast path of :mod:`engine.inputs.safeyaml` against its pure-Python loader.

Every text must come out the same both ways: the same data and, when it fails, the same
:class:`YamlInputError` (message, line, column, document index).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.inputs import safeyaml

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted(p for p in ROOT.glob("**/*.yaml") if ".venv" not in p.parts and "tests" not in p.parts)

pytestmark = pytest.mark.skipif(safeyaml._CLoader is None, reason="PyYAML built without libyaml")


def _same(a: Any, b: Any) -> bool:
    """Equality that counts NaN equal to NaN and tells 1 from 1.0 and True."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _outcome(fn: Any, text: str) -> tuple[str, Any]:
    try:
        return "ok", fn(text)
    except safeyaml.YamlInputError as exc:
        return "error", (str(exc), exc.line, exc.column, exc.document)


def _both(fn: Any, text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[tuple[str, Any], tuple[str, Any]]:
    fast = _outcome(fn, text)
    with monkeypatch.context() as m:
        m.setattr(safeyaml, "_CLoader", None)
        pure = _outcome(fn, text)
    return fast, pure


def _check(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast, pure = _both(safeyaml._parse_uncached, text, monkeypatch)
    assert fast[0] == pure[0], (text[:200], fast[0], pure[1] if pure[0] == "error" else fast[1])
    assert _same(fast[1], pure[1]) if fast[0] == "ok" else fast[1] == pure[1]
    fast, pure = _both(safeyaml.parse_yaml_documents, text, monkeypatch)
    assert fast[0] == pure[0], (text[:200], fast[0], pure[1] if pure[0] == "error" else fast[1])
    assert _same(fast[1], pure[1]) if fast[0] == "ok" else fast[1] == pure[1]


def test_the_fast_path_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped app model is composed by libyaml, not by the pure-Python loader."""
    def refuse(*_: Any) -> Any:
        raise AssertionError("the pure-Python loader was used")

    monkeypatch.setattr(safeyaml, "parse_yaml_node", refuse)
    data = safeyaml._parse_uncached((ROOT / "engine/apps/train-ticket.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict) and data


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(ROOT)))
def test_shipped_files_read_the_same(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _check(path.read_text(encoding="utf-8"), monkeypatch)


@pytest.mark.parametrize("text", [
    "a: b: c\n", "a: 1\na: 2\n", "- [1, 2\n", "x: !!python/object:os.system ls\n", "a: &x [*x]\n",
    "[" * 2000 + "]" * 2000, "[" * 900 + "]" * 900, ">#\n", "!\n", "a: !!str 1\n",
    "a: b\t# c\n", "- " * 150 + "x\n", "a: \x07\n", "a: \ufeffb\n",
    "a: 1\n---\nb: 2\n", "---\n...\n---\nc: [1, .nan, .inf, 0x1f, 1_000, 2026-01-01, ~, yes]\n",
    "bomb0: &b0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"bomb{i}: &b{i} [{', '.join([f'*b{i - 1}'] * 10)}]\n" for i in range(1, 7)),
    "k: '" + "1" * 5000 + "'\nn: " + "1" * 5000 + "\n", "a:\tb\n", "\ta: b\n", "a: |\n  x\n\ty\n", "{a: 1, b}\n",
    "? [a, b]\n: c\n", "<<: {a: 1}\nb: 2\n", "a: 'x\n", 'a: "\\x41\\u00e9\\N"\n', "- a\n - b\n",
])
def test_edge_cases_read_the_same(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _check(text, monkeypatch)


_YAMLISH = st.text(alphabet=st.sampled_from([*list(" \n\t:-[]{},#&*!|>'\"?%@`~.0159aex"), "é", "\u2028", "\x85", "\r"]),
                   max_size=60)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_YAMLISH)
def test_generated_text_reads_the_same(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _check(text, monkeypatch)


_SEED_TEXT = (ROOT / "engine/apps/online-boutique.yaml").read_text(encoding="utf-8")[:3000]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(at=st.integers(0, len(_SEED_TEXT)), cut=st.integers(0, 40), insert=_YAMLISH)
def test_mutated_app_model_reads_the_same(at: int, cut: int, insert: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _check(_SEED_TEXT[:at] + insert + _SEED_TEXT[at + cut:], monkeypatch)


def test_the_cache_hands_out_fresh_copies() -> None:
    text = "a: [1, 2.5, .nan, {b: yes}]\nc: &x [q]\nd: *x\n"
    first = safeyaml.parse_yaml(text)
    first["a"].append("changed")
    second = safeyaml.parse_yaml(text)
    assert second["a"][:2] == [1, 2.5] and len(second["a"]) == 4 and math.isnan(second["a"][2])
    assert second["a"][3] == {"b": True} and second["c"] is second["d"]  # aliases stay shared
    assert safeyaml.parse_yaml("when: 2026-01-01\n")["when"].year == 2026  # not marshal-able: not cached


def test_errors_are_not_cached() -> None:
    for _ in range(2):
        with pytest.raises(safeyaml.YamlInputError, match="duplicate key"):
            safeyaml.parse_yaml("a: 1\na: 2\n")


def test_the_disk_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large file's parse is kept on disk and read back with an empty memory cache; a
    damaged cache file is parsed again; ``SRE_MARATHON_YAML_CACHE=0`` writes nothing."""
    parses: list[str] = []
    uncached = safeyaml._parse_uncached

    def counted(text: str) -> Any:
        parses.append(text)
        return uncached(text)

    def forget() -> None:
        monkeypatch.setattr(safeyaml, "_memory", type(safeyaml._memory)())

    monkeypatch.setattr(safeyaml, "_parse_uncached", counted)
    monkeypatch.setenv("SRE_MARATHON_CACHE", str(tmp_path / "cache"))
    forget()
    source = tmp_path / "big.yaml"
    source.write_text("".join(f"k{i}: [v{i}, {i}]\n" for i in range(1000)), encoding="utf-8")
    expected = safeyaml.read_yaml(source)
    files = list((tmp_path / "cache" / "yaml").glob("*.marshal"))
    assert len(files) == 1 and len(parses) == 1
    forget()
    assert safeyaml.read_yaml(source) == expected and len(parses) == 1  # from disk
    forget()
    files[0].write_bytes(b"\xff damaged")
    assert safeyaml.read_yaml(source) == expected and len(parses) == 2
    monkeypatch.setenv("SRE_MARATHON_CACHE", str(tmp_path / "off"))
    monkeypatch.setenv("SRE_MARATHON_YAML_CACHE", "0")
    source.write_text(source.read_text(encoding="utf-8") + "extra: 1\n", encoding="utf-8")
    assert safeyaml.read_yaml(source)["extra"] == 1 and len(parses) == 3
    assert not (tmp_path / "off").exists()
