"""Each service's source as a small revisioned repository, and the build pipeline's log.

A :class:`SourceRepo` is a linear history of commits, each a full snapshot of the
service's files (a few files, so snapshots are cheap). Commit ids are SHA-1 over the
parent id and the file contents, as git's are over its objects, so the same change on
the same history gets the same id in every run.

The build pipeline turns a commit into an image tag (``<repo>:<base-tag>-<short sha>``);
the simulator records each change in a :class:`engine.substrate.ChangeRecord`, which is what
``get_deploy_history`` later shows an operator.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Commit:
    """One snapshot of a service's source."""

    id: str
    parent: str | None
    message: str
    author: str
    t: float
    files: dict[str, str] = field(compare=False, repr=False)

    @property
    def short(self) -> str:
        return self.id[:7]


def _commit_id(parent: str | None, files: dict[str, str], message: str) -> str:
    h = hashlib.sha1()
    h.update((parent or "").encode())
    h.update(message.encode())
    for path in sorted(files):
        h.update(path.encode() + b"\0" + files[path].encode() + b"\0")
    return h.hexdigest()


class SourceRepo:
    """The commit history of one service's source tree."""

    def __init__(self, service: str, files: dict[str, str], t: float = 0.0) -> None:
        self.service = service
        root = Commit(_commit_id(None, files, "initial import"), None, "initial import", "upstream", t, dict(files))
        self.commits: list[Commit] = [root]
        self._by_id: dict[str, Commit] = {root.id: root}

    @classmethod
    def from_directory(cls, service: str, root: Path) -> SourceRepo:
        """Read every UTF-8 text file under ``root`` (relative paths) into an initial commit."""
        files: dict[str, str] = {}
        if root.is_dir():
            for path in sorted(root.rglob("*")):
                if not path.is_file() or "__pycache__" in path.parts:
                    continue
                try:
                    files[path.relative_to(root).as_posix()] = path.read_text(encoding="utf-8")
                except UnicodeDecodeError:
                    continue  # binary assets are not searchable source
        return cls(service, files)

    @property
    def head(self) -> Commit:
        return self.commits[-1]

    def get(self, commit_id: str) -> Commit:
        """Look up a commit by full id or unique prefix (at least 4 characters).

        Raises:
            KeyError: unknown or ambiguous id.
        """
        if commit_id in self._by_id:
            return self._by_id[commit_id]
        matches = [c for c in self.commits if len(commit_id) >= 4 and c.id.startswith(commit_id)]
        if len(matches) != 1:
            raise KeyError(f"{self.service}: unknown commit {commit_id!r}")
        return matches[0]

    def commit(self, files: dict[str, str], message: str, author: str, t: float) -> Commit:
        """Append a commit with the complete new file set; returns it."""
        parent = self.head.id
        commit = Commit(_commit_id(parent, files, message), parent, message, author, t, dict(files))
        self.commits.append(commit)
        self._by_id[commit.id] = commit
        return commit
