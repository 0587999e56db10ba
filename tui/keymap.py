"""Remappable keys: a keymap file maps binding ids to keys (Textual keymaps).

Every binding of the app has an ``id`` (``?`` lists them). A keymap file is TOML with a
``[keymap]`` table (or the pairs at the top level)::

    [keymap]
    pause = "space"
    tool-rollback = "ctrl+b"
    pane-1 = "f1"

It is read from ``--keymap FILE``, else ``$SRE_MARATHON_KEYMAP``, else
``~/.config/sre-marathon/keymap.toml`` when it exists.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

ENV = "SRE_MARATHON_KEYMAP"
DEFAULT_PATH = Path("~/.config/sre-marathon/keymap.toml")


class KeymapError(ValueError):
    """A keymap file that cannot be used (names the file and the problem)."""


def keymap_path(explicit: str | None = None) -> Path | None:
    """The keymap file to read, or None when there is none."""
    if explicit:
        return Path(explicit)
    if os.environ.get(ENV):
        return Path(os.environ[ENV])
    default = DEFAULT_PATH.expanduser()
    return default if default.is_file() else None


def load_keymap(path: str | Path | None) -> dict[str, str]:
    """Binding id -> key(s) from a keymap file (module docstring); {} for None.

    Raises:
        KeymapError: unreadable, not UTF-8, not TOML, or a value that is not a string of keys
            (the message names the file and the binding id).
    """
    if path is None:
        return {}
    p = Path(path)
    try:
        data = tomllib.loads(p.read_bytes().decode("utf-8"))
    except OSError as exc:
        raise KeymapError(f"{p}: cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise KeymapError(f"{p}: not UTF-8 text (byte {exc.start}): a keymap is a TOML file") from None
    except (tomllib.TOMLDecodeError, RecursionError, ValueError) as exc:
        raise KeymapError(f"{p}: not TOML: {exc}") from None
    table = data.get("keymap", data)
    if not isinstance(table, dict):
        raise KeymapError(f"{p}: [keymap] must be a table of binding-id = \"key\" pairs")
    out = {}
    for bid, keys in table.items():
        if not isinstance(keys, str) or not keys.strip():
            raise KeymapError(f"{p}: keymap.{bid}: expected keys as a string, e.g. \"ctrl+b\" or \"f1,ctrl+1\"")
        out[str(bid)] = keys.strip()
    return out
