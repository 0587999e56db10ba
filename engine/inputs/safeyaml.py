"""Reading user YAML files without surprises: one error type, a position, bounded work.

Every data file a user hands the benchmark (schedules, fault catalogs, app models, rule
files, LLM configurations) is read through :func:`read_yaml` or :func:`parse_yaml`, which
turn everything that can go wrong while *reading* into one :class:`YamlInputError` -- each
loader then names its file and wraps the problem in its own error type:

* bytes that are not UTF-8 (with the byte offset);
* YAML syntax errors (with line and column), several documents in one file;
* duplicate keys in a mapping (PyYAML keeps the last one silently; go-yaml v3, which
  Prometheus uses, refuses them: ``mapping key "x" already defined``);
* alias bombs ("billion laughs": a few lines whose aliases expand to billions of nodes):
  the document's size *after* alias expansion is capped at :data:`MAX_NODES`, so no loader
  ever walks an exponential structure;
* nesting deeper than the parser's recursion allows, and integers too long for Python to
  convert (over 4300 digits).

Non-finite floats (``.nan``, ``.inf``) are valid YAML and come through as floats; the
pydantic models refuse them (``allow_inf_nan=False``).

Documents are composed by libyaml (PyYAML's ``CSafeLoader``, about 9x faster than the
pure-Python parser on the shipped app models) when PyYAML was built with it. Anything the C
parser refuses, and any text in which the two parsers are known to differ
(:data:`_PURE_ONLY`: tabs, tags, control characters), is parsed by the pure-Python loader,
so every error message and position stays the pure-Python one (libyaml words its errors
differently: ``mapping values are not allowed in this context``).
Parsed documents are remembered by the SHA-256 of their text (:func:`parse_yaml`): in the
process (the run loads the same fault catalog four times, the app model three), and, for
files of :data:`DISK_CACHE_MIN_CHARS` or more read by :func:`read_yaml`, on disk under
``$SRE_MARATHON_CACHE/yaml`` (default ``~/.cache/sre-marathon/yaml``; ``SRE_MARATHON_YAML_CACHE=0``
turns the disk cache off), because the fault catalogs hold tabs and so take the pure-Python
loader (0.7 to 2.4 s each). Both caches hold :mod:`marshal` bytes, so every caller gets a
fresh copy that it may change.

Both parsers hand the same node graph to the same Python constructor, so the data and the
alias cap are the same either way (``tests/test_safeyaml.py`` checks this on the shipped
files, mutations of them and generated text); :func:`parse_yaml_node`, whose node marks
are reported as positions, always uses the pure-Python loader.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import re
import tempfile
from collections import OrderedDict
from pathlib import Path
from typing import Any

import yaml

MAX_NODES = 500_000
"""Largest document, in YAML nodes after alias expansion. The biggest shipped file (an app
model) has about 10,000; a billion-laughs file of ten lines has 10**9."""


class YamlInputError(ValueError):
    """A file that cannot be read as one YAML document.

    Attributes:
        problem: what is wrong, without the file name.
        line, column: 1-based position, when known.
        document: 0-based document index (:func:`parse_yaml_documents` only), else None.
    """

    def __init__(self, problem: str, line: int | None = None, column: int | None = None) -> None:
        self.problem = problem
        self.line, self.column = line, column
        self.document: int | None = None  # set by parse_yaml_documents
        where = f"line {line}, column {column or 1}: " if line is not None else ""
        super().__init__(where + problem)

    @property
    def where(self) -> str:
        """``line L, column C`` (or ``<file>`` when the position is unknown)."""
        return f"line {self.line}, column {self.column or 1}" if self.line is not None else "<file>"


class _NoDuplicateKeys(yaml.constructor.SafeConstructor):
    """PyYAML's safe constructor, refusing duplicate mapping keys."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = key_node.value
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (first at line {seen[key]})", key_node.start_mark)
            seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)


class _Loader(_NoDuplicateKeys, yaml.SafeLoader):
    """PyYAML's pure-Python safe loader, refusing duplicate mapping keys (the reference
    behaviour: every error message comes from it)."""


_CLoader: type[Any] | None = None
if getattr(yaml, "__with_libyaml__", False):
    class _CSafeLoader(_NoDuplicateKeys, yaml.CSafeLoader):
        """libyaml's parser and composer with the same constructor as :class:`_Loader`."""

    _CLoader = _CSafeLoader

FAST_MAX_DEPTH = 64
"""Deepest nesting (in nodes) the libyaml path accepts; a deeper document goes to the
pure-Python loader, whose recursive composer decides whether it is too deep (libyaml
composes about 1000 levels; the pure-Python one fewer, depending on the stack). The deepest
shipped file (an Envoy template) nests 18 levels."""

_PURE_ONLY = re.compile("[\t!]|[|>][-+0-9]*#|" + yaml.reader.Reader.NON_PRINTABLE.pattern)
"""Text the two parsers read differently, which therefore goes to the pure-Python loader:
the characters its reader refuses (it names them and their position); tabs (libyaml takes
them as white space between tokens, the pure-Python scanner refuses them there, and libyaml
refuses a tab after a block scalar's indentation, as in the Go code of the fault catalogs);
``!`` (libyaml tags an empty ``!`` node as a string, PyYAML as null); a block scalar
indicator followed by ``#`` without a space (libyaml takes it as a comment)."""


def _fast_ok(text: str, root: yaml.Node) -> bool:
    """Whether the libyaml composition of ``text`` may stand for the pure-Python one: within
    the alias cap and at most :data:`FAST_MAX_DEPTH` deep."""
    size, depth = _measure(root, MAX_NODES)
    return size <= MAX_NODES and depth <= FAST_MAX_DEPTH


def _fast_loader(text: str) -> Any:
    """A libyaml loader for ``text``, or None when the pure-Python loader must read it."""
    if _CLoader is None or _PURE_ONLY.search(text):
        return None
    return _CLoader(text)


def _expanded_size(root: yaml.Node, limit: int) -> int:
    """Nodes of the document with every alias expanded (stops counting past ``limit``)."""
    return _measure(root, limit)[0]


def _measure(root: yaml.Node, limit: int) -> tuple[int, int]:
    """(nodes with every alias expanded, stopping past ``limit``; deepest nesting, in nodes)."""
    memo: dict[int, int] = {}
    depth = 0
    # Iterative post-order: a node's size is 1 + its children's, each shared node counted once
    # per reference but computed once (memo), so the walk is linear in the composed graph. A
    # node that contains itself (``a: &a [*a]``) expands without end: it counts as over the limit.
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    open_nodes: set[int] = set()
    while stack:
        node, done = stack.pop()
        if id(node) in memo:
            continue
        children: list[yaml.Node] = []
        if isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        elif isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        if not done:
            if id(node) in open_nodes:
                return limit + 1, depth  # a cycle
            open_nodes.add(id(node))
            depth = max(depth, len(open_nodes))
            stack.append((node, True))
            for c in children:
                if id(c) in open_nodes:
                    return limit + 1, depth
                if id(c) not in memo:
                    stack.append((c, False))
            continue
        open_nodes.discard(id(node))
        memo[id(node)] = min(limit + 1, 1 + sum(memo.get(id(c), 1) for c in children))
    return memo[id(root)], depth


def parse_yaml_node(text: str) -> tuple[Any, yaml.Node | None]:
    """Parse one YAML document into Python data and its node tree (for positions).

    Always the pure-Python loader: its node marks are the positions the rule-file checkers
    report (libyaml places some nodes elsewhere, e.g. an empty value).

    Returns:
        (data, root node); (None, None) for an empty document.

    Raises:
        YamlInputError: see the module docstring.
    """
    loader: _Loader | None = None
    try:
        loader = _Loader(text)  # the reader refuses control characters here
        root = loader.get_single_node()
        if root is None:
            return None, None
        size = _expanded_size(root, MAX_NODES)
        if size > MAX_NODES:
            raise YamlInputError(f"the document expands to more than {MAX_NODES:,} nodes through its aliases "
                                 "(an alias bomb, or an alias inside itself?); write the values out instead")
        return loader.construct_document(root), root
    except YamlInputError:
        raise
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        what = " ".join(str(p) for p in (exc.context, exc.problem) if p)
        raise YamlInputError(f"not valid YAML: {what}", mark.line + 1 if mark else None,
                             mark.column + 1 if mark else None) from None
    except yaml.YAMLError as exc:
        raise YamlInputError(f"not valid YAML: {' '.join(str(exc).split())}") from None
    except RecursionError:
        raise YamlInputError("not valid YAML: nested too deeply") from None
    except ValueError as exc:  # int() of a number with more than 4300 digits
        raise YamlInputError(f"a value cannot be read: {exc}") from None
    finally:
        if loader is not None:
            loader.dispose()


CACHE_VERSION = "1"
"""Part of every cache key: bump it when the parse of a text may change."""
MEMORY_CACHE_ENTRIES = 32
"""Documents remembered in the process (least recently used dropped first)."""
DISK_CACHE_MIN_CHARS = 8192
"""Smallest file, in characters, whose parse :func:`read_yaml` keeps on disk."""
DISK_CACHE_ENTRIES = 64
"""Files kept in the disk cache; the oldest are removed past this."""

_memory: OrderedDict[str, bytes] = OrderedDict()


def _key(text: str) -> str:
    salt = f"safeyaml-{CACHE_VERSION}-pyyaml-{yaml.__version__}-{MAX_NODES}-{FAST_MAX_DEPTH}\n"
    return hashlib.sha256((salt + text).encode("utf-8", "surrogatepass")).hexdigest()


def _disk_dir() -> Path | None:
    if os.environ.get("SRE_MARATHON_YAML_CACHE", "1") == "0":
        return None
    root = os.environ.get("SRE_MARATHON_CACHE") or str(Path.home() / ".cache" / "sre-marathon")
    return Path(root) / "yaml"


def _remember(key: str, packed: bytes) -> None:
    _memory[key] = packed
    _memory.move_to_end(key)
    while len(_memory) > MEMORY_CACHE_ENTRIES:
        _memory.popitem(last=False)


def _disk_get(key: str) -> bytes | None:
    folder = _disk_dir()
    if folder is None:
        return None
    try:
        packed = (folder / f"{key}.marshal").read_bytes()
        marshal.loads(packed)  # a damaged file counts as absent
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return packed


def _disk_put(key: str, packed: bytes) -> None:
    """Write atomically; never raises (a cache that cannot be written is no cache)."""
    folder = _disk_dir()
    if folder is not None:
        put_cache_entry(folder, key, packed, DISK_CACHE_ENTRIES)


def put_cache_entry(folder: Path, key: str, packed: bytes, keep: int) -> None:
    """Write ``folder/<key>.marshal`` atomically and keep the ``keep`` newest entries of the folder;
    never raises (a cache that cannot be written is no cache). Used by every on-disk cache."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(packed)
        os.replace(tmp, folder / f"{key}.marshal")
        entries = sorted(folder.glob("*.marshal"), key=lambda p: p.stat().st_mtime_ns)
        for old in entries[:-keep]:
            old.unlink(missing_ok=True)
    except OSError:
        pass


def _pack(data: Any) -> bytes | None:
    """``marshal`` bytes of the document, or None when it holds a type marshal cannot
    carry (dates, timestamps, sets)."""
    try:
        return marshal.dumps(data)
    except ValueError:
        return None


def parse_yaml(text: str) -> Any:
    """Parse one YAML document (:func:`parse_yaml_node` without the nodes; through libyaml
    when it reads the text as the pure-Python loader would, remembered by the text's digest;
    see the module docstring).

    Raises:
        YamlInputError: see the module docstring.
    """
    return _parse_cached(text, disk=False)


def _parse_cached(text: str, *, disk: bool) -> Any:
    key = _key(text)
    packed = _memory.get(key)
    if packed is None and disk:
        packed = _disk_get(key)
        if packed is not None:
            _remember(key, packed)
    if packed is not None:
        _memory.move_to_end(key)
        return marshal.loads(packed)
    data = _parse_uncached(text)
    packed = _pack(data)
    if packed is not None:
        _remember(key, packed)
        if disk:
            _disk_put(key, packed)
        return marshal.loads(packed)  # the caller's copy: the remembered bytes stay as parsed
    return data


def _parse_uncached(text: str) -> Any:
    fast = _fast_loader(text)
    if fast is not None:
        try:
            root = fast.get_single_node()
            if root is None:
                return None
            if _fast_ok(text, root):
                return fast.construct_document(root)
        except Exception:  # the pure-Python loader below words the error
            pass
        finally:
            fast.dispose()
    return parse_yaml_node(text)[0]


def read_text(path: str | Path) -> str:
    """A file's text, which must be UTF-8.

    Raises:
        YamlInputError: not UTF-8 (with the byte offset).
        OSError: the file cannot be read.
    """
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise YamlInputError(f"not UTF-8 text (byte {exc.start}): a YAML file must be UTF-8") from None


def read_yaml(path: str | Path) -> Any:
    """Read and parse one YAML file (:func:`read_text`, :func:`parse_yaml`; a file of
    :data:`DISK_CACHE_MIN_CHARS` or more is also remembered on disk, module docstring).

    Raises:
        YamlInputError: not UTF-8, or not one valid, bounded YAML document.
        OSError: the file cannot be read.
    """
    text = read_text(path)
    return _parse_cached(text, disk=len(text) >= DISK_CACHE_MIN_CHARS)


def parse_yaml_documents(text: str) -> list[Any]:
    """Parse every document of a multi-document YAML stream (``---`` separated), each bounded
    as in :func:`parse_yaml_node` (:data:`MAX_NODES` after alias expansion, duplicate keys
    refused).

    Returns:
        The documents in order, ``None`` for empty ones.

    Raises:
        YamlInputError: as :func:`parse_yaml_node`; its ``document`` attribute is the 0-based
            index of the document at fault.
    """
    fast = _fast_loader(text)
    if fast is not None:
        try:
            fast_docs: list[Any] = []
            while fast.check_node():
                root = fast.get_node()
                if root is None:
                    fast_docs.append(None)
                    continue
                if not _fast_ok(text, root):
                    break
                fast_docs.append(fast.construct_document(root))
            else:
                return fast_docs
        except Exception:  # the pure-Python loader below words the error
            pass
        finally:
            fast.dispose()
    docs: list[Any] = []
    loader: _Loader | None = None
    try:
        loader = _Loader(text)
        while loader.check_node():
            root = loader.get_node()
            if root is None:
                docs.append(None)
                continue
            if _expanded_size(root, MAX_NODES) > MAX_NODES:
                raise YamlInputError(f"the document expands to more than {MAX_NODES:,} nodes through its aliases "
                                     "(an alias bomb, or an alias inside itself?); write the values out instead",
                                     root.start_mark.line + 1, root.start_mark.column + 1)
            docs.append(loader.construct_document(root))
        return docs
    except YamlInputError as exc:
        exc.document = len(docs)
        raise
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        what = " ".join(str(p) for p in (exc.context, exc.problem) if p)
        err = YamlInputError(f"not valid YAML: {what}", mark.line + 1 if mark else None,
                             mark.column + 1 if mark else None)
    except yaml.YAMLError as exc:
        err = YamlInputError(f"not valid YAML: {' '.join(str(exc).split())}")
    except RecursionError:
        err = YamlInputError("not valid YAML: nested too deeply")
    except ValueError as exc:  # int() of a number with more than 4300 digits
        err = YamlInputError(f"a value cannot be read: {exc}")
    finally:
        if loader is not None:
            loader.dispose()
    err.document = len(docs)
    raise err
