"""The incremental paths of the terminal app show exactly what a full recompute shows.

* The reducer folds health samples into per-service accumulators and builds the
  :class:`~tui.model.ServiceView` records only when they are read. A reference reducer here
  rebuilds every record on every sample, as the model did before it was made incremental;
  both are fed the same events in uneven batches, read at different moments, snapshotted
  and resumed, and compared at many points.
* The tables repaint only the lines whose row changed and the panes only the border line
  whose subtitle changed. A watch screen is fed a run in batches; at several points what
  the screen shows is compared with what it shows after every widget is forced to render
  everything again from scratch, so a line left stale by a missed repaint fails the test.
  (With the line of a row whose cells changed left out of the repaint, it fails at the
  first comparison.)
"""

from __future__ import annotations

import asyncio
import gc
import random
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from engine.bundle.events import Event
from engine.bundle.format import open_bundle
from tui.model import SPARK_SAMPLES, RouteView, RunModel, ServiceView, changed_metrics, service_state


@pytest.fixture(scope="module")
def events(tmp_path_factory: pytest.TempPathFactory) -> list[Event]:
    from tui.screenshots import make_bundle

    return open_bundle(make_bundle(tmp_path_factory.mktemp("bundle"))).events


class ReferenceHealth:
    """Services and routes the way the model computed them before it was incremental: a new
    record for every service of every sample, histories as tuples, routes converted at once."""

    def __init__(self) -> None:
        self.samples = 0
        self.services: dict[str, ServiceView] = {}
        self.routes: dict[str, RouteView] = {}

    def apply(self, ev: Event) -> None:
        if ev.kind != "health.sample":
            return
        self.samples += 1
        n = self.samples
        for row in ev.payload.get("services", ()):
            name = str(row["service"])
            rps = float(row.get("rps") or 0.0)
            err = float(row.get("error_share") or 0.0)
            p95 = row.get("p95_ms")
            p95 = float(p95) if p95 is not None else None
            status = str(row.get("status", "-"))
            ready, desired = int(row.get("ready", 0)), int(row.get("desired", 0))
            prev = self.services.get(name)
            if prev is None:
                changed: Mapping[str, int] = {}
                rh: tuple[float, ...] = (rps,)
                eh: tuple[float, ...] = (err,)
                ph: tuple[float | None, ...] = (p95,)
            else:
                moved = changed_metrics(prev, row)
                changed = {**prev.changed, **dict.fromkeys(moved, n)} if moved else prev.changed
                rh = (*prev.rps_hist, rps)[-SPARK_SAMPLES:]
                eh = (*prev.err_hist, err)[-SPARK_SAMPLES:]
                ph = (*prev.p95_hist, p95)[-SPARK_SAMPLES:]
            self.services[name] = ServiceView(
                service=name, ready=ready, desired=desired, rps=rps, error_share=err, p95_ms=p95,
                restarts=int(row.get("restarts") or 0), status=status,
                state=service_state(ready, desired, rps, err, p95, status), rps_hist=rh, err_hist=eh, p95_hist=ph,
                changed=changed)
        for row in ev.payload.get("routes", ()):
            self.routes[str(row["route"])] = RouteView(str(row["route"]), float(row.get("rps") or 0.0),
                                                       float(row.get("error_share") or 0.0),
                                                       float(row.get("p50_ms") or 0.0),
                                                       float(row.get("p95_ms") or 0.0))


def batches(events: Sequence[Event], rng: random.Random, largest: int) -> Iterator[list[Event]]:
    i = 0
    while i < len(events):
        n = rng.randint(1, largest)
        yield list(events[i:i + n])
        i += n


def assert_same(model: RunModel, ref: ReferenceHealth) -> None:
    assert model.samples == ref.samples
    assert list(model.services.items()) == list(ref.services.items())  # values and first-seen order
    assert list(model.routes.items()) == list(ref.routes.items())


def test_the_run_has_what_the_comparison_needs(events: list[Event]) -> None:
    samples = [e for e in events if e.kind == "health.sample"]
    assert len(samples) > SPARK_SAMPLES + 10  # the sparkline rings wrap
    ref = ReferenceHealth()
    states: set[str] = set()
    for ev in events:
        ref.apply(ev)
        states.update(s.state for s in ref.services.values())
    assert any(s.changed for s in ref.services.values())  # change marks happen
    assert states - {"ok"}  # and services go unhealthy
    assert ref.routes


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_folded_health_equals_rebuilding_every_sample(events: list[Event], seed: int) -> None:
    rng = random.Random(seed)
    model, ref = RunModel(), ReferenceHealth()
    for batch in batches(events, rng, 40):
        model.apply_many(batch)
        for ev in batch:
            ref.apply(ev)
        if rng.random() < 0.5:  # read now, or let several batches pile up before the next read
            assert_same(model, ref)
    assert_same(model, ref)


def test_reading_between_every_event_changes_nothing(events: list[Event]) -> None:
    eager, lazy, ref = RunModel(), RunModel(), ReferenceHealth()
    for i, ev in enumerate(events):
        eager.apply(ev)
        lazy.apply(ev)
        ref.apply(ev)
        _ = eager.services, eager.routes
        if i % 97 == 0:
            assert_same(lazy, ref)
    assert_same(eager, ref)
    assert_same(lazy, ref)


def test_snapshots_do_not_share_accumulators(events: list[Event]) -> None:
    half = len(events) // 2
    model, ref = RunModel(), ReferenceHealth()
    for ev in events[:half]:
        model.apply(ev)
        ref.apply(ev)
    unread = model.snapshot()  # taken while samples are waiting to be folded into records
    assert_same(model, ref)
    read = model.snapshot()  # taken right after a read
    frozen = dict(read.services), dict(read.routes)
    rest = events[half:]
    model.apply_many(rest)
    for ev in rest:
        ref.apply(ev)
    assert_same(model, ref)
    assert (read.services, read.routes) == frozen  # the later samples did not leak into the snapshot
    unread.apply_many(rest)
    read.apply_many(rest)
    assert_same(unread, ref)
    assert_same(read, ref)


# ---------------------------------------------------------------------------------------------- painting


def test_partial_repaints_leave_no_stale_line(events: list[Event], tmp_path: Path) -> None:
    asyncio.run(_partial_repaints(events, tmp_path))


async def _partial_repaints(events: list[Event], tmp_path: Path) -> None:
    from textual.widget import Widget

    from tui.app import MarathonApp
    from tui.screens.watch import WatchScreen
    from tui.session import FollowTail
    from tui.widgets.table import KeyedTable

    def make() -> WatchScreen:
        return WatchScreen(follow=FollowTail(tmp_path), autostart=False)

    app = MarathonApp(make, cursor_blink=False)
    rng = random.Random(5)
    compared = 0
    threshold = gc.get_threshold()
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        assert gc.get_freeze_count() > 0  # the start-up heap is out of the collector's way (tui.app)
        screen = app.screen
        assert isinstance(screen, WatchScreen) and screen._follow_feed is not None
        assert screen._timer is not None
        screen._timer.stop()
        screen.maybe_score = lambda force=False: None  # type: ignore[method-assign]  # no worker threads
        for i, batch in enumerate(batches(events, rng, 12)):
            screen._follow_feed.extend(batch)
            screen.refresh_now()
            await pilot.pause()
            if i % 4 == 1:
                if i % 8 == 1:  # move the operator's cursor too: its old and new lines repaint
                    screen.query_one("#alerts-table", KeyedTable).action_cursor(1)
                    await pilot.pause()
                shown = app.export_screenshot()
                for widget in screen.walk_children(Widget, with_self=True):
                    if isinstance(widget, KeyedTable):
                        widget._strips.clear()
                        widget._header = None
                    widget.refresh()
                await pilot.pause()
                assert app.export_screenshot() == shown, f"a stale line after batch {i} (t={screen.model.t:.0f})"
                compared += 1
    assert compared >= 10
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == threshold  # given back when the app closed
