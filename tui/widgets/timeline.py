"""The timeline: fault lanes and the operator's actions over the whole run, like the
figures of a marathon in SRE-Marathon (a lane per fault from injection to revert, with the
moments it was correlated, localized and repaired; the operator's reports and acts below).

Rows, top to bottom: a time axis (left out when fewer than 5 rows fit: the header has the
clock); fault lanes (ground truth: only when revealed; faults
share lanes when they do not overlap); ``alerts``: firing alerts over time; ``operator``:
``◆`` incident reported, ``◇`` root cause, ``✓`` resolved, ``▲`` act executed, ``✕`` act
denied; ``deploys``: every change the pipeline shipped. The playhead column is reversed.
In a replay the whole run is drawn and what lies after the playhead is dimmed; clicking
seeks (:class:`TimelineView.Seek`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.geometry import Region
from textual.message import Message
from textual.widget import Widget

from tui.model import FaultView, RunModel, fmt_clock
from tui.scorecalc import StageTimes
from tui.widgets.pane import Pane, ViewContext
from tui.widgets.spark import BLOCKS

CATEGORY_STYLE = {"code-bug": "magenta", "configuration": "yellow", "runtime": "blue", "infrastructure": "red"}
LABEL_W = 12
MAX_LANES = 8
"""Fault lanes drawn at most; more faults than fit share lanes when they do not overlap, and
the rest are drawn over the last lane and counted on its label. The pane's height is capped
lower still (``tui/styles/run.tcss``: 6 rows inside, 4 on a short terminal): the lanes then
summarise the schedule and the alerts, operator and deploys rows are always drawn."""
TAIL_ROWS = 3
"""Rows drawn under the fault lanes at any height: alerts, operator, deploys."""
OP_PRIORITY = {"✕": 5, "▲": 4, "◆": 3, "◇": 2, "✓": 1}


@dataclass
class TimelineData:
    """What the timeline draws.

    Attributes:
        model: the model to draw (in a replay: the final one, dimmed after ``now``).
        now: the clock or playhead, seconds; end_t: the run's length, seconds.
        stages: stage times per fault; reveal: whether fault lanes may be drawn.
        future: the model holds the whole run (a replay): draw past ``now``, dimmed.
    """

    model: RunModel
    now: float
    end_t: float
    stages: StageTimes = field(default_factory=dict)
    reveal: bool = True
    future: bool = False


def pack_lanes(faults: list[FaultView], end_of: dict[str, float], lanes: int) -> tuple[list[list[FaultView]], int]:
    """Faults packed into at most ``lanes`` lanes (first fit by injection time); also how many did not fit.

    Faults that do not fit are drawn over the last lane (so a summarised timeline still shows
    when every fault was live), and counted.
    """
    packed: list[list[FaultView]] = []
    last_end: list[float] = []
    dropped = 0
    for f in sorted(faults, key=lambda f: (f.t_inject, f.fault)):
        for i, end in enumerate(last_end):
            if f.t_inject > end:
                packed[i].append(f)
                last_end[i] = end_of[f.fault]
                break
        else:
            if len(packed) < lanes:
                packed.append([f])
                last_end.append(end_of[f.fault])
            elif packed:
                packed[-1].append(f)
                last_end[-1] = max(last_end[-1], end_of[f.fault])
                dropped += 1
            else:
                dropped += 1
    return packed, dropped


class TimelineView(Widget):
    """The drawing (module docstring)."""

    can_focus = True

    class Seek(Message):
        """The user clicked the timeline at run time ``t`` (seconds)."""

        def __init__(self, t: float) -> None:
            super().__init__()
            self.t = t

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.data: TimelineData | None = None
        self._lanes = 0
        self._shown = 0
        self._drawn: tuple[Any, list[Text], list[Any]] | None = None
        """(what the lines were drawn for, the lines, each line's signature)."""

    def show(self, data: TimelineData) -> None:
        """Draw ``data``: only the lines that changed are marked for repaint (one line of the
        playhead's column moving is not the whole picture sent to the terminal again)."""
        self.data = data
        self._shown += 1
        lanes = self.lanes_needed()
        if lanes != self._lanes or not self.is_mounted or not self.size.height:
            self._lanes = lanes
            self._drawn = None
            self.refresh(layout=True)
            return
        before = self._drawn
        lines = self._lines_now()
        after = self._drawn
        if before is None or after is None or before[0][1:] != after[0][1:]:  # another size
            self.refresh()
            return
        width = self.size.width
        for y, (old, new) in enumerate(zip(before[2], after[2], strict=False)):
            if old != new:
                self.refresh(Region(0, y, width, 1))
        del lines

    def _lines_now(self) -> list[Text]:
        """The lines for the current size and data, drawn once per :meth:`show`."""
        assert self.data is not None
        height = self.size.height or 8
        key = (self._shown, height, self.size.width)
        if self._drawn is None or self._drawn[0] != key:
            lines = self.lines(height)
            self._drawn = (key, lines, [(ln.plain, str(ln.style), tuple(ln.spans)) for ln in lines])
        return self._drawn[1]

    def lanes_needed(self) -> int:
        """Fault lanes the whole picture needs (1 while faults are hidden or none was injected)."""
        d = self.data
        if d is None or not d.reveal:
            return 1
        faults = [f for f in d.model.faults.values() if f.error is None]
        end_of = {f.fault: f.t_revert if f.t_revert is not None else max(d.now, f.t_inject) for f in faults}
        return max(1, len(pack_lanes(faults, end_of, len(faults))[0]))

    def get_content_height(self, container: Any, viewport: Any, width: int) -> int:
        """Axis, fault lanes, alerts, operator, deploys (the pane's max-height caps it)."""
        return 4 + min(MAX_LANES, self.lanes_needed())

    def _plot_width(self) -> int:
        return max(10, (self.size.width or 100) - LABEL_W - 1)

    def on_click(self, event: events.Click) -> None:
        if self.data is None or event.x < LABEL_W + 1:
            return
        width = self._plot_width()
        t = (event.x - LABEL_W - 1 + 0.5) / width * self.data.end_t
        self.post_message(self.Seek(max(0.0, min(self.data.end_t, t))))

    def render(self) -> Text:
        if self.data is None:
            return Text("waiting for the run to start...", style="dim")
        return Text("\n").join(self._lines_now())

    def lines(self, height: int) -> list[Text]:
        """The timeline as ``height`` lines of text."""
        d = self.data
        assert d is not None
        width = self._plot_width()
        end = max(d.end_t, 1.0)
        now = d.now

        def col(t: float) -> int:
            return max(0, min(width - 1, int(t / end * width)))

        playhead = col(now)
        axis = height >= TAIL_ROWS + 2  # the axis goes first when rows are short (the header has the clock)
        out = [self._axis(width, end)] if axis else []
        lane_rows = max(0, height - TAIL_ROWS - axis)
        model = d.model
        if not d.reveal:
            if lane_rows:
                out.append(Text(f"{'faults':<{LABEL_W}} " + "hidden until the run ends", style="dim italic"))
        elif lane_rows:
            faults = [f for f in model.faults.values() if f.error is None]
            end_of = {f.fault: f.t_revert if f.t_revert is not None else max(now, f.t_inject) for f in faults}
            lanes, dropped = pack_lanes(faults, end_of, lane_rows)
            one_each = all(len(lane) == 1 for lane in lanes) and not dropped
            for i, lane in enumerate(lanes):
                if one_each:
                    label = lane[0].target[:LABEL_W]
                elif dropped and i == len(lanes) - 1:
                    label = (f"faults +{dropped}" if i == 0 else f"+{dropped} over")[:LABEL_W]
                else:
                    label = "faults" if i == 0 else ""
                out.append(self._lane(label, lane, end_of, d.stages, width, col, now))
            if not lanes:
                out.append(Text(f"{'faults':<{LABEL_W}} " + "none yet", style="dim"))
        out.append(self._alerts_row(model, width, end, now, d.future))
        out.append(self._ops_row(model, width, col, now))
        out.append(self._deploys_row(model, width, col, now))
        for line in out[1 if axis else 0:]:
            if line.cell_len > LABEL_W + 1 + playhead and "hidden until" not in line.plain:
                line.stylize("reverse", LABEL_W + 1 + playhead, LABEL_W + 2 + playhead)
        return out[:max(height, 1)]

    def _axis(self, width: int, end: float) -> Text:
        chars = [" "] * width
        step = max(12, width // 8)
        for c in range(0, width - 5, step):
            label = fmt_clock(c / width * end)
            chars[c:c + len(label)] = list(label)
        return Text(f"{'run time':<{LABEL_W}} " + "".join(chars)[:width], style="dim")

    def _lane(self, label: str, lane: list[FaultView], end_of: dict[str, float], stages: StageTimes, width: int,
              col: Any, now: float) -> Text:
        line = Text(f"{label:<{LABEL_W}} ", style="bold")
        chars: list[tuple[str, str]] = [(" ", "")] * width
        for f in lane:
            style = CATEGORY_STYLE.get(f.category, "white")
            a, b = col(f.t_inject), col(end_of[f.fault])
            for c in range(a, b + 1):
                chars[c] = ("━", style)
            chars[a] = ("┣", style)
            for letter, t in zip("CLR", stages.get(f.fault, (None, None, None)), strict=True):
                if t is not None:
                    chars[col(t)] = (letter, "bold green")
        self._append(line, chars, col(now))
        return line

    @staticmethod
    def _append(line: Text, chars: list[tuple[str, str]], playhead: int) -> None:
        """Append cells, dimming those after the playhead; runs of one style become one span."""
        run: list[str] = []
        run_style = ""
        for c, (ch, style) in enumerate(chars):
            st = f"{style} dim".strip() if c > playhead and ch != " " else style
            if st != run_style and run:
                line.append("".join(run), style=run_style)
                run = []
            run_style = st
            run.append(ch)
        if run:
            line.append("".join(run), style=run_style)

    def _alerts_row(self, model: RunModel, width: int, end: float, now: float, future: bool) -> Text:
        values = [0] * width
        last = width if future else min(width, int(now / end * width) + 1)
        series = model.firing_series
        prev = 0
        i = 0
        for c in range(last):
            t1 = (c + 1) / width * end
            peak = prev
            while i < len(series) and series[i][0] < t1:
                prev = series[i][1]
                peak = max(peak, prev)
                i += 1
            values[c] = peak
        top = max(values) or 1
        chars = [(" " if v == 0 else BLOCKS[min(7, int(v / top * 7 + 0.5))], "red") for v in values]
        line = Text(f"{'alerts':<{LABEL_W}} ", style="bold")
        self._append(line, chars, int(now / end * width))
        return line

    def _ops_row(self, model: RunModel, width: int, col: Any, now: float) -> Text:
        chars: list[tuple[str, str]] = [(" ", "")] * width

        def mark(t: float, ch: str, style: str) -> None:
            c = col(t)
            if OP_PRIORITY.get(chars[c][0], 0) < OP_PRIORITY[ch]:
                chars[c] = (ch, style)

        for inc in model.incidents.values():
            mark(inc.t, "◆", "cyan")
            if inc.t_rca is not None:
                mark(inc.t_rca, "◇", "cyan")
            if inc.resolved_at is not None:
                mark(inc.resolved_at, "✓", "green")
        for c in model.calls:
            if c.tier == "act":
                if c.executed:
                    mark(c.t, "▲", "bold green")
                elif not c.allowed:
                    mark(c.t, "✕", "bold red")
        line = Text(f"{'operator':<{LABEL_W}} ", style="bold")
        self._append(line, chars, col(now))
        return line

    def _deploys_row(self, model: RunModel, width: int, col: Any, now: float) -> Text:
        chars: list[tuple[str, str]] = [(" ", "")] * width
        for dep in model.deploys:
            chars[col(dep.t)] = ("│", "blue")
        line = Text(f"{'deploys':<{LABEL_W}} ", style="bold")
        self._append(line, chars, col(now))
        return line


class TimelinePane(Pane):
    """The timeline in a pane; ``data`` is set by the screen (the model may be the final one in a replay)."""

    PANE_ID = "timeline"
    TITLE = "Timeline"

    def __init__(self, number: int, **kwargs: Any) -> None:
        super().__init__(number, **kwargs)
        self.full_model: RunModel | None = None
        self.end_t: float | None = None

    def compose(self) -> ComposeResult:
        yield TimelineView(id="timeline-view")

    @property
    def view(self) -> TimelineView:
        return self.query_one(TimelineView)

    def key(self, ctx: ViewContext) -> Any:
        return (id(ctx.model), ctx.model.revisions["timeline"], int(ctx.now), ctx.score_seq, ctx.reveal,
                id(self.full_model))

    def render_view(self, ctx: ViewContext) -> None:
        model = self.full_model or ctx.model
        end = self.end_t or model.duration_s or max(ctx.now, 60.0)
        self.view.show(TimelineData(model, ctx.now, end, ctx.stages if ctx.reveal else {}, ctx.reveal,
                                    future=self.full_model is not None))
        self.set_subtitle(f"{fmt_clock(ctx.now)} of {fmt_clock(end)} · C L R: correlated, localized, repaired"
                          if ctx.reveal else f"{fmt_clock(ctx.now)} of {fmt_clock(end)}")
