"""Code-change faults from a user's own source tree (issue 16, item 2): ``faults generate --source``.

A copy of the shipped Online Boutique model under a name of its own, in an app directory, with
two small service trees this test writes (Go for checkoutservice, Python for
recommendationservice -- not the shipped sources). ``marathon faults generate --source`` copies
them into the app directory's ``src/`` and mutates them (:mod:`faults.codegen`); one generated
code fault is qualified (build, rollout, revert), a marathon with it scheduled runs with the
runbook and seals; with the app directory deleted, the bundle scores and replays clean from what
it carries (``src/`` included).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from engine.apps.model import builtin_app_path
from engine.bundle.format import open_bundle
from engine.cli import main
from faults.codegen import mutations

GO_MAIN = '''package main

import (
	"context"
	"errors"
	"io"
	"strconv"
	"time"
)

const paymentTimeout = 5 * time.Second

var maxItemsPerOrder = 500

func placeOrder(ctx context.Context, items []string, total string) error {
	ctx, cancel := context.WithTimeout(ctx, paymentTimeout)
	defer cancel()
	if len(items) > maxItemsPerOrder {
		return errors.New("too many items")
	}
	cents, err := strconv.ParseInt(total, 10, 64)
	if err != nil {
		return err
	}
	_ = cents
	_ = io.EOF
	return charge(ctx, cents)
}
'''

GO_CLIENT = '''package main

import "context"

// charge calls the payment service; "a < b" in a comment is not code.
func charge(ctx context.Context, cents int64) error {
	if cents == 0 {
		return nil
	}
	return nil
}
'''

PY_SERVER = '''import logging

MAX_RESPONSES = 50
RPC_TIMEOUT_S = 30


def list_recommendations(request, catalog):
    if request is None:
        return []
    max_responses = MAX_RESPONSES
    ids = [p for p in catalog if p not in request.product_ids]
    if len(ids) <= max_responses:
        return ids
    weight = float(request.weight)
    logging.info("picked %d of %d", max_responses, len(ids))
    return ids[:max_responses]
'''


def _write_tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


def test_mutations_are_single_line_unique_and_leave_strings_and_comments_alone() -> None:
    go = mutations("main.go", GO_MAIN)
    assert {m.subtype for m in go} == {"constant-flag", "feature-logic", "type-validation"}
    for m in go + mutations("client.go", GO_CLIENT) + mutations("server.py", PY_SERVER):
        text = {"main.go": GO_MAIN, "client.go": GO_CLIENT, "server.py": PY_SERVER}[m.file]
        assert text.count(m.find) == 1, m
        assert m.replace.strip() not in text, m
        assert "BUG" not in m.replace and "fault" not in m.replace.lower()
        assert len(m.find.splitlines()) == len(m.replace.splitlines()) <= 2
    timeout = next(m for m in go if m.what == "timeout")
    assert timeout.replace.strip() == "const paymentTimeout = 5 * time.Millisecond"
    parse = next(m for m in go if m.what == "parse")
    assert "10, 32)" in parse.replace
    assert not mutations("main_test.go", GO_MAIN) and not mutations("README.md", GO_MAIN)
    assert all("comment" not in m.find for m in mutations("client.go", GO_CLIENT))


def test_generate_with_source_qualify_run_and_replay_without_the_source(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    app_dir = tmp_path / "my-shop"
    app_dir.mkdir()
    text = builtin_app_path("online-boutique").read_text(encoding="utf-8")
    (app_dir / "app.yaml").write_text(re.sub(r"(?m)^name: online-boutique$", "name: my-shop", text), encoding="utf-8")
    checkout, recommend = tmp_path / "checkout-src", tmp_path / "recommend-src"
    _write_tree(checkout, {"main.go": GO_MAIN, "client.go": GO_CLIENT, ".git/HEAD": "ref: main\n"})
    _write_tree(recommend, {"server.py": PY_SERVER})
    candidates = app_dir / "candidates.yaml"
    assert main(["faults", "generate", "--app", str(app_dir), "--source", f"checkoutservice={checkout}",
                 "--source", f"recommendationservice={recommend}", "-o", str(candidates)]) == 0
    assert (app_dir / "src" / "checkoutservice" / "main.go").read_text(encoding="utf-8") == GO_MAIN
    assert not (app_dir / "src" / "checkoutservice" / ".git").exists()
    faults = yaml.safe_load(candidates.read_text(encoding="utf-8"))["faults"]
    code = [f for f in faults if f["mechanism"] == "code-change"]
    assert {(f["target"], f["subtype"]) for f in code} >= {("checkoutservice", "constant-flag"),
                                                          ("checkoutservice", "feature-logic"),
                                                          ("checkoutservice", "type-validation"),
                                                          ("recommendationservice", "constant-flag")}
    for f in code:
        src = (app_dir / "src" / f["target"] / f["change"]["file"]).read_text(encoding="utf-8")
        assert src.count(f["change"]["find"]) == 1, f["id"]
        assert f["effect"]["operations"] and f["effect"]["error_rate"] > 0
        assert re.match(r"^[a-z]+\([a-z-]+\): ", f["change"]["summary"]), f["change"]["summary"]
    # Deterministic: the same tree gives the same catalog.
    again = app_dir / "again.yaml"
    assert main(["faults", "generate", "--app", str(app_dir), "-o", str(again)]) == 0
    assert again.read_text(encoding="utf-8") == candidates.read_text(encoding="utf-8")
    fid = next(f["id"] for f in code if f["target"] == "checkoutservice" and f["subtype"] == "constant-flag")
    qualified = app_dir / "catalog.yaml"
    assert main(["faults", "qualify", "--app", str(app_dir), "--catalog", str(candidates), "--fault", fid,
                 "-o", str(qualified), "--quiet"]) == 0, capsys.readouterr().out
    assert [f["id"] for f in yaml.safe_load(qualified.read_text(encoding="utf-8"))["faults"]] == [fid]
    run_dir = tmp_path / "run"
    assert main(["run", "--app", str(app_dir), "--agent", "runbook", "--seed", "5", "--run-dir", str(run_dir)]) == 0
    bundle = run_dir.with_name(run_dir.name + ".marathon")
    sealed = open_bundle(bundle)
    assert sealed.read_text("src/checkoutservice/main.go") == GO_MAIN
    assert sealed.read_text("src/recommendationservice/server.py") == PY_SERVER
    sched = yaml.safe_load(sealed.read_text("schedule.yaml"))
    assert fid in {f["fault"] for f in sched["faults"]}
    # Benign code commits go to the services with source too, so a code commit is no tell.
    assert any(c["kind"] == "code" and c["service"] in ("checkoutservice", "recommendationservice")
               for c in sched.get("changes", [])), [(c["at"], c["service"], c["kind"]) for c in sched["changes"]]
    # The fault shipped as a commit through the build pipeline: its summary is in the event stream.
    summary = next(f["change"]["summary"] for f in code if f["id"] == fid)
    assert summary in sealed.read_text("events.jsonl")
    shutil.rmtree(run_dir)
    shutil.rmtree(app_dir)
    for tree in (checkout, recommend):
        shutil.rmtree(tree)
    capsys.readouterr()
    assert main(["score", str(bundle), "--json"]) == 0
    run = json.loads(capsys.readouterr().out)["runs"][0]
    assert run["score"] >= 0.0
    assert main(["verify", "--replay", str(bundle)]) == 0, capsys.readouterr().out
    assert "REPLAYS CLEAN" in capsys.readouterr().out


def test_source_refuses_what_it_cannot_place(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree = tmp_path / "tree"
    _write_tree(tree, {"main.go": GO_MAIN})
    model_file = tmp_path / "shop.yaml"
    text = builtin_app_path("online-boutique").read_text(encoding="utf-8")
    model_file.write_text(re.sub(r"(?m)^name: online-boutique$", "name: shop", text), encoding="utf-8")
    out = str(tmp_path / "c.yaml")
    assert main(["faults", "generate", "--app", str(model_file), "--source", f"checkoutservice={tree}", "-o", out]) == 2
    assert "--source needs --app DIR" in capsys.readouterr().err
    app_dir = tmp_path / "shop"
    app_dir.mkdir()
    shutil.copy(model_file, app_dir / "app.yaml")
    assert main(["faults", "generate", "--app", str(app_dir), "--source", f"nosuch={tree}", "-o", out]) == 2
    assert "no service nosuch" in capsys.readouterr().err
    assert main(["faults", "generate", "--app", str(app_dir), "--source", f"checkoutservice={tmp_path / 'x'}",
                 "-o", out]) == 2
    assert "is not a directory" in capsys.readouterr().err
    assert not (app_dir / "src").exists()
    shipped_copy = tmp_path / "ob"
    shipped_copy.mkdir()
    shutil.copy(builtin_app_path("online-boutique"), shipped_copy / "app.yaml")
    assert main(["faults", "generate", "--app", str(shipped_copy), "--source", f"checkoutservice={tree}",
                 "-o", out]) == 2
    assert "not the shipped 'online-boutique'" in capsys.readouterr().err


def test_an_app_directory_s_tree_is_found_whatever_loaded_first(tmp_path: Path) -> None:
    """The ``src/`` beside an ``app.yaml`` is the app's tree even when its model was loaded (and
    cached) before the tree existed and nothing registered it since."""
    from engine.apps.model import load_app, source_root

    app_dir = tmp_path / "late-tree"
    app_dir.mkdir()
    text = builtin_app_path("online-boutique").read_text(encoding="utf-8")
    (app_dir / "app.yaml").write_text(re.sub(r"(?m)^name: online-boutique$", "name: late-tree", text),
                                      encoding="utf-8")
    assert load_app(str(app_dir)).name == "late-tree"
    assert not source_root(str(app_dir)).is_dir()
    _write_tree(app_dir / "src" / "checkoutservice", {"main.go": GO_MAIN})
    assert source_root(str(app_dir)) == app_dir / "src"
    assert (source_root(str(app_dir / "app.yaml")) / "checkoutservice" / "main.go").is_file()


def test_a_schedule_does_not_depend_on_where_the_app_lives(tmp_path: Path) -> None:
    """(app, seed, regime) names a schedule: the same app directory copied elsewhere gives the
    same faults and benign changes (the generator once seeded from the path, so a run in another
    temporary directory drew another schedule)."""
    from faults.generator import generate

    text = builtin_app_path("online-boutique").read_text(encoding="utf-8")
    first = tmp_path / "a" / "shop"
    first.mkdir(parents=True)
    (first / "app.yaml").write_text(re.sub(r"(?m)^name: online-boutique$", "name: shop", text), encoding="utf-8")
    _write_tree(first / "src" / "checkoutservice", {"main.go": GO_MAIN, "client.go": GO_CLIENT})
    assert main(["faults", "generate", "--app", str(first), "-o", str(first / "catalog.yaml")]) == 0
    second = tmp_path / "somewhere-else-entirely" / "shop"
    shutil.copytree(first, second)
    one, two = generate(str(first), 3, "short-5"), generate(str(second), 3, "short-5")
    assert [(f.fault, f.at, f.end) for f in one.faults] == [(f.fault, f.at, f.end) for f in two.faults]
    assert [c.model_dump() for c in one.changes] == [c.model_dump() for c in two.changes]
    assert one.changes
