"""Dialogs: tool forms, the confirmation of an act, help, jump, seek.

* :class:`ToolForm` is built from a tool's typed arguments (:data:`engine.operate.tools.TOOLS`):
  choices become selects, the alerts of an incident a checklist, services and incidents
  pick lists, diffs and notes text areas. It validates with the tool's own pydantic
  model before anything is sent, so the form and the agents' JSON Schema never disagree.
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
from tui.model import parse_clock
from tui.widgets.output import call_text

NEEDS_CONFIRMATION = {name for name, spec in TOOLS.items() if spec.tier == "act"} | {"resolve_incident"}
"""Calls that are hard to reverse: every act, and declaring an incident resolved (premature
declarations are counted against the operator)."""


@dataclass
class FormContext:
    """What a tool form offers to pick from, and its defaults.

    Attributes:
        services: the application's services (pick lists for service/deployment).
        incidents: (id, label) of the operator's incidents, open ones first.
        alerts: (id, label) of alerts to group into an incident, newest first.
        pods: pod names seen so far (suggestions).
        artifacts: change ids, images and keys seen so far (suggestions for an RCA).
        defaults: field name -> value to start with (e.g. the service under the cursor);
            for ``alerts``, the ids to start selected.
    """

    services: list[str] = field(default_factory=list)
    incidents: list[tuple[str, str]] = field(default_factory=list)
    alerts: list[tuple[str, str]] = field(default_factory=list)
    pods: list[str] = field(default_factory=list)
    artifacts: list[str] = field(default_factory=list)
    defaults: dict[str, Any] = field(default_factory=dict)


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


class ToolForm(ModalScreen[dict[str, Any] | None]):
    """A form for one tool's arguments (module docstring); dismisses with the arguments or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="form-cancel"),
        Binding("ctrl+s", "submit", "Submit", id="form-submit"),
    ]

    def __init__(self, tool: str, ctx: FormContext) -> None:
        super().__init__(classes="dialog-screen")
        self.tool = tool
        self.spec = TOOLS[tool]
        self.ctx = ctx
        self.fields = self.spec.args.model_fields

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes=f"tier-{self.spec.tier}"):
            yield Label(Text.assemble((f" {self.spec.tier.upper()} ", "bold reverse"), " ", (self.tool, "bold")),
                        id="dialog-title")
            yield Static(self.spec.description, id="dialog-help")
            with VerticalScroll(id="form-fields"):
                for name, info in self.fields.items():
                    req = "" if not info.is_required() else " *"
                    desc = f"  {info.description}" if info.description else ""
                    yield Label(Text.assemble((name + req, "bold"), (desc, "dim")), classes="field-label")
                    yield self._widget(name, info)
            yield Static("", id="form-error")
            with Horizontal(id="dialog-buttons"):
                yield Button("Cancel", id="cancel")
                label = "Review call..." if self.tool in NEEDS_CONFIRMATION else "Run"
                yield Button(label, id="submit", variant="primary")

    def _widget(self, name: str, info: FieldInfo) -> Widget:
        kind, choices = field_kind(name, info)
        wid = f"field-{name}"
        default = self.ctx.defaults.get(name, None if info.is_required() else info.default)
        if kind == "choice":
            options = [(str(c), c) for c in choices]
            value = default if default in choices else Select.NULL
            return Select(options, value=value, allow_blank=value is Select.NULL or not info.is_required(), id=wid)
        if kind == "bool":
            return Checkbox(name, value=bool(default), id=wid)
        if kind in ("int", "float"):
            return Input("" if default is None else str(default), type="integer" if kind == "int" else "number",
                         id=wid)
        if kind == "alerts":
            chosen = set(self.ctx.defaults.get("alerts", ()))
            return SelectionList[str](*(Selection(label, aid, aid in chosen) for aid, label in self.ctx.alerts),
                                      id=wid)
        if kind == "selector":
            return Input("", placeholder="key=value,key=value", id=wid)
        if kind == "service":
            value = default if default in self.ctx.services else Select.NULL
            return Select([(s, s) for s in self.ctx.services], value=value, id=wid, type_to_search=True)
        if kind == "incident":
            ids = [i for i, _ in self.ctx.incidents]
            value = default if default in ids else (ids[0] if ids else Select.NULL)
            return Select([(label, i) for i, label in self.ctx.incidents], value=value, id=wid)
        if kind == "text":
            return TextArea(str(default or ""), id=wid, classes="form-text")
        suggestions = self.ctx.pods if name == "pod" else self.ctx.artifacts if name == "artifact" else []
        return Input("" if default is None else str(default), id=wid,
                     suggester=SuggestFromList(suggestions, case_sensitive=False) if suggestions else None)

    def on_mount(self) -> None:
        first = self.query("#form-fields > *").exclude(".field-label").first()
        first.focus()

    def values(self) -> dict[str, Any]:
        """The arguments as typed so far (empty optional fields left out).

        Raises:
            ValueError: a selector that is not ``key=value`` pairs.
        """
        out: dict[str, Any] = {}
        for name, info in self.fields.items():
            w = self.query_one(f"#field-{name}")
            value: Any
            if isinstance(w, Select):
                value = None if w.value is Select.NULL else w.value
            elif isinstance(w, Checkbox):
                value = w.value
            elif isinstance(w, SelectionList):
                value = list(w.selected)
            elif isinstance(w, TextArea):
                value = w.text
            else:
                assert isinstance(w, Input)
                value = w.value.strip()
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

    def on_selection_list_selected_changed(self, event: SelectionList.SelectedChanged[str]) -> None:
        """Suggest an incident title from the chosen alerts while the title is empty or still suggested."""
        if "title" not in self.fields:
            return
        title = self.query_one("#field-title", Input)
        labels = dict(self.ctx.alerts)
        chosen = [labels[a] for a in event.selection_list.selected if a in labels]
        if chosen and (not title.value or title.value == getattr(self, "_suggested", None)):
            rules = sorted({c.split()[2] for c in chosen if len(c.split()) > 2})
            targets = sorted({c.split()[3] for c in chosen if len(c.split()) > 3})
            suggestion = f"{', '.join(rules)} on {', '.join(targets)}"[:200]
            title.value = suggestion
            self._suggested = suggestion

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
    """Every key of the screen beneath: key, what it does, binding id (for keymap files)."""

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
        table.add_columns("KEY", "WHAT", "BINDING ID")
        for key, what, bid in self.rows:
            table.add_row(Text(key, style="bold"), what, Text(bid, style="dim"))
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
