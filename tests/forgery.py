"""The forger's tools, as code: re-chain an edited event stream and reseal it with the
project's own sealer. Used by tests/test_replay.py and benchmarks/bench_attacks.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.bundle.events import GENESIS, Event, canonical
from engine.bundle.format import MANIFEST_FILE, open_bundle, seal


def unpack(bundle: str | Path, out_dir: Path) -> list[Event]:
    """Write a bundle's files into ``out_dir`` (the manifest left out); returns its events."""
    b = open_bundle(bundle)
    for name in b.names():
        if name == MANIFEST_FILE:
            continue
        (out_dir / name).parent.mkdir(parents=True, exist_ok=True)
        (out_dir / name).write_bytes(b.read_bytes(name))
    return b.events


def rechain(events: list[dict[str, Any]]) -> list[Event]:
    """Recompute every ``prev`` and ``hash`` of (seq, t, kind, payload) dicts."""
    out: list[Event] = []
    prev = GENESIS
    for i, e in enumerate(events):
        payload = json.loads(canonical(e["payload"]))
        ev = Event(i, e["t"], e["kind"], payload, prev, Event.digest(prev, i, e["t"], e["kind"], payload))
        out.append(ev)
        prev = ev.hash
    return out


def forge(bundle: str | Path, out_dir: Path, edit: Callable[[list[dict[str, Any]]], None], *,
          reseal: bool = True, files: dict[str, bytes] | None = None) -> Path:
    """Edit a sealed run's events (``edit`` changes the list of dicts in place), re-chain them
    and, with ``reseal``, seal them again as a new bundle; without, keep the old manifest and
    seal event (a re-chained edit). ``files`` replaces side files. Returns the forged bundle or
    directory."""
    out_dir.mkdir(parents=True, exist_ok=True)
    events = unpack(bundle, out_dir)
    seal_ev = events[-1]
    dicts = [{"t": e.t, "kind": e.kind, "payload": json.loads(json.dumps(e.payload))} for e in events[:-1]]
    edit(dicts)
    for name, data in (files or {}).items():
        (out_dir / name).write_bytes(data)
    chained = rechain(dicts)
    if reseal:
        (out_dir / "events.jsonl").write_text("".join(e.to_json() + "\n" for e in chained), encoding="utf-8")
        return seal(out_dir, sign=False)
    last = chained[-1]
    seal_again = Event(len(chained), seal_ev.t, "seal", seal_ev.payload, last.hash,
                       Event.digest(last.hash, len(chained), seal_ev.t, "seal", seal_ev.payload))
    (out_dir / "events.jsonl").write_text("".join(e.to_json() + "\n" for e in [*chained, seal_again]),
                                          encoding="utf-8")
    (out_dir / MANIFEST_FILE).write_bytes(open_bundle(bundle).read_bytes(MANIFEST_FILE))
    return out_dir


def flip_first_failing_probe(dicts: list[dict[str, Any]]) -> None:
    """The forgery of the issue: every failing probe result after the first report becomes a pass."""
    for d in dicts:
        if d["kind"] == "probe.result" and not d["payload"]["ok"]:
            d["payload"]["ok"] = True
            d["payload"]["detail"] = "ok"
            return
    raise AssertionError("no failing probe to flip")
