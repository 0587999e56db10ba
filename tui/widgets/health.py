"""The service health pane: per service, ready/desired pods, request rate, 5xx share and
p95 latency, the last two with sparklines of the last samples (the status column joins
when the pane is wide).

Rows are coloured by state (:func:`tui.model.service_state`: failing red, degraded
yellow) and unhealthy services sort first, so the trouble stays on screen in a
65-service Train Ticket. A value that just changed (:func:`tui.model.changed_metrics`)
is shown bold and reversed with an arrow for the next two samples. Columns are sized to
the pane on every resize: names are shortened before sparklines shrink below
:data:`MIN_SPARK`, and sparklines are dropped before anything else.

Names are abbreviated so that every row stays distinct (:func:`short_names`): the prefix
all of the app's services share and the suffix most of them end with are dropped (Train
Ticket: ``ts-`` and ``-service``; Online Boutique: ``service``, so ``paymentservice`` reads
``payment``; so ``ts-admin-basic-info-service`` reads
``admin-basic-info``; the pane's title says what was dropped: ``ts-…-service``), then a name still too long
for its column loses its middle (``admin…info``), the cut chosen so that no two rows read
the same. Rows stay keyed, and the ``/`` filter matches, by the full name.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
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
COMPACT = {"ready": 5, "rps": 6, "err": 6, "p95": 7, "rst": 3}
"""Column widths when the pane is too narrow for :data:`FIXED` and a 10-cell name (an 80-column
terminal): every column still fits (values such as ``↑36.7``, ``100%``, ``↑433ms``, ``12``)."""
HEADERS = {"ready": " READY", "rps": "  REQ/S", "err": "    5XX", "p95": "    P95", "rst": " RST"}
COMPACT_HEADERS = {"ready": "  RDY", "rps": " REQ/S", "err": "   5XX", "p95": "    P95", "rst": "  R"}
MIN_NAME = 10
"""Name cells at least (9 with :data:`COMPACT` columns, so that an 80-column terminal's pane holds every column)."""
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


def shared_affixes(names: Iterable[str]) -> tuple[str, str]:
    """(prefix, suffix) to drop from the app's service names, each "" when there is none.

    The prefix is what every name starts with, cut after its last ``-`` (Train Ticket: ``ts-``);
    the suffix is the longest ending, three characters or more, that more than half of the
    names share (Train Ticket: ``-service``; Online Boutique: ``service``; the Astronomy
    Shop: none). Fewer than three names: nothing is dropped.
    """
    names = list(names)
    if len(names) < 3:
        return "", ""
    common = min(names)
    for n in names:  # the common prefix, character by character (names are not paths)
        while not n.startswith(common):
            common = common[:-1]
    prefix = common[:common.rfind("-") + 1]
    endings = Counter(e for n in names for e in {n[i:] for i in range(max(len(prefix), 1), len(n) - 2)})
    shared = [e for e, count in endings.items() if 2 * count > len(names)]
    return prefix, max(shared, key=len, default="")


def middle_cuts(name: str, width: int) -> list[str]:
    """``name`` cut to ``width`` cells by an ellipsis in the middle, most balanced cut first
    (more head than tail on a tie); ``[name]`` when it fits."""
    if len(name) <= width:
        return [name]
    if width < 3:
        return [name[:max(0, width - 1)] + "…"]
    keep = width - 1
    mid = keep - keep // 2
    heads = sorted(range(1, keep), key=lambda k: (abs(k - mid), -k))
    return [name[:k] + "…" + name[len(name) - (keep - k):] for k in heads]


def short_names(names: Iterable[str], width: int) -> dict[str, str]:
    """Full name -> a name at most ``width`` cells wide, the names told apart (module docstring).

    Shared affixes (:func:`shared_affixes`) are dropped unless that makes two names equal (or
    one empty); then names that fit are kept and the others take the first middle cut
    (:func:`middle_cuts`) no other row uses. Distinct as long as some cut is free: for
    Train Ticket's 65 names at 10 cells and more (tests/test_tui_panes.py).
    """
    names = list(dict.fromkeys(names))
    prefix, suffix = shared_affixes(names)
    stripped: dict[str, str] = {}
    for n in names:
        s = n[len(prefix):] if prefix and len(n) > len(prefix) else n
        if suffix and s.endswith(suffix) and len(s) > len(suffix):
            s = s[:-len(suffix)]
        stripped[n] = s
    seen = Counter(stripped.values())
    for n, s in stripped.items():
        if seen[s] > 1:
            stripped[n] = n[len(prefix):] if prefix else n
    out: dict[str, str] = {}
    used: set[str] = set()
    for n, s in stripped.items():
        if len(s) <= width:
            out[n] = s
            used.add(s)
    for n, s in stripped.items():
        if n in out:
            continue
        cuts = middle_cuts(s, width)
        pick = next((c for c in cuts if c not in used), cuts[0])
        out[n] = pick
        used.add(pick)
    return out


def layout(inner: int, longest_name: int) -> tuple[int, int, bool, bool]:
    """(name width, sparkline width, show status, compact columns) for a table ``inner`` cells
    wide (inside the pane's border and scrollbar). The name column is one cell wider than its
    name (a leading space); the columns add up to at most ``inner`` whenever they can."""
    fixed = sum(FIXED.values())
    if inner - fixed - 1 < min(longest_name, MIN_NAME):
        compact = sum(COMPACT.values())
        return max(MIN_NAME - 1, min(longest_name, inner - compact - 1)), 0, False, True
    status = inner - fixed - longest_name - 2 * 8 >= STATUS_W
    avail = inner - fixed - (STATUS_W if status else 0) - 1
    name = min(longest_name, max(12, avail - 2 * (MIN_SPARK + 1)))
    spark = (avail - name) // 2 - 1
    if spark < MIN_SPARK:
        return min(longest_name, max(MIN_NAME, avail)), 0, status, False
    return name, min(MAX_SPARK, spark), status, False


class HealthPane(Pane):
    """See module docstring."""

    PANE_ID = "health"
    TITLE = "Service health"

    def __init__(self, number: int, **kwargs: Any) -> None:
        super().__init__(number, **kwargs)
        self.name_width = 22
        self.spark_width = 8
        self.show_status = False
        self.compact = False
        """Narrow columns (:data:`COMPACT`), chosen by :func:`layout`."""
        self._longest = 22
        self._inner = 60
        self._names: tuple[str, ...] = ()
        self._short: dict[str, str] = {}
        self._short_key: tuple[tuple[str, ...], int] | None = None
        self.affixes: tuple[str, str] = ("", "")
        """The (prefix, suffix) dropped from the names shown (:func:`shared_affixes`)."""

    def compose(self) -> ComposeResult:
        yield KeyedTable(self._columns(), id="health-table", cell_padding=0)

    @property
    def widths(self) -> dict[str, int]:
        """Widths of the value columns (:data:`FIXED` or :data:`COMPACT`)."""
        return COMPACT if self.compact else FIXED

    def _columns(self) -> list[tuple[str, str, int | None]]:
        w, head = (COMPACT, COMPACT_HEADERS) if self.compact else (FIXED, HEADERS)
        cols: list[tuple[str, str, int | None]] = [("service", " SERVICE", self.name_width + 1),
                                                   ("ready", head["ready"], w["ready"])]
        if self.show_status:
            cols.append(("status", " STATUS", STATUS_W))
        spark = self.spark_width + 1 if self.spark_width else 0
        cols += [("rps", head["rps"], w["rps"]), ("err", head["err"], w["err"] + spark),
                 ("p95", head["p95"], w["p95"] + spark), ("rst", head["rst"], w["rst"])]
        return cols

    @property
    def table(self) -> KeyedTable:
        return self.query_one(KeyedTable)

    def _relayout(self) -> None:
        name, spark, status, compact = layout(self._inner, self._longest)
        if (name, spark, status, compact) != (self.name_width, self.spark_width, self.show_status, self.compact):
            self.name_width, self.spark_width, self.show_status, self.compact = name, spark, status, compact
            self.table.set_columns(self._columns())
            self._last_key = None

    def on_resize(self, event: Resize) -> None:
        # the event gives the pane's outer width: less the border and the table's scrollbar
        # (the table's own columns used to overflow it by two cells, and the horizontal
        # scrollbar that brought took a row)
        self._inner = max(20, event.size.width - self.styles.gutter.width - 1)
        self._relayout()

    def key(self, ctx: ViewContext) -> Any:
        return (id(ctx.model), ctx.model.revisions["health"], ctx.needle, self.spark_width, self.show_status,
                self.name_width, self.compact)

    def cells(self, s: ServiceView, sample: int) -> tuple[Any, ...]:
        """One service's row."""
        row_style = STATE_STYLE[s.state]
        w = self.spark_width
        fixed = self.widths

        def val(text: str, metric: str, width: int) -> Text:
            style = f"{row_style} bold reverse".strip() if s.fresh(metric, sample) else row_style
            return Text(text.rjust(width), style=style)

        def with_spark(value: Text, values: tuple[float | None, ...], style: str, floor_hi: float) -> Text:
            if not w:
                return value
            return Text.assemble(value, " ", (sparkline(values, w, floor_hi=floor_hi), style))

        name = self._short.get(s.service) or middle_cuts(s.service, self.name_width)[0]
        cells: list[Any] = [Text(" " + name, style=row_style or "bold"),
                            val(f"{s.ready}/{s.desired}", "ready", fixed["ready"])]
        if self.show_status:
            cells.append(val(" " + s.status[: STATUS_W - 1], "status", 0))
        cells += [val(f"{_arrow(s.rps, s.rps_hist)}{fmt_rps(s.rps)}", "rps", fixed["rps"]),
                  with_spark(val(f"{_arrow(s.error_share, s.err_hist)}{fmt_share(s.error_share)}", "error_share",
                                 fixed["err"]), s.err_hist, "red" if s.error_share >= 0.01 else "green", 0.1),
                  with_spark(val(f"{_arrow(s.p95_ms, s.p95_hist)}{fmt_ms(s.p95_ms)}", "p95_ms", fixed["p95"]),
                             s.p95_hist, "magenta", 100.0),
                  val(str(s.restarts), "restarts", fixed["rst"])]
        return tuple(cells)

    def render_view(self, ctx: ViewContext) -> None:
        model = ctx.model
        names = tuple(model.services)
        if names and names != self._names:
            self._names = names
            self.affixes = shared_affixes(names)
            longest = max(len(x) for x in short_names(names, 10_000).values())
            prefix, suffix = self.affixes
            dropped = f"{prefix}…{suffix}" if prefix or suffix else ""
            self.border_title = f"[{self.number}] {self.TITLE}" + (f" · {dropped}" if dropped else "")
            if longest != self._longest:
                self._longest = longest
                self._relayout()
        if self._short_key != (names, self.name_width):
            self._short_key = (names, self.name_width)
            self._short = short_names(names, self.name_width)
        order = {name: i for i, name in enumerate(model.services)}
        services = sorted(model.services.values(), key=lambda s: (STATE_RANK[s.state], order[s.service]))
        rows = []
        needle = ctx.needle.lower()
        for s in services:
            cells = self.cells(s, model.samples)
            if matches(cells, needle) or needle in s.service.lower():
                rows.append((s.service, cells))
        self.table.sync(rows)
        bad = sum(1 for s in services if s.state != "ok")
        worst = max(model.routes.values(), key=lambda r: r.error_share, default=None)
        route = f" · worst route {worst.route} {fmt_share(worst.error_share)}" if worst else ""
        self.filter_counts = (len(rows), len(services)) if ctx.needle else None
        shown = f"{len(rows)} of {len(services)} services match · " if ctx.needle else ""
        self.set_subtitle(f"{shown}{bad}/{len(services)} unhealthy{route}")

    def selected(self) -> str | None:
        """The service under the cursor (row keys are service names), for the row actions and form defaults."""
        return self.table.cursor_key()
