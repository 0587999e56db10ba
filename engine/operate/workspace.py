"""An operator's persistent workspace: a directory and a key-value store.

Every run gives its operator one workspace (``<run_dir>/workspace/``, or a temporary
directory for in-memory runs) that persists across invocations: notes, scratch files,
past incidents. Paths are confined to it: absolute paths, ``..`` segments that leave it
and symbolic links that point outside are refused with :class:`WorkspaceError`, so nothing
an operator can reach through its workspace leads to the run's ground truth (the event
log sits beside the workspace, not in it).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any

KV_FILE = "kv.json"
MAX_FILE_BYTES = 1_000_000
"""Largest file an operator may write (1 MB): a workspace holds notes, not dumps."""


class WorkspaceError(ValueError):
    """A refused workspace operation (path escapes, too large, not found)."""


class Workspace:
    """A confined directory with a JSON key-value store (module docstring).

    Args:
        root: the workspace directory (created); None makes a temporary one.
    """

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root) if root is not None else Path(tempfile.mkdtemp(prefix="marathon-ws-"))
        self.root.mkdir(parents=True, exist_ok=True)
        self._root_real = self.root.resolve()

    def resolve(self, path: str) -> Path:
        """The absolute path of a workspace-relative path.

        Raises:
            WorkspaceError: absolute paths, escapes through ``..`` or symlinks, empty paths.
        """
        if not path or path.strip() in ("", "."):
            raise WorkspaceError("a path inside the workspace is required")
        pure = PurePosixPath(path.replace("\\", "/"))
        if pure.is_absolute() or (len(path) > 1 and path[1] == ":"):
            raise WorkspaceError(f"absolute paths are not allowed in the workspace: {path!r}")
        if ".." in pure.parts:
            raise WorkspaceError(f"'..' is not allowed in workspace paths: {path!r}")
        full = (self.root / pure).resolve()
        if full != self._root_real and self._root_real not in full.parents:
            raise WorkspaceError(f"{path!r} resolves outside the workspace")
        return full

    def write(self, path: str, text: str) -> int:
        """Write a text file; returns its size in bytes.

        Raises:
            WorkspaceError: bad path, or more than :data:`MAX_FILE_BYTES`.
        """
        data = text.encode("utf-8")
        if len(data) > MAX_FILE_BYTES:
            raise WorkspaceError(f"{path!r}: {len(data)} bytes is over the {MAX_FILE_BYTES}-byte limit")
        full = self.resolve(path)
        if full.name == KV_FILE and full.parent == self._root_real:
            raise WorkspaceError(f"{KV_FILE} is the key-value store; use kv_set")
        full.parent.mkdir(parents=True, exist_ok=True)
        tmp = full.with_name(f".{full.name}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, full)
        return len(data)

    def append(self, path: str, text: str) -> int:
        """Append to a text file (created if missing); returns its new size."""
        existing = self.read(path) if self.exists(path) else ""
        return self.write(path, existing + text)

    def read(self, path: str) -> str:
        """Read a text file.

        Raises:
            WorkspaceError: bad path or no such file.
        """
        full = self.resolve(path)
        if not full.is_file():
            raise WorkspaceError(f"no file {path!r} in the workspace")
        return full.read_text(encoding="utf-8", errors="replace")

    def exists(self, path: str) -> bool:
        return self.resolve(path).is_file()

    def files(self, prefix: str = "") -> list[str]:
        """Workspace-relative paths of every file (the key-value store excluded), sorted."""
        base = self.resolve(prefix) if prefix else self._root_real
        if not base.exists():
            return []
        out = []
        for p in sorted(base.rglob("*")):
            if p.is_file() and not p.name.startswith("."):
                rel = p.resolve().relative_to(self._root_real).as_posix()
                if rel != KV_FILE:
                    out.append(rel)
        return out

    # ----------------------------------------------------------------- key-value store

    def _kv(self) -> dict[str, Any]:
        path = self._root_real / KV_FILE
        if not path.is_file():
            return {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            return {}
        return data if isinstance(data, dict) else {}

    def kv_get(self, key: str, default: Any = None) -> Any:
        return self._kv().get(key, default)

    def kv_set(self, key: str, value: Any) -> None:
        """Store a JSON-serialisable value under ``key``.

        Raises:
            WorkspaceError: the value is not JSON-serialisable.
        """
        data = self._kv()
        data[key] = value
        try:
            text = json.dumps(data, sort_keys=True, indent=1)
        except (TypeError, ValueError) as exc:
            raise WorkspaceError(f"value for {key!r} is not JSON-serialisable: {exc}") from None
        tmp = self._root_real / f".{KV_FILE}.tmp"
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, self._root_real / KV_FILE)

    def kv_keys(self) -> list[str]:
        return sorted(self._kv())
