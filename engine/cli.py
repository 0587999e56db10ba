"""The ``marathon`` command line.

Subcommands live beside what they drive; this module only assembles the parser. Commands
that need the terminal UI import it inside the command, so ``engine`` stays importable
without ``textual`` or ``rich``.

Start-up is kept cheap: every subcommand is registered with its name and help, but its
arguments (and the modules that define them: the simulator, the alert evaluator, numpy,
pydantic) are added only for the subcommand being run (:func:`build_parser` with
``commands``), so ``marathon --help`` imports none of them.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import signal
import sys
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from engine.cliargs import add_app_arguments, add_kube_api_argument, add_rules_argument, seed_arg, speed_arg

if TYPE_CHECKING:
    from engine.bundle.events import Event
    from engine.run.session import RunSession
    from engine.substrate import Substrate

DEFAULT_APP = "online-boutique"


def _fmt_ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def health_table(sim: Substrate, window_s: float = 60.0) -> str:
    """A plain-text health summary of a running cluster (services, then routes), over the
    last ``window_s`` seconds."""
    lines = [
        f"{sim.app.title} ({sim.app.name})  seed {sim.seed}  run time {sim.now / 60:5.1f} min  "
        f"load {sim.load_rate():.1f} req/s",
        "",
        f"{'SERVICE':28} {'READY':>6} {'STATUS':18} {'REQ/S':>8} {'5XX':>7} {'P95 MS':>8} {'RESTARTS':>8}",
    ]
    for h in sim.service_health(window_s):
        rps = f"{h.rps:8.1f}" if h.rps else f"{'-':>8}"
        err = f"{100 * h.error_share:6.2f}%" if h.rps else f"{'-':>7}"
        lines.append(f"{h.service[:28]:28} {f'{h.ready}/{h.desired}':>6} {h.status[:18]:18} {rps} {err} "
                     f"{_fmt_ms(h.p95_ms):>8} {h.restarts:>8}")
    lines += ["", f"{'ROUTE':28} {'REQ/S':>8} {'ERRORS':>8} {'P50 MS':>8} {'P95 MS':>8}"]
    for r in sim.route_health(window_s):
        lines.append(f"{r.route[:28]:28} {r.rps:8.1f} {100 * r.error_share:7.2f}% {r.p50_ms:8.0f} {r.p95_ms:8.0f}")
    return "\n".join(lines)


def cmd_sim(args: argparse.Namespace) -> int:
    """Run the embedded cluster under load and print its health as it goes."""
    from engine.apps.model import AppModelError
    from engine.run.clock import Pace, SubstrateLoop, drive
    from engine.run.substrates import open_substrate

    if not (math.isfinite(args.minutes) and args.minutes > 0):
        print(f"marathon: --minutes must be a positive number, got {args.minutes}", file=sys.stderr)
        return 2
    try:
        sim = open_substrate(args.app, seed=args.seed, retention_s=3600.0)
    except (KeyError, AppModelError) as exc:
        print(f"marathon: {_message(exc)}", file=sys.stderr)
        return 2
    total = math.ceil(args.minutes * 60.0 / sim.dt) * sim.dt
    live = sys.stdout.isatty() and not args.quiet
    started = time.perf_counter()
    interrupted = False
    shown = [sim.now]

    def show(sub: Substrate) -> None:
        if sub.now < shown[0] + 60.0 - 1e-9 and sub.now < total - 1e-9:
            return  # one line (or one table) per simulated minute
        shown[0] = sub.now
        if live:
            print("\x1b[H\x1b[2J" + health_table(sub), flush=True)
        elif not args.quiet:
            worst = max(sub.route_health(60.0), key=lambda r: r.error_share)
            print(f"t={sub.now / 60:5.1f} min  worst route {worst.route} errors "
                  f"{100 * worst.error_share:.2f}%", flush=True)

    try:
        drive(SubstrateLoop(sim, end=total, after=show), Pace(args.speed), slice_s=60.0)
    except KeyboardInterrupt:
        interrupted = True
    wall = time.perf_counter() - started
    print("\x1b[H\x1b[2J" if live else "", end="")
    print(health_table(sim))
    print(f"\n{'interrupted after' if interrupted else 'simulated'} {sim.now / 60:g} min of {sim.app.name} "
          f"in {wall:.2f} s wall ({len(sim.scrape())} series)")
    return 130 if interrupted else 0


def _message(exc: BaseException) -> str:
    """An exception's message without the quotes KeyError adds."""
    if isinstance(exc, KeyError) and exc.args:
        return str(exc.args[0])
    return str(exc)


def cmd_app_list(args: argparse.Namespace) -> int:
    from engine.apps.model import builtin_apps, load_app

    print(f"{'NAME':20} {'SERVICES':>8} {'ROUTES':>6}  TITLE")
    for name in builtin_apps():
        app = load_app(name)
        print(f"{name:20} {len(app.services):>8} {len(app.routes):>6}  {app.title}")
    return 0


def cmd_app_show(args: argparse.Namespace) -> int:
    """Print services, zones, routes and the call graph of an app."""
    from engine.apps.model import AppModelError, load_app
    from engine.sim.calltree import static_profile

    try:
        app = load_app(args.name)
    except (KeyError, AppModelError) as exc:
        print(f"marathon: {_message(exc)}", file=sys.stderr)
        return 2
    prof = static_profile(app)
    print(f"{app.title} ({app.name}), namespace {app.namespace}")
    print(f"zones: {', '.join(app.cluster.zones)} ({app.cluster.nodes_per_zone} nodes each, "
          f"{app.cluster.node_cpu} CPU / {app.cluster.node_memory})")
    print(f"load: {app.load.base_rps} req/s from {app.load.generator} (+/-{100 * app.load.swing:.0f}% "
          f"over {app.load.period_s / 60:.0f} min)\n")
    print(f"{'SERVICE':30} {'ROLE':13} {'LANG':10} {'PORT':>6} {'REPL':>4} {'CPU LIM':>8} {'MEM LIM':>8} "
          f"{'REQ/S':>7} {'UTIL':>5}")
    for svc in app.services:
        lim = svc.resources.limits
        print(f"{svc.name[:30]:30} {svc.role:13} {svc.language:10} {svc.port or '-':>6} {svc.replicas:>4} "
              f"{lim.cpu or '-':>8} {lim.memory or '-':>8} {prof.rps[svc.name]:7.1f} "
              f"{100 * prof.utilisation[svc.name]:4.0f}%")
    print(f"\n{'ROUTE':22} {'SHARE':>6} {'MEDIAN':>7}  REQUEST -> ENTRY")
    for r in app.routes:
        print(f"{r.name:22} {100 * r.share:5.1f}% {prof.route_median_ms[r.name]:6.0f}ms  {r.method} {r.path} -> "
              f"{r.entry.service} {r.entry.operation}")
    if args.routes:
        for r in app.routes:
            print(f"\n{r.name}:")
            for depth, svc_name, op, call in app.walk(r.entry.service, r.entry.operation):
                flags = []
                if call is not None:
                    if call.times != 1:
                        flags.append(f"x{call.times:g}")
                    if call.optional:
                        flags.append("optional")
                    if call.is_async:
                        flags.append("async")
                print(f"  {'  ' * depth}{svc_name} {op.name}{' (' + ', '.join(flags) + ')' if flags else ''}")
    print("\ncall graph (caller -> callees):")
    graph: dict[str, list[str]] = {}
    for caller, callee in app.edges():
        graph.setdefault(caller, []).append(callee)
    for caller, callees in graph.items():
        print(f"  {caller} -> {', '.join(callees)}")
    return 0


def cmd_schedule(args: argparse.Namespace) -> int:
    """Generate a schedule and print it as a table, or write it as YAML with -o."""
    from faults.generator import generate
    from faults.schedule import dump_schedule, schedule_table
    from faults.spec import CatalogError

    try:
        sched = generate(args.app, args.seed, args.regime, catalog_file=args.catalog)
    except (KeyError, ValueError, CatalogError, FileNotFoundError) as exc:
        print(f"marathon: {_message(exc)}", file=sys.stderr)
        return 2
    if args.output:
        Path(args.output).write_text(dump_schedule(sched), encoding="utf-8")
        print(f"wrote {args.output}: {len(sched.faults)} faults over {sched.duration_s // 60} min")
    if args.yaml and not args.output:
        print(dump_schedule(sched), end="")
    elif not args.output or args.table:
        print(schedule_table(sched))
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    """Run a whole schedule headless and print what was injected and what the probes saw."""
    from engine.run.sealinputs import counterfactual_first
    from engine.run.session import RunSession
    from engine.substrate import SubstrateError
    from faults.generator import generate
    from faults.schedule import ScheduleError, load_schedule
    from faults.spec import CatalogError

    try:
        sched = load_schedule(args.schedule) if args.schedule else generate(args.app, args.seed, args.regime,
                                                                            catalog_file=args.catalog)
        from engine.operate.operators import operator_from_args

        operator = operator_from_args(args)
        seed = args.seed if args.schedule is None else sched.seed
        alerts = None if args.alerts == "none" else args.alerts
        substrate, speed = None, args.speed or None
        if args.substrate == "kube":
            substrate, alerts, speed = _open_kube(args, sched.app, seed, alerts)
        if alerts and alerts.startswith("prometheus="):
            _check_prometheus(alerts.split("=", 1)[1])
        first = None if args.no_record else counterfactual_first(sched, seed)
        session = RunSession(sched, seed=seed, operator=operator, run_dir=None if args.no_record else
                             args.run_dir or "auto", speed=speed, alert_source=alerts, rules=args.rules,
                             substrate=substrate)
        session.counterfactual = first
        run = session.run
        if args.metrics_port is not None:
            port = run.serve_metrics(args.metrics_port)
            print(f"serving /metrics on http://127.0.0.1:{port}/metrics", flush=True)
    except (KeyError, ValueError, ScheduleError, CatalogError, FileNotFoundError, FileExistsError,
            SubstrateError) as exc:
        print(f"marathon: {_message(exc)}", file=sys.stderr)
        return 2
    kube = None
    if args.kube_api is not None:
        from engine.run.kubeapi import start_kube_api

        try:
            kube = start_kube_api(run, command="run", port=args.kube_api)
        except OSError as exc:
            print(f"marathon: cannot serve the Kubernetes API: {exc}", file=sys.stderr)
            session.close()
            return 2
        print(f"serving the Kubernetes API (read-only: the run's operator is {run.operator.name}) on {kube.url}; "
              f"kubectl --kubeconfig {kube.kubeconfig} get pods", flush=True)
    try:
        return _drive_run(session)
    finally:
        if kube is not None:
            kube.stop()


def _drive_run(session: RunSession) -> int:
    """Drive a ``marathon run`` session to the end, print its summary and seal it; the exit status."""
    run = session.run
    llm_calls: list[Event] = []
    llm_failed: list[Event] = []

    def count_llm(ev: Event) -> None:
        if ev.kind == "llm.call":
            llm_calls.append(ev)
            if ev.payload.get("error"):
                llm_failed.append(ev)

    session.subscribe(count_llm)
    started = time.perf_counter()
    try:
        with _signals_as_interrupt():
            session.drive()
    except KeyboardInterrupt:
        print(f"\ninterrupted at run time {run.now / 60:.1f} min", file=sys.stderr)
        outcome = session.close()
        if outcome.bundle is not None:
            print(f"sealed the incomplete run: {outcome.bundle}", file=sys.stderr)
        elif outcome.error:
            print(f"marathon: the run could not be sealed: {outcome.error}", file=sys.stderr)
        return 130
    wall = time.perf_counter() - started
    print(run.summary())
    print(f"\n{run.now / 60:.1f} min of run time in {wall:.2f} s wall")
    if llm_failed:
        print(f"marathon: warning: {len(llm_failed)} of {len(llm_calls)} model calls failed (last: "
              f"{llm_failed[-1].payload['error']}); the agent acted without its model for those", file=sys.stderr)
    outcome = session.close()
    if outcome.bundle is not None:
        print(f"sealed bundle: {outcome.bundle}  (score it: marathon score {outcome.bundle})")
    elif outcome.error:
        print(f"marathon: the run could not be sealed: {outcome.error}", file=sys.stderr)
        return 1
    return 0


def _open_kube(args: argparse.Namespace, app: str, seed: int, alerts: str | None) -> tuple[Substrate, str, float]:
    """``--substrate kube``: attach to the cluster, read alerts from its Prometheus, and pace the
    run at the cluster's speed (``marathon cluster``'s, 1 on a real cluster).

    Returns:
        (the substrate, the alert source, the run's speed).

    Raises:
        ValueError: no ``--kubeconfig`` or no ``--prometheus``, or ``--alerts`` other than the
            default or that Prometheus.
        engine.substrate.SubstrateError: the cluster does not answer or does not run the app.
    """
    from engine.run.substrates import open_substrate

    if not args.kubeconfig or not args.prometheus:
        raise ValueError("--substrate kube needs --kubeconfig and --prometheus (the Prometheus that scrapes the app "
                         "with the rule pack: see `marathon prometheus-config`)")
    source = f"prometheus={args.prometheus.rstrip('/')}"
    if alerts not in ("embedded", source, f"prometheus={args.prometheus}"):
        raise ValueError(f"--substrate kube reads alerts from --prometheus; --alerts {alerts} does not apply")
    try:
        _check_prometheus(args.prometheus)
    except ValueError as exc:
        raise ValueError(str(exc).replace(f"--alerts prometheus={args.prometheus}",
                                          f"--prometheus {args.prometheus}")) from None
    sub = open_substrate(app, seed=seed, kind="kube", kubeconfig=args.kubeconfig, context=args.context,
                         namespace=args.namespace, prometheus=args.prometheus,
                         image_repository=args.image_repository)
    speed = float(getattr(sub, "speed", 1.0))
    if args.speed and abs(args.speed - speed) > 1e-9:
        print(f"marathon: note: the run follows the cluster's clock ({speed:g}x), not --speed {args.speed:g}",
              file=sys.stderr)
    print(f"attached to namespace {getattr(sub, 'namespace', '?')} ({speed:g}x run seconds per wall second)",
          file=sys.stderr)
    return sub, source, speed


def _check_prometheus(url: str) -> None:
    """Fail before the run starts when the Prometheus to read alerts from does not answer.

    Raises:
        ValueError: not reachable, or not a Prometheus (message names the URL).
    """
    import urllib.error
    import urllib.request

    probe = url.rstrip("/") + "/api/v1/status/buildinfo"
    try:
        with urllib.request.urlopen(probe, timeout=5) as resp:
            resp.read()
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise ValueError(f"--alerts prometheus={url}: no Prometheus answers at {probe} ({exc}); start it first "
                         "(see `marathon prometheus-config`)") from None


@contextlib.contextmanager
def _signals_as_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP end a run as Ctrl-C does (the run is sealed as incomplete)."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(ValueError):  # not the main thread (tests)
            previous[sig] = signal.signal(sig, interrupt)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def cmd_validate(args: argparse.Namespace) -> int:
    """Run noop, oracle, runbook, one-per-fault and every adversary on the same schedules; check the ranking."""
    from engine.run.validate import format_validation, validate

    if args.seeds < 1:
        print("marathon: --seeds must be at least 1", file=sys.stderr)
        return 2
    from engine.apps.model import AppModelError, builtin_apps, load_app
    from faults.spec import CatalogError, app_catalog

    apps = args.app or builtin_apps()
    if args.catalog is not None and len(apps) != 1:
        print("marathon: --catalog is the catalog of one app: give exactly one --app with it", file=sys.stderr)
        return 2
    catalogs = {apps[0]: args.catalog} if args.catalog is not None else {}
    try:
        for app in apps:
            load_app(app)
            app_catalog(app, catalogs.get(app))
    except (KeyError, AppModelError, CatalogError, FileNotFoundError) as exc:
        print(f"marathon: {_message(exc)}", file=sys.stderr)
        return 2
    quiet = args.quiet or args.json

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    result = validate(apps, args.regime, range(1, args.seeds + 1), progress=None if quiet else progress,
                      catalogs=catalogs)
    sys.stdout.write(result.to_json() if args.json else format_validation(result) + "\n")
    return 0 if result.ok else 1


def _regime_arguments(p: argparse.ArgumentParser) -> None:
    from faults.schedule import DEFAULT_REGIME, RUN_REGIMES

    p.add_argument("--regime", default=DEFAULT_REGIME, choices=RUN_REGIMES)


def _fill_sim(p: argparse.ArgumentParser) -> None:
    add_app_arguments(p, DEFAULT_APP, catalog=False)
    p.add_argument("--seed", type=seed_arg, default=1)
    p.add_argument("--minutes", type=float, default=30.0, help="run time to simulate (default 30)")
    p.add_argument("--speed", type=speed_arg, default=None,
                   help="run-time seconds per wall second (default: as fast as possible)")
    p.add_argument("--quiet", action="store_true", help="print only the final summary")
    p.set_defaults(func=cmd_sim)


def _fill_schedule(p: argparse.ArgumentParser) -> None:
    add_app_arguments(p, DEFAULT_APP)
    p.add_argument("--seed", type=seed_arg, default=1)
    _regime_arguments(p)
    p.add_argument("-o", "--output", help="write the schedule YAML here")
    p.add_argument("--yaml", action="store_true", help="print the YAML instead of the table")
    p.add_argument("--table", action="store_true", help="print the table even when writing a file")
    p.set_defaults(func=cmd_schedule)


def _fill_run(p: argparse.ArgumentParser) -> None:
    from engine.operate.llm.config import add_llm_arguments

    add_app_arguments(p, DEFAULT_APP)
    p.add_argument("--seed", type=seed_arg, default=1)
    _regime_arguments(p)
    p.add_argument("--schedule", help="replay this schedule file instead of generating one")
    p.add_argument("--agent", default="noop",
                   help="the operator: noop (default), runbook, oracle, an LLM agent (react, rag, orbit), or a "
                        "scripted adversary (alert-spam, lump-all, claim-only, scale-to-zero, restart-everything, "
                        "rollback-everything, random-act)")
    p.add_argument("--run-dir", help="record the run here (default: runs/<run id>); sealed into <dir>.marathon")
    p.add_argument("--no-record", action="store_true", help="keep the event stream in memory only")
    p.add_argument("--alerts", default="embedded",
                   help="alert source: embedded (default), none, or prometheus=URL (needs --speed; serve the "
                        "series to it with --metrics-port)")
    p.add_argument("--metrics-port", type=int, default=None,
                   help="serve the simulation's /metrics on this loopback port (0: any free port)")
    p.add_argument("--speed", type=speed_arg, default=None,
                   help="wall-clock mode: run-time seconds per wall second (default: virtual clock)")
    p.add_argument("--substrate", default="sim", choices=("sim", "kube"),
                   help="sim: the embedded simulated cluster (default); kube: an app on a Kubernetes cluster "
                        "(`marathon cluster`, kind, k3s), with --kubeconfig and --prometheus")
    p.add_argument("--kubeconfig", help="--substrate kube: the kubeconfig file")
    p.add_argument("--context", help="--substrate kube: the kubeconfig context (default: its current one)")
    p.add_argument("--namespace", help="--substrate kube: the app's namespace (default: the context's, else the "
                                       "app model's)")
    p.add_argument("--prometheus", metavar="URL", help="--substrate kube: the Prometheus scraping the app with the "
                                                       "rule pack; alerts, health and series come from it")
    p.add_argument("--image-repository", metavar="REPO",
                   help="--substrate kube: where code-fault images <REPO>/<service>:<change id> live (default "
                        "registry.sre-marathon.local/<app>)")
    add_kube_api_argument(p, "read-only here (the run's operator is a built-in agent)")
    add_rules_argument(p)
    add_llm_arguments(p)
    p.set_defaults(func=cmd_run)


def _fill_watch(p: argparse.ArgumentParser) -> None:
    from tui.cli import add_watch_arguments

    add_watch_arguments(p)


def _fill_play(p: argparse.ArgumentParser) -> None:
    from tui.cli import add_play_arguments

    add_play_arguments(p)


def _fill_replay(p: argparse.ArgumentParser) -> None:
    from tui.cli import add_replay_arguments

    add_replay_arguments(p)


def _fill_seal(p: argparse.ArgumentParser) -> None:
    from engine.bundle.cli import add_seal_arguments
    from engine.run.sealinputs import complete_inputs

    add_seal_arguments(p, inputs=complete_inputs)


def _fill_verify(p: argparse.ArgumentParser) -> None:
    from engine.bundle.cli import add_verify_arguments
    from engine.run.replay import replay

    add_verify_arguments(p, replay=replay)


def _fill_keys(p: argparse.ArgumentParser) -> None:
    from engine.bundle.cli import add_keys_arguments

    add_keys_arguments(p)


def _fill_score(p: argparse.ArgumentParser) -> None:
    from engine.run.counterfactual import generated_schedule_digest, noop_counterfactual
    from scoring.cli import add_score_arguments

    add_score_arguments(p, noop=noop_counterfactual, generated=generated_schedule_digest)


def _fill_report(p: argparse.ArgumentParser) -> None:
    from engine.run.counterfactual import generated_schedule_digest, noop_counterfactual
    from scoring.cli import add_report_arguments

    add_report_arguments(p, noop=noop_counterfactual, generated=generated_schedule_digest)


def _fill_sweep(p: argparse.ArgumentParser) -> None:
    from engine.run.sweep import add_sweep_arguments
    from tui.cli import sweep_progress

    add_sweep_arguments(p, progress=sweep_progress)


def _fill_serve(p: argparse.ArgumentParser) -> None:
    from engine.serve.cli import add_serve_arguments

    add_serve_arguments(p)


def _fill_validate(p: argparse.ArgumentParser) -> None:
    add_app_arguments(p, None, repeatable=True)
    _regime_arguments(p)
    p.add_argument("--seeds", type=int, default=1, help="seeds 1..N (default 1)")
    p.add_argument("--json", action="store_true", help="the table and checks as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=cmd_validate)


def _fill_cluster(p: argparse.ArgumentParser) -> None:
    from engine.run.cluster import add_cluster_arguments

    add_cluster_arguments(p)


def _fill_prometheus_config(p: argparse.ArgumentParser) -> None:
    from alerts.live import add_prometheus_config_arguments

    add_prometheus_config_arguments(p)


def _fill_faults(p: argparse.ArgumentParser) -> None:
    from engine.run.faultscli import add_faults_arguments

    add_faults_arguments(p.add_subparsers(dest="faults_command", metavar="SUBCOMMAND", required=True))


def _fill_app(app_p: argparse.ArgumentParser) -> None:
    from engine.apps.cli import add_check_arguments, add_import_arguments
    from faults.cli import add_catalog_arguments

    app_sub = app_p.add_subparsers(dest="app_command", metavar="SUBCOMMAND", required=True)
    p = app_sub.add_parser("list", help="list the shipped app models")
    p.set_defaults(func=cmd_app_list)
    p = app_sub.add_parser("show", help="services, zones, routes and call graph of an app")
    p.add_argument("name", help="app name or app file")
    p.add_argument("--routes", action="store_true", help="also print every route's call tree")
    p.set_defaults(func=cmd_app_show)
    p = app_sub.add_parser("import", help="build a runnable app model from Kubernetes manifests")
    add_import_arguments(p)
    p = app_sub.add_parser("check", help="load an app model; list the import's guesses and defaults still in use")
    add_check_arguments(p)
    p = app_sub.add_parser("catalog", help="fault-catalog counts per category and code-bug subtype against "
                                           "SRE-Marathon's Table 3")
    add_catalog_arguments(p)


def _fill_rules(rules_p: argparse.ArgumentParser) -> None:
    from alerts.rulestest import add_rules_test_arguments

    rules_sub = rules_p.add_subparsers(dest="rules_command", metavar="SUBCOMMAND", required=True)
    p = rules_sub.add_parser("test", help="run `promtool test rules` unit-test files, with promtool's output and "
                                          "exit codes")
    add_rules_test_arguments(p)


COMMANDS: tuple[tuple[str, str, Callable[[argparse.ArgumentParser], None]], ...] = (
    ("sim", "run the embedded cluster under load and print its health", _fill_sim),
    ("schedule", "generate a seeded fault schedule (table, or YAML with -o)", _fill_schedule),
    ("run", "run a whole schedule headless", _fill_run),
    ("watch", "watch an agent's run live in the terminal app", _fill_watch),
    ("play", "be the operator yourself, scored like an agent", _fill_play),
    ("replay", "replay a sealed bundle in the terminal app", _fill_replay),
    ("seal", "seal a run directory into one bundle file", _fill_seal),
    ("verify", "verify a bundle: sealed, complete, unchanged; --replay re-executes it", _fill_verify),
    ("keys", "make or show the Ed25519 key seals sign bundles with", _fill_keys),
    ("score", "score sealed bundles into a leaderboard", _fill_score),
    ("sweep", "run a grid of apps x seeds x regimes x operators (process pool or Ray), resumable, then score "
              "the bundles into a leaderboard", _fill_sweep),
    ("report", "write an HTML report with plots for one bundle", _fill_report),
    ("serve", "run a marathon for an external agent over MCP and an HTTP JSON API", _fill_serve),
    ("validate", "check the benchmark's ranking: noop, oracle, runbook and adversaries on the same schedules",
     _fill_validate),
    ("cluster", "run the simulated cluster as a Kubernetes API server (kubectl, k9s, `run --substrate kube`)",
     _fill_cluster),
    ("prometheus-config", "write a scrape config and the rule pack for your Prometheus", _fill_prometheus_config),
    ("faults", "generate and qualify fault catalogs for any app model", _fill_faults),
    ("app", "list, show or import app models", _fill_app),
    ("rules", "unit-test your own alert rules on the embedded evaluator", _fill_rules),
)
"""Every subcommand: name, help line, and the function adding its arguments (and importing
what they need)."""


def build_parser(commands: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The ``marathon`` parser.

    Args:
        commands: the subcommands whose arguments to add (the others are listed, with their
            help, but take no arguments); None for all of them.
    """
    parser = argparse.ArgumentParser(
        prog="marathon",
        description="SRE-Marathon: a continuous, change-driven benchmark for site-reliability operations.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text, fill in COMMANDS:
        p = sub.add_parser(name, help=help_text)
        if commands is None or name in commands:
            fill(p)
    return parser


def _selected(argv: Sequence[str]) -> set[str]:
    """The subcommands :func:`main` needs arguments for: the one named first; none for a
    top-level ``--help``; ``sim`` otherwise (``marathon`` alone runs ``sim``)."""
    names = {name for name, _, _ in COMMANDS}
    if argv and argv[0] in names:
        return {argv[0]}
    if argv and argv[0] in ("-h", "--help"):
        return set()
    return {"sim"}

def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``marathon`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_selected(argv))
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        args = parser.parse_args(["sim", *(argv or [])])
    try:
        code: int = args.func(args)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (| head): stop quietly, as Unix tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    return code


if __name__ == "__main__":
    raise SystemExit(main())
