"""The service health pane: per service, ready/desired pods, request rate, 5xx share and
p95 latency, the last two with sparklines of the last samples (the status column joins
when the pane is wide).

Rows are coloured by state (:func:`tui.model.service_state`: failing red, degraded
yellow) and unhealthy services sort first, so the trouble stays on screen in a
65-service Train Ticket. A value that just changed (:func:`tui.model.changed_metrics`)
is shown bold and reversed with an arrow for the next two samples. Columns are sized to
the pane on every resize: names are shortened before sparklines shrink below
:data:`MIN_SPARK`, and sparklines are dropped before anything else.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.events import Resize

from tui.model import ServiceView
from tui.widgets.pane import Pane, ViewContext
from tui.widgets.spark import sparkline
from tui.widgets.table import KeyedTable, matches

STATE_STYLE = {"failing": "bold red", "degraded": "yellow", "ok": ""}
STATE_RANK = {"failing": 0, "degraded": 1, "ok": 2}
MIN_SPARK = 4
MAX_SPARK = 24
FIXED = {"ready": 6, "rps": 8, "err": 7, "p95": 8, "rst": 4}
STATUS_W = 13


def _arrow(now: float | None, hist: tuple[float | None, ...]) -> str:
    prev = next((v for v in reversed(hist[:-1]) if v is not None), None)
    if now is None or prev is None or now == prev:
        return " "
    return "↑" if now > prev else "↓"


def fmt_rps(v: float) -> str:
    return f"{v:.1f}" if v < 100 else f"{v:.0f}"


def fmt_share(v: float) -> str:
    return f"{100 * v:.1f}%" if v < 0.1 else f"{100 * v:.0f}%"


def fmt_ms(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:.0f}ms" if v < 10_000 else f"{v / 1000:.0f}s"


def layout(inner: int, longest_name: int) -> tuple[int, int, bool]:
    """(name width, sparkline width, show status) for a pane ``inner`` cells wide."""
    fixed = sum(FIXED.values())
    status = inner - fixed - longest_name - 2 * 8 >= STATUS_W
    avail = inner - fixed - (STATUS_W if status else 0)
    name = min(longest_name, max(12, avail - 2 * (MIN_SPARK + 1)))
    spark = (avail - name) // 2 - 1
    if spark < MIN_SPARK:
        return min(longest_name, max(10, avail)), 0, status
    return name, min(MAX_SPARK, spark), status


class HealthPane(Pane):
    """See module docstring."""

    PANE_ID = "health"
    TITLE = "Service health"

    def __init__(self, number: int, **kwargs: Any) -> None:
        super().__init__(number, **kwargs)
        self.name_width = 22
        self.spark_width = 8
        self.show_status = False
        self._longest = 22
        self._inner = 60

    def compose(self) -> ComposeResult:
        yield KeyedTable(self._columns(), id="health-table", cell_padding=0)

    def _columns(self) -> list[tuple[str, str, int | None]]:
        cols: list[tuple[str, str, int | None]] = [("service", " SERVICE", self.name_width + 1),
                                                   ("ready", " READY", FIXED["ready"])]
        if self.show_status:
            cols.append(("status", " STATUS", STATUS_W))
        spark = self.spark_width + 1 if self.spark_width else 0
        cols += [("rps", "  REQ/S", FIXED["rps"]), ("err", "    5XX", FIXED["err"] + spark),
                 ("p95", "    P95", FIXED["p95"] + spark), ("rst", " RST", FIXED["rst"])]
        return cols

    @property
    def table(self) -> KeyedTable:
        return self.query_one(KeyedTable)

    def _relayout(self) -> None:
        name, spark, status = layout(self._inner, self._longest)
        if (name, spark, status) != (self.name_width, self.spark_width, self.show_status):
            self.name_width, self.spark_width, self.show_status = name, spark, status
            self.table.set_columns(self._columns())
            self._last_key = None

    def on_resize(self, event: Resize) -> None:
        self._inner = max(20, event.size.width - 1)
        self._relayout()

    def key(self, ctx: ViewContext) -> Any:
        return (id(ctx.model), ctx.model.revisions["health"], ctx.needle, self.spark_width, self.show_status,
                self.name_width)

    def cells(self, s: ServiceView, sample: int) -> tuple[Any, ...]:
        """One service's row."""
        row_style = STATE_STYLE[s.state]
        w = self.spark_width

        def val(text: str, metric: str, width: int) -> Text:
            style = f"{row_style} bold reverse".strip() if s.fresh(metric, sample) else row_style
            return Text(text.rjust(width), style=style)

        def with_spark(value: Text, values: tuple[float | None, ...], style: str, floor_hi: float) -> Text:
            if not w:
                return value
            return Text.assemble(value, " ", (sparkline(values, w, floor_hi=floor_hi), style))

        name = s.service if len(s.service) <= self.name_width else s.service[: self.name_width - 1] + "…"
        cells: list[Any] = [Text(" " + name, style=row_style or "bold"),
                            val(f"{s.ready}/{s.desired}", "ready", FIXED["ready"])]
        if self.show_status:
            cells.append(val(" " + s.status[: STATUS_W - 1], "status", 0))
        cells += [val(f"{_arrow(s.rps, s.rps_hist)}{fmt_rps(s.rps)}", "rps", FIXED["rps"]),
                  with_spark(val(f"{_arrow(s.error_share, s.err_hist)}{fmt_share(s.error_share)}", "error_share",
                                 FIXED["err"]), s.err_hist, "red" if s.error_share >= 0.01 else "green", 0.1),
                  with_spark(val(f"{_arrow(s.p95_ms, s.p95_hist)}{fmt_ms(s.p95_ms)}", "p95_ms", FIXED["p95"]),
                             s.p95_hist, "magenta", 100.0),
                  val(str(s.restarts), "restarts", FIXED["rst"])]
        return tuple(cells)

    def render_view(self, ctx: ViewContext) -> None:
        model = ctx.model
        if model.services:
            longest = max(len(name) for name in model.services)
            if longest != self._longest:
                self._longest = longest
                self._relayout()
        order = {name: i for i, name in enumerate(model.services)}
        services = sorted(model.services.values(), key=lambda s: (STATE_RANK[s.state], order[s.service]))
        rows = []
        for s in services:
            cells = self.cells(s, model.samples)
            if matches(cells, ctx.needle):
                rows.append((s.service, cells))
        self.table.sync(rows)
        bad = sum(1 for s in services if s.state != "ok")
        worst = max(model.routes.values(), key=lambda r: r.error_share, default=None)
        route = f" · worst route {worst.route} {fmt_share(worst.error_share)}" if worst else ""
        self.set_subtitle(f"{bad}/{len(services)} unhealthy{route}")

    def selected(self) -> str | None:
        """The service under the cursor (row keys are service names), for the row actions and form defaults."""
        return self.table.cursor_key()
