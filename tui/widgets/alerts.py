"""The alerts pane: firing and pending alerts grouped by the operator's incidents.

Each incident the operator reported is a header row (id, open or resolved, title, root
cause when reported) followed by its alerts in any state (ended ones dimmed); then the
active alerts no incident claims, under "unassigned". Resolved incidents stay for
:data:`~tui.model.RECENT_INCIDENT_S`. Firing is red, pending yellow.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult

from tui.model import RECENT_INCIDENT_S, AlertView, IncidentView, RunModel, fmt_clock
from tui.widgets.pane import Pane, ViewContext
from tui.widgets.table import KeyedTable, matches

STATE_STYLE = {"firing": "bold red", "pending": "yellow", "resolved": "dim", "inactive": "dim"}
UNASSIGNED = "unassigned"
MAX_FREE = 40
"""Alerts listed under "unassigned" at most (firing first); the group's header counts them all."""
MAX_MEMBERS = 12
"""Alerts listed under one incident at most (active first)."""


def alert_target(a: AlertView) -> str:
    """What the alert names: its workload, else the handler or pod label."""
    return a.workload or a.labels.get("handler") or a.labels.get("pod") or a.labels.get("service") or "-"


def alert_cells(a: AlertView, now: float, last: bool = False) -> tuple[Any, ...]:
    """An alert row under its group (``last``: the group's last row)."""
    style = STATE_STYLE.get(a.state, "")
    since = fmt_clock(now - a.active_at) if a.active else fmt_clock(a.ended_at)
    detail = " ".join(x for x in (a.labels.get("handler"), a.labels.get("reason"), a.summary) if x)
    what = Text.assemble((a.rule + " ", style if a.active else "dim"), (alert_target(a), "" if a.active else "dim"))
    return (Text.assemble(("└ " if last else "├ ", "dim"), (a.id, style)), Text(a.state, style=style), what,
            Text(since, style="dim" if not a.active else ""), Text(detail, style="dim"))


def incident_cells(inc: IncidentView, model: RunModel) -> tuple[Any, ...]:
    resolved = inc.resolved_at is not None
    style = "dim" if resolved else "bold"
    live = sum(1 for aid in inc.alerts if (a := model.alerts.get(aid)) is not None and a.active)
    state = Text("resolved" if resolved else "open", style="dim" if resolved else "bold cyan")
    if inc.rca:
        rca = Text(f"RCA {inc.rca['service']} · {inc.rca['category']} · {inc.rca['artifact']}", style="green")
    else:
        rca = Text("no RCA yet", style="dim italic")
    title = Text.assemble((inc.title, style), (f"  {live}/{len(inc.alerts)} live", "dim"))
    return (Text(f"▾ {inc.id}", style=style), state, title, Text(fmt_clock(inc.t), style="dim"), rca)


def grouped_rows(model: RunModel, now: float, needle: str = "") -> list[tuple[str, tuple[Any, ...]]]:
    """Rows of the pane (module docstring), keyed ``inc:<id>``, ``<incident>:<alert>`` and ``un:<alert>``.

    A group is kept when its header or any of its alerts matches ``needle``.
    """
    rows: list[tuple[str, tuple[Any, ...]]] = []
    claimed: set[str] = set()
    for inc in model.incidents.values():
        claimed.update(inc.alerts)
        if inc.resolved_at is not None and now - inc.resolved_at > RECENT_INCIDENT_S:
            continue
        head = incident_cells(inc, model)
        members = [a for aid in inc.alerts if (a := model.alerts.get(aid)) is not None]
        if len(members) > MAX_MEMBERS:
            members = sorted(members, key=lambda a: not a.active)[:MAX_MEMBERS]
        children = [(f"{inc.id}:{a.id}", alert_cells(a, now, i == len(members) - 1)) for i, a in enumerate(members)]
        if inc.resolved_at is not None:
            children = []  # a resolved incident folds to its header
        if needle and not matches(head, needle):
            children = [(k, c) for k, c in children if matches(c, needle)]
            if not children:
                continue
        rows.append((f"inc:{inc.id}", head))
        rows.extend(children)
    free = sorted((model.alerts[a] for a in model.active_alerts if a not in claimed),
                  key=lambda a: (a.state != "firing", a.active_at, a.id))
    total_free = len(free)
    free = free[:MAX_FREE]
    free_rows = [(f"un:{a.id}", alert_cells(a, now, i == len(free) - 1)) for i, a in enumerate(free)]
    free_rows = [(k, c) for k, c in free_rows if matches(c, needle)]
    if free_rows:
        rows.append((f"inc:{UNASSIGNED}", (Text(f"▾ {UNASSIGNED}", style="bold magenta"), Text(""),
                                            Text(f"alerts in no incident  {total_free} live"
                                                 + (f", first {MAX_FREE} shown" if total_free > MAX_FREE else ""),
                                                 style="dim"),
                                            Text(""), Text(""))))
        rows.extend(free_rows)
    return rows


class AlertsPane(Pane):
    """See module docstring."""

    PANE_ID = "alerts"
    TITLE = "Alerts by incident"

    def compose(self) -> ComposeResult:
        yield KeyedTable([("id", "ID", 12), ("state", "STATE", 8), ("alert", "ALERT · TARGET / INCIDENT", None),
                          ("since", "SINCE", 5), ("detail", "DETAIL / ROOT CAUSE", -60)], id="alerts-table")

    @property
    def table(self) -> KeyedTable:
        return self.query_one(KeyedTable)

    def key(self, ctx: ViewContext) -> Any:
        return (id(ctx.model), ctx.model.revisions["alerts"], int(ctx.now) // 5, ctx.needle)

    def render_view(self, ctx: ViewContext) -> None:
        model = ctx.model
        self.table.sync(grouped_rows(model, ctx.now, ctx.needle))
        firing = model.firing()
        pending = len(model.active_alerts) - firing
        self.set_subtitle(f"{firing} firing · {pending} pending · {len(model.open_incidents())} open incidents")

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
