"""Dialogs: tool forms, the confirmation of an act, help, jump, seek.

* :class:`ToolForm` is built from a tool's typed arguments (:data:`engine.operate.tools.TOOLS`):
  choices become selects, the alerts of an incident a checklist (each alert with its rule,
  target, route/handler and severity, so two never read the same), services and incidents
  pick lists (open incidents first, resolved ones marked), pods and change ids a picker
  over what the run has shown (pods seen in tool output and alert labels, the deploys of
  the change history) next to a line to type one, the revision of a rollback a picker over
  that deployment's deploys, diffs and notes text areas. It validates with the tool's own
  pydantic model before anything is sent, so the form and the agents' JSON Schema never
  disagree.

  Defaults come from the row the player is on (:class:`FormContext`, filled by the play
  screen), and every prefilled value says where it came from (``service: paymentservice
  ← health row``). A read tool is never narrowed behind the player's back: a filter the
  context suggests (``get_alerts --service``, ``kubectl_get --name``, ...) is shown but not
  applied until ``ctrl+f`` applies it (``ctrl+f`` again clears it).

  Keys: ``enter`` submits from any field except a multi-line text area (there ``ctrl+s``
  does; ``ctrl+s`` works everywhere), ``esc`` cancels; the line above the buttons says so,
  and the buttons are docked at the bottom of the dialog so they are never below the fold.
  A closed select does not open on ``enter`` -- it submits the form like every other field,
  so ``enter`` always means one thing; ``space`` (or ``down``) opens a select, ``enter``
  picks in an open one. ``space`` toggles an alert or a checkbox. The form is a snapshot of
  the context when it opened: the live refresh beneath it never rebuilds its widgets, so
  keys typed at key-repeat speed all land.
* :class:`ConfirmCall` shows the exact call an act tool will make and starts on Cancel
  (k9s' delete dialog; lazygit: confirm what is hard to reverse).
* :class:`QueryPrompt` is the PromQL prompt of ``query_metrics``: a query line, and a range
  (blank: an instant query now) and step, as a dashboard's query editor asks for them.
* :class:`HelpScreen` lists every key of the screen beneath with its binding id (for
  remapping); :class:`JumpScreen` is the ``:`` prompt; :class:`SeekScreen` asks for a
  run time.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Union, get_args, get_origin

from pydantic import ValidationError
from pydantic.fields import FieldInfo
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.suggester import SuggestFromList
from textual.widget import Widget
from textual.widgets import (
    Button,
    Checkbox,
    DataTable,
    Input,
    Label,
    OptionList,
    Select,
    SelectionList,
    Static,
    TextArea,
)
from textual.widgets.option_list import Option
from textual.widgets.selection_list import Selection

from engine.operate.tools import TOOLS
from tui.model import fmt_clock, parse_clock
from tui.widgets.output import call_text

NEEDS_CONFIRMATION = {name for name, spec in TOOLS.items() if spec.tier == "act"} | {"resolve_incident"}
"""Calls that are hard to reverse: every act, and declaring an incident resolved (premature
declarations are counted against the operator)."""

READ_FILTERS: dict[str, tuple[str, ...]] = {
    "get_alerts": ("service", "alertname", "since_s"),
    "kubectl_get": ("name", "selector"),
    "get_deploy_history": ("service",),
}
"""Arguments that narrow what a read tool returns: the context may suggest them, never apply them
(module docstring)."""

PICKED = ("pod", "artifact", "revision")
"""Typed arguments that also get a picker over what the run has shown (the picker fills the line)."""

CATEGORY_OF_CHANGE = {"code": "code-bug", "config": "configuration", "config-key": "configuration",
                      "flag": "configuration", "probe": "configuration"}
"""The RCA category a change's kind suggests (a suggestion shown as such; the player picks)."""


@dataclass(frozen=True)
class ChangeOption:
    """A deployed change the pickers offer (from ``change.deploy`` events: the deploy history).

    Attributes:
        change: the change id (``chg-0001``).
        service: the service it deployed.
        kind: ``code``, ``config``, ``probe``, ...
        revision: the deployment revision it made, when known.
        t: run time of the deploy, seconds.
        summary: its commit subject or description.
        remedy: a rollback, a revert or the player's own change: listed, never suggested as a root cause.
    """

    change: str
    service: str
    kind: str
    revision: int | None
    t: float
    summary: str
    remedy: bool = False

    def label(self) -> str:
        rev = f"rev {self.revision}" if self.revision is not None else "rev ?"
        text = f"{self.change} · {self.service} {rev} · {self.kind} · {fmt_clock(self.t)} · {self.summary}"
        return text if len(text) <= 80 else text[:79] + "…"


@dataclass
class FormContext:
    """What a tool form offers to pick from, and its defaults.

    Attributes:
        services: the application's services (pick lists for service/deployment).
        incidents: (id, label) of the operator's incidents, open ones first.
        alerts: (id, label) of alerts to group into an incident, newest first.
        alert_titles: alert id -> (rule, target), for the suggested incident title.
        pods: pod names seen so far (pod picker and suggestions).
        pod_sources: pod -> where it was seen (``alert A-7``, ``tool output``).
        artifacts: change ids, images and keys seen so far (suggestions for an RCA).
        changes: the deploys of the run, newest first (change-id and revision pickers).
        defaults: field name -> value to start with (e.g. the service under the cursor);
            for ``alerts``, the ids to start selected.
        sources: field name -> where its default came from (shown next to the field).
        suggested: read-tool filter -> value the context suggests but does not apply
            (:data:`READ_FILTERS`; ``ctrl+f`` applies them).
        origin: the row the defaults come from, as the form's title line names it
            (``health row paymentservice``), or "" when none.
    """

    services: list[str] = field(default_factory=list)
    incidents: list[tuple[str, str]] = field(default_factory=list)
    alerts: list[tuple[str, str]] = field(default_factory=list)
    alert_titles: dict[str, tuple[str, str]] = field(default_factory=dict)
    pods: list[str] = field(default_factory=list)
    pod_sources: dict[str, str] = field(default_factory=dict)
    artifacts: list[str] = field(default_factory=list)
    changes: list[ChangeOption] = field(default_factory=list)
    defaults: dict[str, Any] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    suggested: dict[str, Any] = field(default_factory=dict)
    origin: str = ""


class Checklist(SelectionList[str]):
    """A :class:`~textual.widgets.SelectionList` whose toggles land on the option each key was
    pressed on.

    Textual 8.2.8's SelectionList toggles the option highlighted when its ``OptionSelected``
    message is *handled*, not the one it was posted for. Keys that reach the app in one read
    (a burst of ``down space down space``: fast typing, key repeat, a laggy ssh link) move the
    highlight through every row before the first message is handled, so all the toggles fall
    on the last row and cancel out in pairs. Here each message toggles its own ``option_index``.
    """

    def _on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        event.prevent_default()  # the base class would toggle the highlighted option again
        self.toggle(self.get_option_at_index(event.option_index))


def field_kind(name: str, info: FieldInfo) -> tuple[str, tuple[Any, ...]]:
    """How a tool argument is edited: (kind, choices).

    Kinds: ``choice`` (a Literal), ``bool``, ``int``, ``float``, ``alerts`` (a list of alert
    ids), ``selector`` (a dict), ``service``, ``incident``, ``text`` (multi-line), ``str``.
    """
    ann = info.annotation
    if get_origin(ann) in (Union, types.UnionType):
        inner = [a for a in get_args(ann) if a is not type(None)]
        ann = inner[0] if len(inner) == 1 else ann
    if get_origin(ann) is Literal:
        return "choice", get_args(ann)
    if ann is bool:
        return "bool", ()
    if ann is int:
        return "int", ()
    if ann is float:
        return "float", ()
    if get_origin(ann) is list:
        return "alerts", ()
    if get_origin(ann) is dict:
        return "selector", ()
    if name in ("service", "deployment"):
        return "service", ()
    if name == "incident":
        return "incident", ()
    if name in ("diff", "text"):
        return "text", ()
    return "str", ()


def _parse_selector(text: str) -> dict[str, str]:
    out = {}
    for part in text.split(","):
        if part.strip():
            k, sep, v = part.partition("=")
            if not sep:
                raise ValueError(f"selector: {part.strip()!r} is not key=value")
            out[k.strip()] = v.strip()
    return out


def _show(value: Any) -> str:
    if isinstance(value, dict):
        return ",".join(f"{k}={v}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return str(value)


class ToolForm(ModalScreen[dict[str, Any] | None]):
    """A form for one tool's arguments (module docstring); dismisses with the arguments or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="form-cancel"),
        Binding("ctrl+s", "submit", "Submit", id="form-submit"),
        Binding("enter", "submit_enter", "Submit", show=False, priority=True, id="form-submit-enter"),
        Binding("ctrl+f", "toggle_filters", "Apply/clear suggested filters", id="form-filters"),
    ]

    def __init__(self, tool: str, ctx: FormContext) -> None:
        super().__init__(classes="dialog-screen")
        self.tool = tool
        self.spec = TOOLS[tool]
        self.ctx = ctx
        self.fields = self.spec.args.model_fields
        self.filters_applied = False
        self._suggested_title: str | None = None
        self._auto: dict[str, Any] = {}
        """Field -> the value the form filled in itself (replaced when what it follows changes)."""

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes=f"tier-{self.spec.tier} form"):
            yield Label(Text.assemble((f" {self.spec.tier.upper()} ", "bold reverse"), " ", (self.tool, "bold")),
                        id="dialog-title")
            yield Static(self.spec.description, id="dialog-help")
            if self.ctx.origin:
                yield Static(Text.assemble(("on ", "dim"), (self.ctx.origin, "bold cyan")), id="form-origin")
            with VerticalScroll(id="form-fields"):
                for name, info in self.fields.items():
                    req = "" if not info.is_required() else " *"
                    desc = f"   {info.description}" if info.description else ""
                    yield Label(Text.assemble((name + req, "bold"), (desc, "dim")), classes="field-label")
                    if name in PICKED and (picker := self._picker(name)) is not None:
                        yield picker
                    yield self._widget(name, info)
                    source = self.source_text(name)
                    yield Static(source, id=f"source-{name}",
                                 classes="field-source" + ("" if source.plain else " -empty"))
            # after the fields in the focus order, docked at the bottom so the buttons are never below the fold
            with Vertical(id="dialog-foot"):
                yield Static("", id="form-error")
                with Horizontal(id="dialog-buttons"):
                    yield Static(self.keys_hint(), id="form-keys")
                    yield Button("Cancel", id="cancel")
                    label = "Review call..." if self.tool in NEEDS_CONFIRMATION else "Run"
                    yield Button(label, id="submit", variant="primary")

    def keys_hint(self) -> Text:
        """The submit and cancel keys, as the form shows them above its buttons."""
        kinds = {field_kind(n, i)[0] for n, i in self.fields.items()}
        text = "enter submit (ctrl+s in a text area)" if "text" in kinds else "enter submit"
        parts = [(text, "bold"), (" · esc cancel · space opens", "dim")]
        if self.ctx.suggested:
            parts.append((" · ctrl+f filter", "bold yellow"))
        return Text.assemble(*parts)

    def source_text(self, name: str) -> Text:
        """Where ``name``'s value came from, or the filter it could get (empty when neither)."""
        if name in self.ctx.suggested:
            value = _show(self.ctx.suggested[name])
            src = self.ctx.sources.get(name, "context")
            if self.filters_applied:
                return Text.assemble(("filter applied: ", "bold yellow"), f"{name}={value}  ← {src}",
                                     (" (ctrl+f clears)", "dim"))
            return Text.assemble(("not filtered: ", "dim"), f"{name}={value} suggested ← {src}",
                                 (" (ctrl+f applies)", "dim"))
        if name in self.ctx.sources and name in self.ctx.defaults:
            return Text.assemble((f"{name}: {_show(self.ctx.defaults[name])}", "cyan"),
                                 (f"  ← {self.ctx.sources[name]}", "dim cyan"))
        return Text("")

    def _picker(self, name: str) -> Select[Any] | None:
        """The picker above a typed field (:data:`PICKED`), or None when there is nothing to pick."""
        default = self.ctx.defaults.get(name)
        if name == "pod":
            service = self.ctx.defaults.get("service") or self.ctx.defaults.get("deployment")
            pods = sorted(self.ctx.pods, key=lambda p: (not (service and p.startswith(f"{service}-")), p))
            if not pods:
                return None
            options = [(f"{p}  ({self.ctx.pod_sources.get(p, 'seen')})", p) for p in pods]
            return Select(options, value=default if default in pods else Select.NULL, id=f"pick-{name}", compact=True,
                          type_to_search=True, prompt="pick a pod (or type one below)")
        if name == "artifact":
            if not self.ctx.changes:
                return None
            ids = [c.change for c in self.ctx.changes]
            return Select([(c.label(), c.change) for c in self.ctx.changes],
                          value=default if default in ids else Select.NULL, id=f"pick-{name}", compact=True,
                          type_to_search=True,
                          prompt="pick a deployed change (or type an artifact below)")
        if name == "revision":
            deployment = self.ctx.defaults.get("deployment")
            revisions = self.revision_options(deployment)
            return Select(revisions, value=default if default in [v for _, v in revisions] else Select.NULL,
                          id=f"pick-{name}", compact=True, prompt="the previous revision (default), or pick one")
        return None

    def revision_options(self, deployment: str | None) -> list[tuple[str, int]]:
        """(label, revision) of ``deployment``'s known revisions, newest first: one per deploy, and the
        revision before the first one."""
        mine = sorted((c for c in self.ctx.changes if c.service == deployment and c.revision is not None),
                      key=lambda c: -(c.revision or 0))
        out = [(f"rev {c.revision} · {c.change} · {c.kind} · {fmt_clock(c.t)} · {c.summary}"[:80], int(c.revision))
               for c in mine if c.revision is not None]
        first = min((c.revision for c in mine if c.revision is not None), default=None)
        if first is not None and first > 1:
            out.append((f"rev {first - 1} · before {mine[-1].change} (the run's start)", first - 1))
        return out

    def _widget(self, name: str, info: FieldInfo) -> Widget:
        kind, choices = field_kind(name, info)
        wid = f"field-{name}"
        default = self.ctx.defaults.get(name, None if info.is_required() else info.default)
        if name in READ_FILTERS.get(self.tool, ()):
            default = None if info.is_required() else info.default  # suggested only (ctrl+f applies)
        if kind == "choice":
            options = [(str(c), c) for c in choices]
            value = default if default in choices else Select.NULL
            return Select(options, value=value, allow_blank=value is Select.NULL or not info.is_required(), id=wid,
                          compact=True)
        if kind == "bool":
            return Checkbox(name, value=bool(default), id=wid)
        if kind in ("int", "float"):
            return Input("" if default is None else str(default), type="integer" if kind == "int" else "number",
                         id=wid, compact=True)
        if kind == "alerts":
            chosen = set(self.ctx.defaults.get("alerts", ()))
            return Checklist(*(Selection(label, aid, aid in chosen) for aid, label in self.ctx.alerts),
                                      id=wid)
        if kind == "selector":
            return Input("" if not default else _show(default), placeholder="key=value,key=value", id=wid,
                         compact=True)
        if kind == "service":
            value = default if default in self.ctx.services else Select.NULL
            return Select([(s, s) for s in self.ctx.services], value=value, id=wid, type_to_search=True,
                          compact=True)
        if kind == "incident":
            ids = [i for i, _ in self.ctx.incidents]
            value = default if default in ids else (ids[0] if ids else Select.NULL)
            return Select([(label, i) for i, label in self.ctx.incidents], value=value, id=wid,
                          compact=True)
        if kind == "text":
            return TextArea(str(default or ""), id=wid, classes="form-text")
        suggestions = self.ctx.pods if name == "pod" else self.ctx.artifacts if name == "artifact" else []
        return Input("" if default is None else str(default), id=wid, compact=True,
                     placeholder="or type one" if name in PICKED else "",
                     suggester=SuggestFromList(suggestions, case_sensitive=False) if suggestions else None)

    def on_mount(self) -> None:
        self._suggest_title()
        for name in ("artifact", "pod", "revision"):
            if name in self.fields and name in self.ctx.defaults:
                self._auto[name] = self.ctx.defaults[name]
        if "category" in self.fields and "category" in self.ctx.defaults:
            self._auto["category"] = self.ctx.defaults["category"]
        if "alerts" in self.fields and self.ctx.defaults.get("alerts"):
            self._auto["alerts"] = list(self.ctx.defaults["alerts"])
        self.first_field().focus()

    def first_field(self) -> Widget:
        """The field the form starts on: the first required one still empty, else the first."""
        values = self._raw_values()
        for name, info in self.fields.items():
            if info.is_required() and values.get(name) in (None, "", []):
                return self.query_one(f"#field-{name}")
        return self.query("#form-fields > *").exclude(".field-label, .field-source").first()

    # ------------------------------------------------------------------ values

    def _raw_values(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in self.fields:
            w = self.query_one(f"#field-{name}")
            if isinstance(w, Select):
                out[name] = None if w.value is Select.NULL else w.value
            elif isinstance(w, Checkbox):
                out[name] = w.value
            elif isinstance(w, SelectionList):
                out[name] = list(w.selected)
            elif isinstance(w, TextArea):
                out[name] = w.text
            else:
                assert isinstance(w, Input)
                out[name] = w.value.strip()
        return out

    def values(self) -> dict[str, Any]:
        """The arguments as typed so far (empty optional fields left out).

        Raises:
            ValueError: a selector that is not ``key=value`` pairs.
        """
        out: dict[str, Any] = {}
        for name, value in self._raw_values().items():
            info = self.fields[name]
            if isinstance(self.query_one(f"#field-{name}"), Input):
                kind, _ = field_kind(name, info)
                if value == "":
                    value = None
                elif kind == "selector":
                    value = _parse_selector(value)
                elif kind == "int":
                    value = int(value)
                elif kind == "float":
                    value = float(value)
            if value is None or (value == "" and not info.is_required()):
                continue
            out[name] = value
        return out

    # ------------------------------------------------------------------ what follows what

    def _suggest_title(self) -> None:
        """Suggest an incident title from the chosen alerts while the title is empty or still suggested."""
        if "title" not in self.fields or "alerts" not in self.fields:
            return
        title = self.query_one("#field-title", Input)
        chosen = [self.ctx.alert_titles[a] for a in self.query_one("#field-alerts", SelectionList).selected
                  if a in self.ctx.alert_titles]
        if chosen and (not title.value or title.value == self._suggested_title):
            rules = sorted({rule for rule, _ in chosen})
            targets = sorted({target for _, target in chosen})
            suggestion = f"{', '.join(rules)} on {', '.join(targets)}"[:200]
            title.value = suggestion
            self._suggested_title = suggestion

    def on_selection_list_selected_changed(self, event: SelectionList.SelectedChanged[str]) -> None:
        self._suggest_title()
        if event.selection_list.id == "field-alerts":
            prefilled = self._auto.get("alerts")
            if prefilled is not None:
                same = sorted(event.selection_list.selected) == sorted(prefilled)
                # the player's own choice: the prefill's note would mislead (back to the prefill: it holds again)
                self._set_source("alerts", self.source_text("alerts") if same else Text(""))

    def _set_auto(self, name: str, value: Any, source: str) -> None:
        """Fill ``name`` with ``value`` if the player has not changed it from what the form filled in."""
        if name not in self.fields:
            return
        w = self.query_one(f"#field-{name}")
        current = self._raw_values()[name]
        if current not in (None, "") and current != self._auto.get(name):
            return  # the player's own value
        if isinstance(w, Select):
            w.value = value if value is not None else Select.NULL
        elif isinstance(w, Input):
            w.value = "" if value is None else str(value)
        self._auto[name] = value
        self._set_source(name, Text.assemble((f"{name}: {_show(value)}", "cyan"), (f"  ← {source}", "dim cyan"))
                         if value is not None else Text(""))

    def _set_source(self, name: str, text: Text) -> None:
        line = self.query_one(f"#source-{name}", Static)
        line.update(text)
        line.set_class(not text.plain, "-empty")

    def on_select_changed(self, event: Select.Changed) -> None:
        sid = event.select.id or ""
        value = None if event.value is Select.NULL else event.value
        if sid.startswith("pick-"):
            # a pick fills the typed line (the value sent is always the line's)
            name = sid.removeprefix("pick-")
            line = self.query_one(f"#field-{name}", Input)
            if value is not None and line.value != str(value):
                line.value = str(value)
                if value != self._auto.get(name):
                    self._set_source(name, Text(""))  # the player's own pick: nothing was prefilled
            return
        if sid in ("field-service", "field-deployment") and value is not None:
            self._follow_service(str(value))

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "field-artifact" and "category" in self.fields:
            change = next((c for c in self.ctx.changes if c.change == event.value.strip()), None)
            if change is not None and change.kind in CATEGORY_OF_CHANGE:
                self._set_auto("category", CATEGORY_OF_CHANGE[change.kind],
                               f"{change.change} is a {change.kind} change (a guess: check it)")

    def _follow_service(self, service: str) -> None:
        """A new service/deployment: its newest change for an RCA, its revisions for a rollback."""
        if "artifact" in self.fields:
            newest = next((c for c in self.ctx.changes if c.service == service and not c.remedy), None)
            if newest is not None:
                self._set_auto("artifact", newest.change,
                               f"{service}'s newest change (rollbacks, reverts, yours skipped)")
        if "revision" in self.fields:
            picker = self.query("#pick-revision")
            if picker:
                select = picker.first(Select)
                options = self.revision_options(service)
                select.set_options(options)
        if "pod" in self.fields:
            picker = self.query("#pick-pod")
            if picker:
                pods = sorted(self.ctx.pods, key=lambda p: (not p.startswith(f"{service}-"), p))
                picker.first(Select).set_options([(f"{p}  ({self.ctx.pod_sources.get(p, 'seen')})", p)
                                                  for p in pods])

    # ------------------------------------------------------------------ actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "submit_enter":
            return self.enter_submits()
        if action == "toggle_filters":
            return bool(self.ctx.suggested)
        return True

    def enter_submits(self) -> bool:
        """Whether ``enter`` submits now: not in a text area (a new line), on a button (it presses it)
        or in an open select (it picks)."""
        w = self.focused
        if w is None:
            return True
        if isinstance(w, TextArea | Button):
            return False
        return not any(isinstance(node, Select) and node.expanded for node in w.ancestors_with_self)

    def action_submit_enter(self) -> None:
        self.action_submit()

    def action_toggle_filters(self) -> None:
        """Apply the filters the context suggests (they are never applied on their own), or clear them."""
        self.filters_applied = not self.filters_applied
        for name, value in self.ctx.suggested.items():
            if name not in self.fields:
                continue
            w = self.query_one(f"#field-{name}")
            if isinstance(w, Select):
                w.value = value if self.filters_applied else Select.NULL
            elif isinstance(w, Input):
                w.value = _show(value) if self.filters_applied else ""
            self._set_source(name, self.source_text(name))

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_submit(self) -> None:
        error = self.query_one("#form-error", Static)
        try:
            args = self.values()
            self.spec.args.model_validate(args)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
                                 for e in exc.errors())
            error.update(Text(problems, style="bold red"))
            return
        except ValueError as exc:
            error.update(Text(str(exc), style="bold red"))
            return
        self.dismiss(args)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "submit":
            self.action_submit()
        else:
            self.action_cancel()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.action_submit()


def parse_duration(text: str) -> float:
    """Seconds of a duration as a dashboard's time picker takes it: ``15m``, ``1h``, ``90s``,
    ``90``, ``1:30`` (see :func:`tui.model.parse_clock`), ``2h30m`` is not taken.

    Raises:
        ValueError: not a duration, or not more than zero.
    """
    raw = text.strip().lower()
    seconds = float(raw[:-1]) * 3600.0 if raw.endswith("h") and raw[:-1].replace(".", "", 1).isdigit() \
        else parse_clock(raw)
    if seconds <= 0:
        raise ValueError(f"not a duration: {text!r} (e.g. 15m, 1h, 90s)")
    return seconds


class QueryPrompt(ModalScreen[dict[str, Any] | None]):
    """The PromQL prompt (module docstring); dismisses with ``query_metrics`` arguments or None.

    Args:
        now: the run time, seconds, when asked (a range ends now: its start is now minus the
            range, read when the prompt is submitted).
        history: queries made before, newest first (offered as completions).
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", id="query-cancel")]

    def __init__(self, now: Callable[[], float], history: Sequence[str] = ()) -> None:
        super().__init__(classes="dialog-screen")
        self.now = now
        self.history = list(history)

    def compose(self) -> ComposeResult:
        spec = TOOLS["query_metrics"]
        with Vertical(id="dialog", classes="tier-read query"):
            yield Label(Text.assemble((" READ ", "bold reverse"), " ", ("query_metrics", "bold"), "  PromQL"),
                        id="dialog-title")
            yield Input(placeholder='sum by (service) (rate(http_requests_total{code=~"5.."}[5m]))',
                        id="query-input", suggester=SuggestFromList(self.history) if self.history else None)
            with Horizontal(id="query-range-row"):
                yield Label("range", classes="query-label")
                yield Input(placeholder="instant (now); or 15m, 1h, 90s", id="query-range")
                yield Label("step", classes="query-label")
                yield Input(placeholder="auto", id="query-step")
            yield Static(Text(spec.description, style="dim"), id="dialog-help")
            yield Static("", id="form-error")

    def on_mount(self) -> None:
        self.query_one("#query-input", Input).focus()

    def values(self) -> dict[str, Any]:
        """The arguments: ``query``, and ``start`` (now minus the range) and ``step`` for a range.

        Raises:
            ValueError: an empty query, a range or step that is not a duration, a step without a range.
        """
        query = self.query_one("#query-input", Input).value.strip()
        if not query:
            raise ValueError("type a PromQL query")
        args: dict[str, Any] = {"query": query}
        span = self.query_one("#query-range", Input).value.strip()
        step = self.query_one("#query-step", Input).value.strip()
        if span:
            args["start"] = round(self.now() - parse_duration(span), 3)
            if step:
                args["step"] = parse_duration(step)
        elif step:
            raise ValueError("a step needs a range (e.g. 15m)")
        return args

    def on_input_submitted(self, event: Input.Submitted) -> None:
        error = self.query_one("#form-error", Static)
        try:
            args = self.values()
            TOOLS["query_metrics"].args.model_validate(args)
        except ValidationError as exc:
            error.update(Text("; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()),
                              style="bold red"))
            return
        except ValueError as exc:
            error.update(Text(str(exc), style="bold red"))
            return
        self.dismiss(args)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmCall(ModalScreen[bool]):
    """Confirm a call that is hard to reverse: shows it exactly; Cancel has the focus.

    Args:
        title: what is asked (``Run this act call?``).
        call: the exact call (``rollback {"deployment": ...}``), or any text to confirm.
        detail: a line under it (what the policy will check, what happens).
        confirm_label: the label of the button that goes ahead.
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", id="confirm-cancel"),
                Binding("left,right,tab", "switch", "Switch button", show=False, id="confirm-switch")]

    def __init__(self, title: str, call: str, detail: str = "", confirm_label: str = "Run") -> None:
        super().__init__(classes="dialog-screen")
        self.title_text = title
        self.call = call
        self.detail = detail
        self.confirm_label = confirm_label

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="confirm"):
            yield Label(Text(self.title_text, style="bold"), id="dialog-title")
            yield Static(Text(self.call, style="bold yellow"), id="confirm-call")
            if self.detail:
                yield Static(Text(self.detail, style="dim"), id="confirm-detail")
            with Horizontal(id="dialog-buttons"):
                yield Button("Cancel", id="cancel")
                yield Button(self.confirm_label, id="confirm", variant="error")

    def on_mount(self) -> None:
        self.query_one("#cancel", Button).focus()

    def action_switch(self) -> None:
        cancel = self.query_one("#cancel", Button)
        (self.query_one("#confirm", Button) if cancel.has_focus else cancel).focus()

    def action_cancel(self) -> None:
        self.dismiss(False)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm")


def act_call_text(tool: str, args: dict[str, Any]) -> str:
    """The exact call as the confirmation shows it (see :func:`tui.widgets.output.call_text`)."""
    return call_text(tool, args)


class HelpScreen(ModalScreen[None]):
    """Every key of the screen beneath: key, binding id (for keymap files), what it does."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,question_mark,q", "close", "Close", id="help-close")]

    def __init__(self, title: str, rows: Sequence[tuple[str, str, str]], keymap_hint: str) -> None:
        super().__init__(classes="dialog-screen")
        self.title_text = title
        self.rows = list(rows)
        self.keymap_hint = keymap_hint

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="help"):
            yield Label(Text(self.title_text, style="bold"), id="dialog-title")
            table: DataTable[Any] = DataTable(id="help-table", cursor_type="row")
            yield table
            yield Static(Text(self.keymap_hint, style="dim"), id="help-hint")

    def on_mount(self) -> None:
        table = self.query_one("#help-table", DataTable)
        # the id before the description, whole: it is what a keymap file needs, and a long description
        # may run off the right edge (at 80 columns it used to push the ids out of view)
        table.add_column("KEY")
        table.add_column("BINDING ID", width=max((len(bid) for _, _, bid in self.rows), default=10))
        table.add_column("WHAT")
        for key, what, bid in self.rows:
            table.add_row(Text(key, style="bold"), Text(bid, style="cyan"), what)
        table.focus()

    def action_close(self) -> None:
        self.dismiss(None)


class JumpScreen(ModalScreen[str | None]):
    """The ``:`` prompt: type to narrow, enter to jump to a pane or screen."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", id="jump-cancel"),
                Binding("down", "down", show=False, id="jump-down"), Binding("up", "up", show=False, id="jump-up")]

    def __init__(self, targets: Sequence[tuple[str, str]]) -> None:
        super().__init__(classes="dialog-screen")
        self.targets = list(targets)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="jump"):
            yield Input(placeholder=":pane or screen", id="jump-input")
            yield OptionList(*(Option(f"{tid:<12} {label}", id=tid) for tid, label in self.targets),
                             id="jump-options")

    def on_mount(self) -> None:
        self.query_one("#jump-input", Input).focus()
        self.query_one(OptionList).highlighted = 0

    def on_input_changed(self, event: Input.Changed) -> None:
        needle = event.value.strip().lstrip(":").lower()
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options([Option(f"{tid:<12} {label}", id=tid) for tid, label in self.targets
                             if needle in tid.lower() or needle in label.lower()])
        options.highlighted = 0 if options.option_count else None

    def action_down(self) -> None:
        self.query_one(OptionList).action_cursor_down()

    def action_up(self) -> None:
        self.query_one(OptionList).action_cursor_up()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        options = self.query_one(OptionList)
        if options.highlighted is None:
            self.dismiss(None)
            return
        self.dismiss(options.get_option_at_index(options.highlighted).id)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)


class SeekScreen(ModalScreen[float | None]):
    """Ask for a run time to seek to (``12:30``, ``750``, ``5m``)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", id="seek-cancel")]

    def __init__(self, end_t: float) -> None:
        super().__init__(classes="dialog-screen")
        self.end_t = end_t

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="seek"):
            yield Label("Seek to run time (m:ss, h:mm:ss, seconds, 5m)", id="dialog-title")
            yield Input(placeholder="12:30", id="seek-input")
            yield Static("", id="form-error")

    def on_mount(self) -> None:
        self.query_one("#seek-input", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        try:
            t = parse_clock(event.value)
        except ValueError as exc:
            self.query_one("#form-error", Static).update(Text(str(exc), style="bold red"))
            return
        self.dismiss(max(0.0, min(self.end_t, t)))

    def action_cancel(self) -> None:
        self.dismiss(None)
