"""The alerts pane: firing and pending alerts grouped by the operator's incidents, in
Alertmanager's terms.

Each incident the operator reported is a header row (id, open or resolved, title, root
cause when reported) followed by its alerts in any state (ended ones dimmed); the active
alerts no incident claims are a group of their own, "unassigned". Firing is red, pending
yellow. Groups holding a firing alert come first, then those holding a pending one, then
quiet ones; open incidents before resolved ones, the newest first, "unassigned" leading its
tier, its firing alerts first and the newest first -- so what burns is at the top of a
marathon's pane, not under old resolved incidents.

Columns, one meaning each (as Alertmanager's ``startsAt`` / ``updatedAt``):

* ``ACTIVE``: the run time (``m:ss`` of the run clock, not an age) the alert became
  active (pending, or firing at once); for an incident row, when it was reported.
* ``CHANGED``: the run time of the alert's latest state change: when it went pending,
  when it fired, or when it resolved (the ``STATE`` column says which); for an incident row,
  its latest report (reported, root cause, resolved).

No active alert is ever out of reach (the pane's subtitle counts exactly the active alerts
one can scroll to): a resolved incident folds to its header *and the alerts still active
under it*, marked ``!`` in the tree column, however long ago it was resolved; a resolved
incident with no active alert stays listed for :data:`~tui.model.RECENT_INCIDENT_S`; only
ended alerts are capped (:data:`MAX_MEMBERS`). The simulator's alert history has no
silences or inhibitions, so "active" here is what Alertmanager would call unsilenced.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.events import Resize

from tui.model import RECENT_INCIDENT_S, AlertView, IncidentView, RunModel, fmt_clock
from tui.widgets.pane import Pane, ViewContext
from tui.widgets.table import KeyedTable, matches

STATE_STYLE = {"firing": "bold red", "pending": "yellow", "resolved": "dim", "inactive": "dim"}
UNASSIGNED = "unassigned"
MAX_MEMBERS = 12
"""Rows listed under one incident at most, counting its active alerts first: active alerts
are always listed (module docstring), only ended ones are left out beyond this."""
KEY_LABELS = ("handler", "route", "service", "deployment", "pod", "container", "reason", "severity")
"""Labels that tell two alerts of one rule apart, in the order pickers and the detail column show them
(``namespace``, ``job``, ``uid`` and ``alertname`` say nothing a reader needs)."""
STILL_ACTIVE = "!"
"""Tree-column marker of an alert still active under a resolved incident."""
MIN_NAME_W = 16
"""Cells the ALERTNAME column keeps: on a narrower pane (an 80-column terminal) the two time
columns move out of the sharing and run off the right edge with the detail (left/right scroll)."""


def columns(narrow: bool = False) -> list[tuple[str, str, int | None]]:
    """The table's columns (module docstring); ``narrow``: the time columns run off the right edge."""
    t = -1 if narrow else 1
    return [("id", " ID", 11), ("state", " STATE", 9), ("alert", " ALERTNAME · TARGET / INCIDENT", None),
            ("since", " ACTIVE", 8 * t), ("change", " CHANGED", 8 * t),
            ("detail", " LABELS · SUMMARY / ROOT CAUSE", -61)]


def alert_target(a: AlertView) -> str:
    """What the alert names: its workload, else the handler or pod label."""
    return a.workload or a.labels.get("handler") or a.labels.get("pod") or a.labels.get("service") or "-"


def last_change(a: AlertView) -> float:
    """Run time (s) of the alert's latest state change: resolved, else fired, else went pending."""
    if a.ended_at is not None and not a.active:
        return a.ended_at
    if a.state == "firing" and a.fired_at is not None:
        return a.fired_at
    return a.active_at


def key_labels(a: AlertView) -> list[str]:
    """``name=value`` of the :data:`KEY_LABELS` the alert has, except one that repeats its target."""
    target = alert_target(a)
    return [f"{k}={v}" for k in KEY_LABELS if (v := a.labels.get(k)) and (v != target or k == "handler")]


def alert_choice_label(a: AlertView, model: RunModel) -> str:
    """One line naming alert ``a`` in a picker: id, state, rule, target, route, key labels,
    when it became active and the incidents that hold it.

    Two alerts of one rule on one service differ in their route (``handler``), pod or
    reason label, or else in their id and active time, so no two lines read the same.
    Example: ``A-12 firing EndpointErrorRate ts-ui-dashboard · route POST /api/v1/x ·
    severity=critical · active 3:10 · in INC-0002``.
    """
    parts = [f"{a.id} {a.state} {a.rule} {alert_target(a)}"]
    route = a.labels.get("handler") or a.labels.get("route")
    if route:
        parts.append(f"route {route}")
    parts += [x for x in key_labels(a) if not x.startswith(("handler=", "route="))]
    parts.append(f"active {fmt_clock(a.active_at)}")
    held = [i for i in a.incidents if i in model.incidents]
    if held:
        parts.append("in " + ", ".join(held))
    return " · ".join(parts)


def _lead(*cells: Text) -> tuple[Text, ...]:
    """Cells with a leading space: the table has no cell padding, so that the alert name gets
    the room two cells of padding per column would take (each column is one cell wider)."""
    return tuple(Text.assemble(" ", c) for c in cells)


def alert_cells(a: AlertView, now: float, last: bool = False, marker: str = "") -> tuple[Any, ...]:
    """An alert row under its group (``last``: the group's last row; ``marker``: :data:`STILL_ACTIVE` or "")."""
    style = STATE_STYLE.get(a.state, "")
    detail = " ".join(x for x in (*(x.split("=", 1)[1] for x in key_labels(a) if not x.startswith("severity=")),
                                  a.summary) if x)
    if marker:
        detail = "still active, incident resolved · " + detail
    what = Text.assemble((a.rule + " ", style if a.active else "dim"), (alert_target(a), "" if a.active else "dim"))
    tree = ("└" if last else "├") + (marker or " ")
    return _lead(Text.assemble((tree, "bold red" if marker else "dim"), (a.id, style)), Text(a.state, style=style),
                 what, Text(fmt_clock(a.active_at), style="" if a.active else "dim"),
                 Text(fmt_clock(last_change(a)), style="" if a.active else "dim"), Text(detail, style="dim"))


def incident_cells(inc: IncidentView, model: RunModel) -> tuple[Any, ...]:
    resolved = inc.resolved_at is not None
    style = "dim" if resolved else "bold"
    live = sum(1 for aid in inc.alerts if (a := model.alerts.get(aid)) is not None and a.active)
    state = Text("resolved" if resolved else "open", style="dim" if resolved else "bold cyan")
    if inc.rca:
        rca = Text(f"RCA {inc.rca['service']} · {inc.rca['category']} · {inc.rca['artifact']}", style="green")
    else:
        rca = Text("no RCA yet", style="dim italic")
    note = f"  {live}/{len(inc.alerts)} live" + (f", {live} still active" if resolved and live else "")
    title = Text.assemble((inc.title, style), (note, "bold red" if resolved and live else "dim"))
    changed = inc.resolved_at if resolved else inc.t_rca if inc.t_rca is not None else inc.t
    return _lead(Text(f"▾ {inc.id}", style=style), state, title, Text(fmt_clock(inc.t), style="dim"),
                 Text(fmt_clock(changed), style="dim"), rca)


def _urgency(members: list[AlertView], resolved: bool, t: float) -> tuple[int, int, float]:
    """Where a group goes: groups with firing alerts first, then with pending ones, then quiet ones;
    open incidents before resolved ones; the newest first (the unassigned alerts, ``t`` infinite, lead
    their tier: they are the ones nobody works on yet)."""
    tier = 0 if any(a.state == "firing" for a in members) else 1 if any(a.active for a in members) else 2
    return (tier, int(resolved), -t)


def grouped_rows(model: RunModel, now: float, needle: str = "") -> list[tuple[str, tuple[Any, ...]]]:
    """Rows of the pane (module docstring), keyed ``inc:<id>``, ``<incident>:<alert>`` and ``un:<alert>``.

    A group is kept when its header or any of its alerts matches ``needle``. Every active
    alert of the model is on some row when ``needle`` is empty.
    """
    groups: list[tuple[tuple[int, int, float], list[tuple[str, tuple[Any, ...]]]]] = []
    claimed: set[str] = set()
    for inc in model.incidents.values():
        claimed.update(inc.alerts)
        members = [a for aid in inc.alerts if (a := model.alerts.get(aid)) is not None]
        resolved = inc.resolved_at is not None
        marker = ""
        if resolved:
            members = [a for a in members if a.active]  # folds to its header and the alerts still active
            marker = STILL_ACTIVE
            if not members and inc.resolved_at is not None and now - inc.resolved_at > RECENT_INCIDENT_S:
                continue
        elif len(members) > MAX_MEMBERS:
            active = [a for a in members if a.active]
            members = active + [a for a in members if not a.active][:max(0, MAX_MEMBERS - len(active))]
        head = incident_cells(inc, model)
        children = [(f"{inc.id}:{a.id}", alert_cells(a, now, i == len(members) - 1, marker))
                    for i, a in enumerate(members)]
        if needle and not matches(head, needle):
            children = [(k, c) for k, c in children if matches(c, needle)]
            if not children:
                continue
        groups.append((_urgency(members, resolved, inc.t), [(f"inc:{inc.id}", head), *children]))
    free = sorted((model.alerts[a] for a in model.active_alerts if a not in claimed),
                  key=lambda a: (a.state != "firing", -a.active_at, a.id))  # firing first, newest first
    total_free = len(free)
    free_rows = [(f"un:{a.id}", alert_cells(a, now, i == len(free) - 1)) for i, a in enumerate(free)]
    free_rows = [(k, c) for k, c in free_rows if matches(c, needle)]
    if free_rows:
        head = (f"inc:{UNASSIGNED}", _lead(Text(f"▾ {UNASSIGNED}", style="bold magenta"), Text(""),
                                           Text(f"alerts in no incident  {total_free} live", style="dim"),
                                           Text(""), Text(""), Text("")))
        groups.append((_urgency(free, False, float("inf")), [head, *free_rows]))
    groups.sort(key=lambda g: g[0])
    rows = [row for _, group in groups for row in group]
    return rows


def alert_ids(rows: list[tuple[str, tuple[Any, ...]]]) -> set[str]:
    """The alert ids on ``rows`` of :func:`grouped_rows` (an alert in two incidents counts once)."""
    return {key.partition(":")[2] for key, _ in rows if not key.startswith("inc:")}


class AlertsPane(Pane):
    """See module docstring."""

    PANE_ID = "alerts"
    TITLE = "Alerts by incident"

    def compose(self) -> ComposeResult:
        yield KeyedTable(columns(), id="alerts-table", cell_padding=0)

    def on_resize(self, event: Resize) -> None:
        inner = event.size.width - self.styles.gutter.width - 1  # the event gives the outer width
        narrow = inner - sum(w for _, _, w in columns() if w is not None and w > 0) < MIN_NAME_W
        if columns(narrow) != self.table.column_spec:
            self.table.set_columns(columns(narrow))
            self._last_key = None  # set_columns dropped the rows: the next cycle lists them again

    @property
    def table(self) -> KeyedTable:
        return self.query_one(KeyedTable)

    def key(self, ctx: ViewContext) -> Any:
        return (id(ctx.model), ctx.model.revisions["alerts"], int(ctx.now) // 5, ctx.needle)

    def render_view(self, ctx: ViewContext) -> None:
        model = ctx.model
        rows = grouped_rows(model, ctx.now, ctx.needle)
        self.table.sync(rows)
        firing = model.firing()
        pending = len(model.active_alerts) - firing
        counts = f"{firing} firing · {pending} pending · {len(model.open_incidents())} open incidents"
        if ctx.needle:
            shown, total = len(alert_ids(rows)), len(alert_ids(grouped_rows(model, ctx.now)))
            self.filter_counts = (shown, total)
            self.set_subtitle(f"{shown} of {total} alerts match · {counts}")
        else:
            self.filter_counts = None
            self.set_subtitle(counts)

    def selected(self, model: RunModel) -> tuple[str | None, str | None]:
        """(alert id, incident id) under the cursor, for context-aware tool defaults."""
        key = self.table.cursor_key()
        if key is None:
            return None, None
        if key.startswith("inc:"):
            inc = key[4:]
            return None, inc if inc in model.incidents else None
        group, _, aid = key.partition(":")
        return aid, group if group in model.incidents else None
