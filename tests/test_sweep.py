"""``marathon sweep``: grid expansion and errors, the pool and Ray backends, resume, crashes, the leaderboard.

Runs are Online Boutique on the short-5 regime (the fastest real runs). Bundles from the pool
and from a local Ray instance (started by the sweep itself, ``ray.init(num_cpus=2)``, the path a
cluster user runs) are compared byte for byte, and through ``benchmarks/reference_bundles.py``'s
masked digest, with a plain ``marathon run`` of the same (app, seed, regime, operator).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from engine.run import sweep as sw
from engine.run.sweep import RUN_PEAK_BYTES, SweepError, SweepGrid, expand, load_grid, pool_size

# One xdist worker runs the module: the swept bundles (a module fixture) are made once and shared.
pytestmark = pytest.mark.xdist_group("sweep")

APP = "online-boutique"
REPO = Path(__file__).resolve().parents[1]


def _reference_digest(path: Path) -> str:
    spec = importlib.util.spec_from_file_location("reference_bundles", REPO / "benchmarks" / "reference_bundles.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return str(mod.bundle_digest(path))


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() not in ("", "0", "false")


# ----------------------------------------------------------------------------- the grid


def test_grid_file_expands_in_order_with_run_names(tmp_path: Path) -> None:
    grid = tmp_path / "grid.yaml"
    grid.write_text("apps: [online-boutique, train-ticket]\nseeds: '1-2'\nregimes: [short-5]\n"
                    "agents: [noop, runbook]\n", encoding="utf-8")
    specs = expand(load_grid(grid))
    assert [s.name for s in specs] == [
        f"{app}-short-5-seed{seed}-{agent}" for app in ("online-boutique", "train-ticket")
        for seed in (1, 2) for agent in ("noop", "runbook")]
    assert all(not s.model_bound and s.rules == "paper" and s.alerts == "embedded" for s in specs)


def test_seed_specs() -> None:
    assert sw.parse_seeds("1-3,7") == [1, 2, 3, 7]
    assert sw.parse_seeds([5, "1-2", 5]) == [1, 2, 5]
    assert sw.parse_seeds(4) == [4]
    for bad in ("3-1", "x", "-2", ""):
        with pytest.raises(ValueError):
            sw.parse_seeds(bad)


def test_flags_override_the_grid_file(tmp_path: Path) -> None:
    from engine.cli import build_parser

    grid = tmp_path / "grid.yaml"
    grid.write_text("apps: [train-ticket]\nseeds: [1, 2, 3]\nagents: [noop]\n", encoding="utf-8")
    args = build_parser().parse_args(["sweep", "--grid", str(grid), "--apps", APP, "--agents", "runbook,oracle"])
    specs = expand(sw.grid_from_args(args))
    assert [(s.app, s.seed, s.agent) for s in specs] == [(APP, seed, agent) for seed in (1, 2, 3)
                                                         for agent in ("runbook", "oracle")]


def test_llm_configs_multiply_only_llm_agents(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text('base_url = "http://127.0.0.1:9/v1"\nmodel = "m-a"\n', encoding="utf-8")
    grid = tmp_path / "grid.yaml"
    grid.write_text("apps: [online-boutique]\nagents: [noop, react]\nllm:\n  - {config: a.toml, label: a}\n"
                    "  - {base_url: 'http://127.0.0.1:9/v1', model: m-b, label: b}\n", encoding="utf-8")
    specs = expand(load_grid(grid))
    assert [s.name for s in specs] == [f"{APP}-short-5-seed1-noop", f"{APP}-short-5-seed1-react-a",
                                       f"{APP}-short-5-seed1-react-b"]
    assert [s.llm.model if s.llm else None for s in specs] == [None, "m-a", "m-b"]
    assert [s.model_bound for s in specs] == [False, True, True]


@pytest.mark.parametrize(("text", "expected"), [
    ("apps: [online-boutique]\nagents: [noop, nobody]\n",
     "grid.yaml: invalid sweep grid: agents: Value error, entry 1: unknown agent 'nobody'"),
    ("apps: [online-boutique]\nagents: [noop]\nregimes: [forever]\n", "regimes: "),
    ("apps: [online-boutique]\nagents: [noop]\nseeds: '5-1'\n", "seeds: "),
    ("apps: [online-boutique]\nagents: [noop]\noperators: [noop]\n", "operators: Extra inputs are not permitted"),
    ("apps: []\nagents: [noop]\n", "apps: "),
    ("agents: [noop]\n", "apps: Field required"),
    ("apps: [online-boutique]\nagents: [noop]\nalerts: prometheus=http://x\n", "alerts: "),
    ("- apps\n", "grid.yaml: a sweep grid is a mapping"),
    ("apps: [online-boutique\n", "grid.yaml"),
])
def test_bad_grid_files_name_the_file_and_field(tmp_path: Path, text: str, expected: str) -> None:
    grid = tmp_path / "grid.yaml"
    grid.write_text(text, encoding="utf-8")
    with pytest.raises(SweepError) as err:
        load_grid(grid)
    assert expected in str(err.value)
    assert str(grid) in str(err.value)


def test_bad_grids_found_at_expansion(tmp_path: Path) -> None:
    with pytest.raises(SweepError, match=r"apps: .*no-such-app"):
        expand(SweepGrid(apps=["no-such-app"], agents=["noop"]))
    grid = tmp_path / "grid.yaml"
    grid.write_text("apps: [online-boutique]\nagents: [react]\nllm:\n  - {base_url: 'http://h/v1', model: m}\n"
                    "  - {base_url: 'http://h/v1', model: n}\n", encoding="utf-8")
    with pytest.raises(SweepError, match=r"same bundle .*react.*distinct label"):
        expand(load_grid(grid))
    grid.write_text("apps: [online-boutique]\nagents: [react]\nllm:\n  - {model: m, timeout_s: -1}\n",
                    encoding="utf-8")
    with pytest.raises(SweepError, match=r"llm\.0: .*timeout_s"):
        expand(load_grid(grid))


def test_cli_refuses_a_bad_grid_with_status_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from engine.cli import main

    grid = tmp_path / "grid.yaml"
    grid.write_text("apps: [online-boutique]\nagents: [nobody]\n", encoding="utf-8")
    assert main(["sweep", "--grid", str(grid), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "grid.yaml: invalid sweep grid: agents: Value error, entry 0: unknown agent 'nobody'" in err
    assert main(["sweep", "--apps", APP, "-o", str(tmp_path / "out")]) == 2
    assert "needs agents" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_pool_size_is_bounded_by_cores_and_memory() -> None:
    assert pool_size(n_cores=8, memory=3 * RUN_PEAK_BYTES + 1) == 3
    assert pool_size(n_cores=2, memory=100 * RUN_PEAK_BYTES) == 2
    assert pool_size(n_cores=4, memory=RUN_PEAK_BYTES // 2) == 1


# ----------------------------------------------------------------------------- running


SPECS = expand(SweepGrid(apps=[APP], seeds=[1, 2], regimes=["short-5"], agents=["noop", "runbook"]))


@pytest.fixture(scope="module")
def pooled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, sw.SweepResult]:
    """The grid swept on the local pool (2 workers)."""
    out = tmp_path_factory.mktemp("sweep-pool")
    result = sw.sweep(SPECS, out, workers=2, progress=sw._Quiet())
    return out, result


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Seed 1 noop and runbook by ``marathon run`` (the reference for byte identity)."""
    from engine.cli import main

    out = tmp_path_factory.mktemp("plain")
    for agent in ("noop", "runbook"):
        assert main(["run", "--app", APP, "--seed", "1", "--regime", "short-5", "--agent", agent, "--run-dir",
                     str(out / f"{APP}-short-5-seed1-{agent}")]) == 0
    return out


def test_pool_bundles_equal_plain_runs(pooled: tuple[Path, sw.SweepResult], plain: Path) -> None:
    out, result = pooled
    assert [(r.name, r.status) for r in result.results] == [(s.name, "ok") for s in SPECS]
    assert sorted(p.name for p in out.iterdir()) == sorted([f"{s.name}.marathon" for s in SPECS]
                                                           + [sw.LEADERBOARD_FILE, sw.PARTIAL_DIR])
    assert not any((out / sw.PARTIAL_DIR).iterdir())  # sealed runs leave no partial directory
    for agent in ("noop", "runbook"):
        name = f"{APP}-short-5-seed1-{agent}.marathon"
        mine, ref = out / name, plain / name
        assert _reference_digest(mine) == _reference_digest(ref)
        assert mine.read_bytes() == ref.read_bytes()  # same code, so even the hash chain agrees


def test_leaderboard_is_marathon_score_of_the_bundles(pooled: tuple[Path, sw.SweepResult],
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from engine.cli import main

    out, result = pooled
    doc = json.loads((out / sw.LEADERBOARD_FILE).read_text(encoding="utf-8"))
    assert doc.pop("sweep") == {"runs": [s.name for s in SPECS], "failed": []}
    capsys.readouterr()
    assert main(["score", "--json", *(str(out / f"{s.name}.marathon") for s in SPECS)]) == 0
    assert doc == json.loads(capsys.readouterr().out)
    assert [row["operator"] for row in doc["leaderboard"]] == ["runbook", "noop"]
    assert "runbook" in result.table and "noop" in result.table


def test_resume_skips_sealed_bundles_and_redoes_broken_ones(pooled: tuple[Path, sw.SweepResult],
                                                            tmp_path: Path) -> None:
    src, _ = pooled
    out = tmp_path / "resumed"
    shutil.copytree(src, out)
    broken, partial = SPECS[1].name, SPECS[2].name
    original = {n: (src / f"{n}.marathon").read_bytes() for n in (broken, partial)}
    data = bytearray(original[broken])
    data[len(data) // 2] ^= 0xFF  # a flipped byte: the bundle no longer verifies
    (out / f"{broken}.marathon").write_bytes(bytes(data))
    (out / f"{partial}.marathon").unlink()  # a run killed before its seal: only a partial directory
    (out / sw.PARTIAL_DIR / partial).mkdir()
    (out / sw.PARTIAL_DIR / partial / "events.jsonl").write_text('{"seq": 0}\n', encoding="utf-8")
    result = sw.sweep(SPECS, out, workers=2, progress=sw._Quiet())
    assert {r.name: r.status for r in result.results} == {s.name: ("ok" if s.name in (broken, partial) else "skipped")
                                                          for s in SPECS}
    for n in (broken, partial):
        assert (out / f"{n}.marathon").read_bytes() == original[n]
    assert not (out / sw.PARTIAL_DIR / partial).exists()
    assert (out / sw.LEADERBOARD_FILE).read_bytes() == (src / sw.LEADERBOARD_FILE).read_bytes()


def test_resume_keeps_only_the_run_a_bundle_is(pooled: tuple[Path, sw.SweepResult], tmp_path: Path) -> None:
    """A bundle copied in under another run's name (another operator, another seed), one of
    another rule pack, or one ``verify --replay`` found diverged is redone, never skipped."""
    from engine.bundle.format import verify
    from engine.bundle.replaystatus import remember

    src, _ = pooled
    by = {(s.seed, s.agent): s for s in SPECS}
    assert sw.sealed_ok(src / f"{by[1, 'runbook'].name}.marathon", by[1, "runbook"])
    noop1 = src / f"{by[1, 'noop'].name}.marathon"
    assert not sw.sealed_ok(noop1, by[1, "runbook"])  # another operator's bundle under this name
    assert not sw.sealed_ok(src / f"{by[2, 'runbook'].name}.marathon", by[1, "runbook"])  # another seed
    other_pack = sw.RunSpec(by[1, "noop"].name, APP, 1, "short-5", "noop", rules="extended")
    assert not sw.sealed_ok(noop1, other_pack)
    no_alerts = sw.RunSpec(by[1, "noop"].name, APP, 1, "short-5", "noop", alerts="none")
    assert not sw.sealed_ok(noop1, no_alerts)
    out = tmp_path / "resumed"
    shutil.copytree(src, out)
    shutil.copy(noop1, out / f"{by[1, 'runbook'].name}.marathon")
    diverged = out / f"{by[2, 'noop'].name}.marathon"
    from engine.bundle.replaystatus import status_dir

    head = verify(diverged).head
    remember(head, ok=False, first_difference="events.jsonl line 9", problems=["differs"])
    try:  # the verdict is kept by head hash in the user's cache, where the pool's workers read it
        result = sw.sweep(SPECS, out, workers=2, progress=sw._Quiet())
    finally:
        (status_dir() / f"{head}.json").unlink()
    status = {r.name: r.status for r in result.results}
    assert status[by[1, "runbook"].name] == "ok" and status[by[2, "noop"].name] == "ok"
    assert status[by[1, "noop"].name] == status[by[2, "runbook"].name] == "skipped"
    assert (out / f"{by[1, 'runbook'].name}.marathon").read_bytes() == \
        (src / f"{by[1, 'runbook'].name}.marathon").read_bytes()


def test_sweep_refuses_what_it_cannot_run(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at most 10000 seeds"):
        sw.parse_seeds("1-100000000")
    with pytest.raises(ValueError, match="at most 10000 seeds"):
        sw.parse_seeds(["1-6000", "7000-12000"])
    with pytest.raises(sw.SweepError, match="rules: Value error, rules 'nopack' does not load"):
        grid = tmp_path / "g.yaml"
        grid.write_text("apps: [online-boutique]\nagents: [noop]\nrules: nopack\n", encoding="utf-8")
        sw.load_grid(grid)
    afile = tmp_path / "afile"
    afile.write_text("x", encoding="utf-8")
    with pytest.raises(sw.SweepError, match="cannot use it as the sweep's output directory"):
        sw.sweep(SPECS[:1], afile, workers=1, progress=sw._Quiet())
    with pytest.raises(sw.SweepError, match="cannot use it as the sweep's output directory"):
        sw.sweep(SPECS[:1], afile / "sub", workers=1, progress=sw._Quiet())
    for n in (0, -1):
        with pytest.raises(sw.SweepError, match="--workers must be at least 1"):
            sw.sweep(SPECS[:1], tmp_path / "out", workers=n, progress=sw._Quiet())


def test_a_crashing_run_does_not_end_the_sweep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One operator kills its worker process outright, one cannot be built; the third run seals,
    and both failures are in the leaderboard with why."""
    import engine.operate.operators as ops
    from engine.operate.invocation import Invocation, NoopOperator

    specs = expand(SweepGrid(apps=[APP], seeds=[1, 2, 3], agents=["noop"]))
    real = ops.make_operator

    class Dies(NoopOperator):
        def invoke(self, inv: Invocation) -> None:
            os._exit(3)  # a segfault, an OOM kill: the process is gone without a word

    def make(name: str, **kw: Any) -> Any:
        seed = int(os.environ.get("SWEEP_TEST_SEED", "0"))
        if seed == 1:
            return Dies()
        if seed == 2:
            raise RuntimeError("operator factory exploded")
        return real(name, **kw)

    import faults.generator

    real_generate = faults.generator.generate

    def generate(app: str, seed: int, regime: str, **kw: Any) -> Any:
        os.environ["SWEEP_TEST_SEED"] = str(seed)  # in the forked worker only
        return real_generate(app, seed, regime, **kw)

    monkeypatch.setattr(ops, "make_operator", make)
    monkeypatch.setattr(faults.generator, "generate", generate)
    # fork, so the workers inherit the patched functions (the default forkserver starts clean).
    result = sw.sweep(specs, tmp_path, workers=2, progress=sw._Quiet(), start_method="fork")
    status = {r.seed: res.status for r, res in zip(specs, result.results, strict=True)}
    assert status == {1: "failed", 2: "failed", 3: "ok"}
    errors = {r.name: r.error for r in result.failed}
    assert errors[specs[0].name] == "the worker process exited with status 3 before reporting"
    assert "RuntimeError: operator factory exploded" in str(errors[specs[1].name])
    doc = json.loads((tmp_path / sw.LEADERBOARD_FILE).read_text(encoding="utf-8"))
    assert doc["sweep"]["failed"] == [{"run": n, "error": e} for n, e in errors.items()]
    assert [r["run_id"] for r in doc["runs"]] == [specs[2].name]
    assert "FAILED:" in result.table and specs[0].name in result.table


def test_model_bound_runs_share_this_process(tmp_path: Path) -> None:
    """LLM agents run as threads here, at most --concurrency at once, and seal like any run."""
    from scripted_llm import ScriptedLLM, sre_policy

    with ScriptedLLM(sre_policy) as srv:
        grid = SweepGrid(apps=[APP], agents=["react"], llm=[
            sw.LLMEntry.model_validate({"base_url": srv.url, "model": "scripted", "label": label})
            for label in ("a", "b")])
        specs = expand(grid)
        assert all(s.model_bound for s in specs)
        result = sw.sweep(specs, tmp_path, workers=1, concurrency=2, progress=sw._Quiet())
        assert [(r.name, r.status) for r in result.results] == [(f"{APP}-short-5-seed1-react-{x}", "ok")
                                                                for x in "ab"]
        assert srv.requests  # the same scripted server answered: the runs were threads of this process
    doc = json.loads((tmp_path / sw.LEADERBOARD_FILE).read_text(encoding="utf-8"))
    assert sorted(r["operator"] for r in doc["runs"]) == ["react-a", "react-b"]


def test_ray_bundles_equal_the_pool_and_plain_runs(pooled: tuple[Path, sw.SweepResult], plain: Path,
                                                   tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The sweep starts a local Ray instance itself (``ray.init(num_cpus=2)``), as it does with no
    ``--address``; each run is one task, its bundle returned to the driver as bytes."""
    if _in_ci():
        import ray  # CI installs .[test], which includes Ray: this test must run there
    else:
        ray = pytest.importorskip("ray")
    from engine.cli import main

    src, _ = pooled
    specs = [s for s in SPECS if s.seed == 1]
    code = main(["sweep", "--backend", "ray", "--workers", "2", "--apps", APP, "--seeds", "1", "--agents",
                 "noop,runbook", "-o", str(tmp_path), "--quiet"])
    assert code == 0
    assert not ray.is_initialized()  # the sweep shut down the instance it started
    for s in specs:
        mine = (tmp_path / f"{s.name}.marathon").read_bytes()
        assert mine == (src / f"{s.name}.marathon").read_bytes() == (plain / f"{s.name}.marathon").read_bytes()
    doc = json.loads((tmp_path / sw.LEADERBOARD_FILE).read_text(encoding="utf-8"))
    doc.pop("sweep")
    capsys.readouterr()
    assert main(["score", "--json", *(str(src / f"{s.name}.marathon") for s in specs)]) == 0
    assert doc == json.loads(capsys.readouterr().out)


def test_runs_of_one_schedule_start_apart() -> None:
    specs = expand(SweepGrid(apps=[APP, "train-ticket"], seeds=[1], agents=["noop", "runbook", "oracle"]))
    order = [(s.app, s.agent) for s in sw.spread(specs)]
    assert order == [(app, agent) for agent in ("noop", "runbook", "oracle") for app in (APP, "train-ticket")]
    assert sorted(sw.spread(specs), key=specs.index) == specs


def test_ray_tasks_write_to_a_shared_dir(pooled: tuple[Path, sw.SweepResult], tmp_path: Path) -> None:
    """On a Ray already initialised by the caller (a cluster user's driver), with --shared-dir: the
    task writes the bundle on the shared path and the driver takes it from there."""
    if _in_ci():
        import ray
    else:
        ray = pytest.importorskip("ray")
    src, _ = pooled
    spec = SPECS[0]
    shared, out = tmp_path / "shared", tmp_path / "out"
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, object_store_memory=256 * 2**20)
    try:
        result = sw.sweep([spec], out, backend="ray", shared_dir=shared, score=False, progress=sw._Quiet())
        assert ray.is_initialized()  # not the sweep's to shut down
    finally:
        ray.shutdown()
    assert [(r.name, r.status) for r in result.results] == [(spec.name, "ok")]
    assert (shared / f"{spec.name}.marathon").read_bytes() == (src / f"{spec.name}.marathon").read_bytes()
    assert (out / f"{spec.name}.marathon").read_bytes() == (src / f"{spec.name}.marathon").read_bytes()
    assert not (out / sw.LEADERBOARD_FILE).exists()


def test_the_terminal_bar_reports_each_run(capsys: pytest.CaptureFixture[str]) -> None:
    from tui.cli import sweep_progress

    bar = sweep_progress()
    bar.start(2, 1)
    bar.run_done(sw.RunResult("x-ok", "ok", wall_s=1.5))
    bar.run_done(sw.RunResult("x-bad", "failed", error="the worker process was killed by SIGKILL", wall_s=2.0))
    bar.phase("scoring 1 bundles")
    bar.close()
    err = capsys.readouterr().err
    assert "1 runs already sealed: skipped" in err
    assert "ok      x-ok (1.5 s)" in err
    assert "failed  x-bad (2.0 s): the worker process was killed by SIGKILL" in err
    assert "2/2" in err
