"""The schedule generator: seeded schedules from (app, seed, regime), and the noise around the faults.

The schedule format (its models, parsing, dumping) is :mod:`faults.schedule`; the same inputs
give the same file byte for byte.

Distributions (and why):

* **Arrivals** form a Poisson process (exponential gaps), an assumption: changes and the
  incidents they cause arrive independently during a working day. The marathon asks for
  Poisson(60) faults, clipped to 52..68 (about one standard deviation, an assumption), over 90
  minutes -- "about 60 faults in 90 minutes" is the SRE-Marathon paper's marathon (DESIGN
  section 5); ``short-5`` and ``short-10`` ask for 5 and 10 faults over 20 and 35 minutes. A
  fault appears at most once and its target takes one fault at a time (**Exclusion**), so a
  catalog bounds what it can hold: Online Boutique's eight faultable services fit about 45
  faults in the window, Train Ticket about 55; Astronomy Shop reaches 60 once its catalog has
  Table 3's 150 code bugs. The draw is uniform over the free faults of a bucket, so a larger
  catalog makes two seeds share fewer faults.
* **Lifetimes** are log-normal, clipped to 5..25 min in the marathon: repair times of
  production incidents are well fitted by a log-normal (Schroeder and Gibson, "A large-scale
  study of failures in high-performance computing systems", DSN 2006). The median
  (11 min; 8 min in the short regimes) and shape (0.45) are assumptions, the median set just
  above the leaderboard's MTTR (SRE-Marathon Table 2: 560 s) so that a typical repair fits in
  a typical lifetime. Every fault lives at least :func:`faults.timing.work_seconds` (onset,
  detection, the remedy's rollout, the outcome soak: up to 15 minutes for Train Ticket's Java
  services) plus :data:`LIFE_MARGIN_S`, so that a perfect operator can earn every stage of
  every fault. Arrivals keep to the regime's window (20, 35 or 90 minutes); the run lasts
  until the last fault is reverted, plus a minute.
* **Mix**: 75 % change-driven (code bugs and configuration changes shipped through the
  pipeline), 15 % runtime, 10 % infrastructure (:data:`MIX`). The change share follows the
  commonly cited figure that about 70 % of outages follow a change in a live system (Google,
  "Site Reliability Engineering", 2016, ch. 1); the 15 / 10 split of the rest is an assumption.
  :func:`mix_quota` turns the mix into a count per bucket, capped by what the catalog holds
  (a fault appears at most once), the rest going to the other buckets in proportion; within
  the change-driven share every code and configuration fault is equally likely, so the share of
  code bugs follows the catalog. Infrastructure faults are placed first (a zone outage needs a
  window no other fault shares, which a full schedule never leaves), then runtime faults (they
  target a few services, which change faults would have taken), each at a uniform time, then
  one arrival per remaining quota unit in a seeded order. What a schedule realises is bounded
  by the catalog and by the cap on exclusive faults: every infrastructure fault of the three
  catalogs is exclusive, so infrastructure is 1 of 42-48 marathon faults in Online Boutique
  and 2 of 52-67 in the others (2-4 %, not 10 %). Runtime faults realise their whole quota:
  all 3 of Astronomy Shop's (5 %), all 7 of Train Ticket's (12-14 %), and 8-10 of Online
  Boutique's (17-24 %, since its crowded 12 services drop change arrivals instead). Measured
  on seeds 1, 2, 3, 5, 7, 11.
* **Noise**: benign changes (comment blocks added to the code, harmless log-level env
  changes, re-tags of the running build, looser probes, higher limits, one more replica)
  arrive about every 3 minutes in the marathon, in the faults' arrival window, their kinds
  following the mix of the schedule's fault rows, and :data:`BENIGN_REVERT_P` of them are
  reverted a fault-like lifetime later; load bursts
  (x1.4..x1.9 for 1..3 min) about every 15 minutes.
* **Background alert noise** (Watchdog, a certificate close to expiry, API client errors,
  a throttled monitoring sidecar, a flaky leaf service that flaps): :mod:`faults.noise`,
  from its own random stream and placed where no fault can own it.
* **Truth stays hidden**: in the pipeline log a benign change looks like a fault's change.
  Both are written by the service's team with the same weights, worded from the same
  commit subjects (:mod:`faults.people`), and a benign code change's size is drawn from the
  catalog's code changes' sizes; every revert, a fault's or a benign one, is ``Revert
  "<subject>"`` by a team member. A benign code change only adds whole comment lines before
  an existing comment line, outside every catalog change's lines and outside string
  literals, so it can neither change behaviour nor make a fault's change or revert miss
  the text it replaces (the simulator derives behaviour from source only through the
  defect markers of :class:`engine.sim.effects.SourceContains`).
* **Exclusion**: two faults never target the same service at the same time, and a
  fault on a service starts only once the previous fault's revert there has had time to
  build and roll out (its onset); a zone outage shares its window with no other fault (it
  strands every pod in the zone, so no other fault's symptom could be told apart, and its
  evictions would restart the processes other runtime faults live in); the last fault ends
  before the run does. A node fault (``kubelet-stop``, ``node-network``) is exclusive the same
  way: it hits every pod on its node (a stopped kubelet takes them all out of the endpoints at
  once), so another fault's symptom there could be masked or mimicked by it. A schedule holds
  few of them (:data:`EXCLUSIVE_EVERY_S`): each one empties the schedule around it.
* **Zone outages** and **kubelet stops** last at most :data:`ZONE_OUTAGE_MAX_LIFE_S`: Kubernetes evicts the pods of
  a NotReady node 300 s after it turns NotReady (40 s), and the replacements on the healthy
  zone end the outage's symptom by themselves, so a longer "outage" would be a fault that has
  healed.
* **Benign changes never undo or delay a fault by accident**: no benign change goes to a
  fault's target from a build and rollout before its injection until it has bitten (its
  onset: a benign build would queue the fault's commit behind it, and a benign rollout would
  supersede the fault's own and keep old pods serving); no benign code change goes to a
  service whose image a live fault replaced (the pipeline would deploy its own image over
  it); and no benign change at all to a service whose live fault lives in its running
  processes (a runaway process, a ``tc`` delay, a reseed after a store restart), since any
  rollout replaces those processes.
"""

from __future__ import annotations

import hashlib
import math
import re
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from engine.apps.builds import CONFIG_SUFFIXES, build_seconds
from engine.apps.model import is_shipped_app, load_app, source_root
from faults import noise as background
from faults import people
from faults.schedule import (
    GENERATOR_VERSION,
    TEMPLATE_KINDS,
    BenignChange,
    LoadBurst,
    Schedule,
    ScheduledFault,
    parse_schedule,
)
from faults.spec import NODE_MECHANISMS, Catalog, FaultSpec, app_catalog
from faults.timing import onset_seconds, rollout_seconds, work_seconds

REGIMES: dict[str, dict[str, Any]] = {
    "short-5": {"faults": 5, "duration_s": 1200, "median_life_s": 480, "life_clip": (300, 720), "benign_every_s": 300,
                "burst_every_s": 900},
    "short-10": {"faults": 10, "duration_s": 2100, "median_life_s": 480, "life_clip": (300, 840),
                 "benign_every_s": 240, "burst_every_s": 900},
    "marathon": {"faults": 60, "duration_s": 5400, "median_life_s": 660, "life_clip": (300, 1500),
                 "benign_every_s": 180, "burst_every_s": 900},
}
"""Per regime: faults asked for, run window (s), lifetime median (s) and clip (s), mean gap of
benign changes and of load bursts (s). The marathon's 60 faults in 90 minutes are the paper's
(DESIGN section 5); the other values are assumptions (module docstring)."""
FIRST_FAULT_S = 60
LIFE_SIGMA = 0.45
"""Shape of the log-normal lifetime (sigma of its logarithm): an assumption (module docstring)."""
MIX = {"change": 0.75, "runtime": 0.15, "infrastructure": 0.10}
"""Category mix: change-driven (code-bug + configuration), runtime, infrastructure. 75 % after
Google's SRE book, ch. 1 ("roughly 70 % of outages are due to changes in a live system"); the
15 / 10 split is an assumption (module docstring)."""
ZONE_OUTAGE_MAX_LIFE_S = 330
"""Longest zone outage, seconds: before the node controller's eviction (NotReady after 40 s,
pods evicted 300 s later) lets Kubernetes move the stranded pods (module docstring)."""
EXCLUSIVE_EVERY_S = 2400
"""Arrival window, seconds, per exclusive fault (zone outage, node fault) a schedule may hold.
Each one stops every other arrival for its life and pushes the faults that would overlap it
out of the window too, so a schedule holds at most ``max(1, min(span // EXCLUSIVE_EVERY_S,
services // SERVICES_PER_EXCLUSIVE))`` of them: 2 in Astronomy Shop's (25 services) and Train
Ticket's (65) marathon window of 4,980 s, 1 in Online Boutique's (12). Measured on the
marathon, seeds 1, 2, 3, 5, 7, 11: Online Boutique placed 32-41 faults with all four of its
infrastructure faults, 36-46 with two and 42-45 with one; Astronomy Shop and Train Ticket
place 51-65 with two. Assumptions, chosen for that measurement (module docstring)."""
SERVICES_PER_EXCLUSIVE = 12
"""Services per exclusive fault a schedule may hold (:data:`EXCLUSIVE_EVERY_S`)."""
PROCESS_MECHANISMS = ("cpu-pressure", "network-delay", "store-restart", "node-network", "kubelet-stop",
                      "secret-rotation")
"""Faults that live in the processes running at injection (or, for the node faults, on the
node the target's pods run on): any rollout of the target ends them."""


def mix_quota(n: int, available: dict[str, int]) -> dict[str, int]:
    """How many of ``n`` faults a schedule draws from each bucket of :data:`MIX`.

    Largest remainders of ``n`` times the mix; a bucket gets at most the faults the catalog has
    of it (a fault appears at most once in a schedule), and what it cannot take goes to the
    buckets with room, in proportion to their share of the mix. So a catalog with one zone
    outage realises 1 infrastructure fault, not 10 %, and the rest of the mix keeps its ratio.

    Args:
        n: faults the schedule asks for.
        available: faults in the catalog per bucket (``change``, ``runtime``, ``infrastructure``).

    Returns:
        Faults to draw per bucket of :data:`MIX` (every bucket present, 0 for an empty one);
        they sum to ``min(n, sum(available.values()))``.
    """
    quota = {b: 0 for b in MIX}
    todo = min(n, sum(available.get(b, 0) for b in MIX))
    while todo > 0:
        room = [b for b in MIX if available.get(b, 0) > quota[b]]
        total = sum(MIX[b] for b in room)
        exact = {b: todo * MIX[b] / total for b in room}
        add = {b: min(int(exact[b]), available.get(b, 0) - quota[b]) for b in room}
        # Largest remainder first (ties in MIX order) for what the whole parts leave.
        for b in sorted(room, key=lambda b: -(exact[b] - int(exact[b]))):
            if sum(add.values()) >= todo:
                break
            if add[b] < available.get(b, 0) - quota[b]:
                add[b] += 1
        for b in room:
            quota[b] += add[b]
        todo -= sum(add.values())
    return quota


LABEL_TRIES = 200
"""Arrival times one scheduled fault may try before it is dropped (assumption: enough to find a
gap in a crowded marathon; see :func:`generate`)."""

LIFE_MARGIN_S = 60
"""Lifetime beyond :func:`faults.timing.work_seconds`: slack for a correct operator working
several overlapping faults at once."""


def _exclusive(spec: FaultSpec) -> bool:
    """Whether ``spec`` shares its window with no other fault (module docstring, Exclusion)."""
    return spec.mechanism == "zone-outage" or spec.mechanism in NODE_MECHANISMS


def lifetime(model: Any, spec: FaultSpec, drawn: int) -> int:
    """The lifetime a fault gets, seconds: the drawn (log-normal) one, but at least the time a
    correct operator needs to earn its repair credit plus :data:`LIFE_MARGIN_S`; a zone outage
    at most :data:`ZONE_OUTAGE_MAX_LIFE_S` (module docstring)."""
    if spec.mechanism in ("zone-outage", "kubelet-stop"):
        # A stopped kubelet's pods are evicted on the same clock as a lost zone's.
        return min(drawn, ZONE_OUTAGE_MAX_LIFE_S)
    return max(drawn, math.ceil(work_seconds(model, spec)) + LIFE_MARGIN_S)


def _lead(model: Any, spec: FaultSpec) -> int:
    """How long before a fault a benign change to its target could still be building or rolling
    out when the fault arrives: the target's build time plus a rolling update of two replicas."""
    svc = model.service(spec.target)
    return int(build_seconds(svc.language) + 2 * rollout_seconds(model, spec.target))


def _rng(app: str, seed: int, regime: str) -> np.random.Generator:
    entropy = [seed & 0xFFFFFFFF, zlib.crc32(app.encode()), zlib.crc32(regime.encode()), int(GENERATOR_VERSION)]
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy)))


def _bucket(spec: FaultSpec) -> str:
    if spec.category in ("code-bug", "configuration"):
        return "change"
    return spec.category


_COMMENT = {".go": "//", ".java": "//", ".js": "//", ".ts": "//", ".tsx": "//", ".cs": "//", ".kt": "//", ".rs": "//",
            ".cpp": "//", ".cc": "//", ".h": "//", ".php": "//", ".py": "#", ".rb": "#"}
_BENIGN_NOTES = [
    "Keep the request log line short; the full payload is in the trace.",
    "Deadlines are propagated from the incoming context; do not add new ones here.",
    "Metrics labels stay low-cardinality: never put ids in them.",
    "Retries are the caller's job; this handler must stay idempotent.",
    "Errors are wrapped once, at the boundary, with the operation name.",
    "Validation happens before any downstream call so bad input fails fast.",
    "Money stays in units and nanos end to end; never convert through floats here.",
    "This path is hot: avoid allocations in the loop below.",
    "The order of these checks matters for the error message the client sees.",
    "Callers pass ids as received; normalise them here, not at every call site.",
    "Keep this in step with the proto definition when a field is added.",
    "Timeouts come from configuration so operators can tune them without a build.",
    "Log at debug level here; this runs once per request.",
    "The cache is best effort: a miss must fall through to the source of truth.",
    "Connections are reused across requests; do not close them in the handler.",
    "Default values mirror the chart's values file.",
    "Prefer returning early over nesting; the happy path reads top to bottom.",
    "This mapping is shared with the reporting job; rename fields in both places.",
    "The client library retries idempotent calls on its own.",
    "Keep allocations out of the serialisation path; it shows up in profiles.",
]
BENIGN_REVERT_P = 0.9
"""Share of benign changes reverted later (by the service's team, ``Revert "<subject>"``), so
a revert in the pipeline log says nothing about whether the change was a fault's."""


def _spans(cat: Catalog, service: str, file: str, text: str) -> list[tuple[int, int]]:
    """Line ranges (0-based, inclusive) of ``file`` that a catalog fault's change replaces."""
    out = []
    for spec in cat.faults:
        ch = spec.change
        if ch is None or spec.target != service or ch.file != file or ch.find not in text:
            continue
        first = text[:text.index(ch.find)].count("\n")
        out.append((first, first + ch.find.count("\n")))
    return out


def _anchors(cat: Catalog, service: str, file: str, text: str) -> list[int]:
    """Lines of ``file`` before which comment lines can be inserted without changing behaviour:
    an existing whole-line comment or a blank line, which with the line before it is unique in
    the file, outside (and not next to) any catalog change's lines, and not inside a
    multi-line string literal."""
    prefix = _COMMENT[Path(file).suffix]
    lines = text.split("\n")
    spans = _spans(cat, service, file, text)
    out = []
    for i, line in enumerate(lines[:-1]):
        stripped = line.strip()
        if i < 2 or not (stripped == "" or stripped.startswith(prefix)) or stripped.startswith(("#!", "# -*-")):
            continue
        if text.count(f"\n{lines[i - 1]}\n{line}\n") != 1 or any(a - 2 <= i <= b + 1 for a, b in spans):
            continue
        before = "\n".join(lines[:i])
        if before.count('"""') % 2 or before.count("'''") % 2 or before.count("`") % 2:
            continue
        out.append(i)
    return out


_DIFF_SIZES: dict[str, list[int]] = {}
""":func:`_diff_sizes` by the SHA-256 of everything it reads (each change and its file's text)."""
_SHIPPED_FILES: dict[str, list[str]] = {}
""":func:`_source_files` of the shipped source trees (package data under
:data:`_SHIPPED_TREE`, which a run never changes), by directory: listed once per process."""
_SHIPPED_TREE = (Path(__file__).resolve().parent.parent / "engine" / "apps" / "src").as_posix()


def _diff_sizes(cat: Catalog, app_name: str) -> list[int]:
    """Lines changed (added + removed) by each catalog code change: benign code changes draw
    their size from these, so the size of a commit says nothing either.

    Remembered by the digest of the changes and the texts they apply to (the diffs are the
    cost; reading the files is not)."""
    import difflib

    inputs: list[tuple[str, str, str]] = []
    digest = hashlib.sha256()
    for spec in cat.faults:
        ch = spec.change
        if ch is None:
            continue
        path = source_root(app_name) / spec.target / ch.file
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        inputs.append((text, ch.find, ch.replace))
        for part in (text, ch.find, ch.replace):
            digest.update(len(part).to_bytes(8, "big") + part.encode("utf-8", "surrogatepass"))
    key = digest.hexdigest()
    if key not in _DIFF_SIZES:
        sizes = []
        for text, find, replace in inputs:
            new = text.replace(find, replace, 1)
            sizes.append(sum(1 for d in difflib.unified_diff(text.splitlines(), new.splitlines(), lineterm="", n=0)
                             if d[:1] in "+-" and not d.startswith(("+++", "---"))))
        _DIFF_SIZES[key] = sizes
    return list(_DIFF_SIZES[key]) or [2]


def _source_files(root: Path) -> list[str]:
    """Source files under ``root`` (relative POSIX paths, sorted) that benign changes may
    touch: a known comment syntax (:data:`_COMMENT`), no ``__pycache__``."""
    shipped = root.resolve().as_posix().startswith(_SHIPPED_TREE + "/")
    if shipped and str(root) in _SHIPPED_FILES:
        return list(_SHIPPED_FILES[str(root)])
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                   if p.is_file() and p.suffix in _COMMENT and "__pycache__" not in p.parts)
    if shipped:
        _SHIPPED_FILES[str(root)] = files
    return list(files)


class _Benign:
    """Benign changes of one generated schedule: the services and files they may touch, and
    the text of each file as the benign changes so far leave it (fault changes never touch
    the lines they do, so they compose)."""

    def __init__(self, app_name: str, cat: Catalog) -> None:
        self.app_name = app_name
        self.cat = cat
        app = load_app(app_name)
        self.services = [s.name for s in app.services if s.role == "app" and s.operations]
        self.files: dict[str, list[str]] = {}
        self.text: dict[tuple[str, str], str] = {}
        for name in self.services:
            self.files[name] = _source_files(source_root(app_name) / name)
        self.sizes = _diff_sizes(cat, app_name)
        self.shipped = is_shipped_app(app_name)
        """A user's app may give source for some services only: its benign code changes go to
        those (a shipped app's every service has a tree; its schedules stay as they were)."""
        self.level: dict[str, str] = {}
        self.prior: dict[tuple[str, int], str] = {}
        self.model = app
        # Every image a catalog fault sets: a benign re-tag must never make one of them pullable.
        self.fault_images = {f.config.image for f in cat.faults if f.config is not None and f.config.image}
        self.tags: dict[str, set[str]] = {}
        self.live: dict[tuple[str, str], int] = {}  # (service, kind) -> at of its unreverted template change
        mix = Counter(k for _, k in people.row_kinds(cat))
        self.mix = (sorted(mix), [mix[k] / sum(mix.values()) for k in sorted(mix)])
        """The kinds of the fault rows and their shares: benign changes follow it (:meth:`want`)."""
        self.made: Counter[str] = Counter()

    def want(self, kinds: Counter[str]) -> None:
        """Have benign changes follow the mix of ``kinds`` (the schedule's fault rows)."""
        if kinds:
            names = sorted(set(kinds) | {"code", "config"})
            self.mix = (names, [kinds[k] / sum(kinds.values()) for k in names])

    def _has(self, service: str, kind: str) -> bool:
        """Whether ``service`` has something a benign change of ``kind`` can change."""
        svc = self.model.service(service)
        if kind == "probe":
            return svc.readiness_probe is not None or svc.liveness_probe is not None
        if kind == "resources":
            return any(getattr(svc.resources.limits, r) or getattr(svc.resources.requests, r)
                       for r in ("memory", "cpu"))
        return True

    def _file_text(self, service: str, file: str) -> str:
        key = (service, file)
        if key not in self.text:
            self.text[key] = (source_root(self.app_name) / service / file).read_text(encoding="utf-8")
        return self.text[key]

    def change(self, rng: np.random.Generator, at: int, no_code: frozenset[str],
               no_change: frozenset[str], no_template: frozenset[str] = frozenset()) -> BenignChange | None:
        """A benign change at ``at`` (module docstring), or None when no service may take one.
        Its kind is drawn from the kinds of the catalog's changes; a service in ``no_template``
        takes no image, probe, resources or scale change (a code or config change instead
        when no service may take one)."""
        made = self._change(rng, at, no_code, no_change, no_template)
        if made is not None:
            self.made[_log_kind(made.kind, made.file)] += 1
        return made

    def _change(self, rng: np.random.Generator, at: int, no_code: frozenset[str],
                no_change: frozenset[str], no_template: frozenset[str]) -> BenignChange | None:
        # The kind first, then a service free to take it. The kind is the one furthest behind
        # its share of the schedule's fault rows (ties broken at random): the guards block
        # template changes far more often than code ones, so a kind that was blocked is tried
        # first next time, and the mix of kinds comes out that of the faults' rows.
        names, kw = self.mix
        total = sum(self.made.values()) + 1
        noise = rng.random(len(names))
        order = sorted(range(len(names)), key=lambda i: -(kw[i] * total - self.made[names[i]] + 0.5 * noise[i]))
        for kind in (names[i] for i in order):
            if kind in TEMPLATE_KINDS:
                fits = [s for s in self.services if s not in no_change and s not in no_template
                        and (s, kind) not in self.live and self._has(s, kind)]
                if not fits:
                    continue
                service = fits[int(rng.choice(len(fits), p=np.asarray(people.service_weights(self.cat, fits))))]
                author = people.author_for(self.cat, service, float(rng.random()))
                got = self._template(rng, at, service, kind, author, rng.random(4))
                if got is not None:
                    self.live[(service, kind)] = at
                    return got
            elif kind == "code":
                ok = [s for s in self.services if s not in no_change and s not in no_code
                      and (self.shipped or self.files.get(s))]
                if not ok:
                    continue
                service = ok[int(rng.choice(len(ok), p=np.asarray(people.service_weights(self.cat, ok))))]
                author = people.author_for(self.cat, service, float(rng.random()))
                u = rng.random(4)
                code = self._code(rng, service)
                if code is not None:
                    file, find, replace = code
                    summary = self._subject(service, _log_kind("code", file), u, f"docs({service}): comment {file}")
                    return BenignChange(at=at, service=service, kind="code", summary=summary, author=author,
                                        file=file, find=find, replace=replace)
            else:
                break  # config: below
        allowed = [s for s in self.services if s not in no_change]
        if not allowed:
            return None
        weights = np.asarray(people.service_weights(self.cat, allowed))
        service = allowed[int(rng.choice(len(allowed), p=weights))]
        author = people.author_for(self.cat, service, float(rng.random()))
        u = rng.random(4)
        levels = [lv for lv in ("info", "debug", "warn") if lv != self.level.get(service, "info")]
        level = levels[int(rng.integers(len(levels)))]
        self.prior[(service, at)] = self.level.get(service, "info")
        self.level[service] = level
        summary = self._subject(service, "config", u, f"config({service}): set LOG_LEVEL to {level}")
        return BenignChange(at=at, service=service, kind="config", summary=summary, author=author,
                            env={"LOG_LEVEL": level})

    def _subject(self, service: str, kind: str, u: np.ndarray, own: str) -> str:
        """The commit subject of a benign change of pipeline-log ``kind`` to ``service``, worded
        by the draws ``u[1:]``. A shipped app's from all the service's subjects (its schedules
        stay as they were); a user app's only from the catalog's subjects of ``kind``
        (:func:`faults.people.subjects` with ``strict``), else ``own``, which says what the
        change does: a generic catalog's subjects are templates, and a template worded on a
        row of another kind than its faults' would mark every fault that uses it."""
        if self.shipped:
            pool = people.subjects(self.cat, service)
        else:
            pool = people.subjects(self.cat, service, kind, strict=True) or [own]
        return people.word(pool, *map(float, u[1:]))

    def _code(self, rng: np.random.Generator, service: str) -> tuple[str, str, str] | None:
        files = list(self.files.get(service, []))
        while files:
            file = files.pop(int(rng.integers(len(files))))
            text = self._file_text(service, file)
            anchors = _anchors(self.cat, service, file, text)
            if not anchors:
                continue
            lines = text.split("\n")
            i = anchors[int(rng.integers(len(anchors)))]
            shaped = next((ln for ln in lines[i:] if ln.strip()), lines[i])
            indent = shaped[:len(shaped) - len(shaped.lstrip())]
            prefix = _COMMENT[Path(file).suffix]
            size = self.sizes[int(rng.integers(len(self.sizes)))]
            notes = [_BENIGN_NOTES[int(j)] for j in rng.integers(len(_BENIGN_NOTES), size=size)]
            block = "".join(f"{indent}{prefix} {n}\n" for n in notes)
            find = f"\n{lines[i - 1]}\n{lines[i]}\n"
            replace = f"\n{lines[i - 1]}\n{block}{lines[i]}\n"
            self.text[(service, file)] = text.replace(find, replace, 1)
            return file, find, replace
        return None

    def _template(self, rng: np.random.Generator, at: int, service: str, kind: str, author: str,
                  u: np.ndarray) -> BenignChange | None:
        """A harmless pod-template change of ``kind``, or None when the service has nothing to
        change of it (no probe, no resources): a re-tag of the running build with a patch tag
        no catalog fault uses, a looser probe, a higher limit or one more replica."""
        svc = self.model.service(service)
        summary = (people.word(people.subjects(self.cat, service, kind), *map(float, u[1:])) if self.shipped
                   else self._subject(service, kind, u, f"deploy({service}): update the {kind}"))
        base: dict[str, Any] = {"at": at, "service": service, "kind": kind, "summary": summary, "author": author}

        def make(**payload: Any) -> BenignChange:
            return BenignChange.model_validate({**base, **payload})
        if kind == "image":
            tag = self._next_tag(service)
            return None if tag is None else make(image_tag=tag)
        if kind == "probe":
            probes = [name for name, p in (("readiness", svc.readiness_probe), ("liveness", svc.liveness_probe))
                      if p is not None]
            if not probes:
                return None
            probe = probes[int(rng.integers(len(probes)))]
            if rng.random() < 0.5:
                return make(probe=probe, period_s=int(rng.choice([5, 10])))
            return make(probe=probe, failure_threshold=1)
        if kind == "resources":
            res = [r for r in ("memory", "cpu")
                   if getattr(svc.resources.limits, r) or getattr(svc.resources.requests, r)]
            if not res:
                return None
            return make(resource=res[int(rng.integers(len(res)))],
                                factor=float(rng.choice([1.25, 1.5])))
        return make(replicas=1)

    def _next_tag(self, service: str) -> str | None:
        """A patch tag above the service's release tag that no catalog fault's image has and no
        earlier re-tag took (``v0.10.3`` -> ``v0.10.4``), or None."""
        repo, _, tag = self.model.service(service).image.rpartition(":")
        m = re.fullmatch(r"(v?\d+\.\d+\.)(\d+)(.*)", tag)
        used = self.tags.setdefault(service, set())
        for n in range(1, 50):
            new = f"{m.group(1)}{int(m.group(2)) + n}{m.group(3)}" if m else f"{tag}-r{n}"
            if f"{repo}:{new}" not in self.fault_images and new not in used:
                used.add(new)
                return new
        return None

    def revert(self, ch: BenignChange, at: int, author: str) -> BenignChange | None:
        """The revert of benign change ``ch`` at ``at``, or None when its edit is gone."""
        summary = people.revert_subject(ch.summary)
        if ch.kind in TEMPLATE_KINDS:
            if self.live.get((ch.service, ch.kind)) != ch.at:
                return None
            del self.live[(ch.service, ch.kind)]
            return BenignChange(at=at, service=ch.service, kind=ch.kind, summary=summary, author=author,
                                revert_of=ch.at)
        if ch.kind == "code":
            assert ch.file is not None and ch.find is not None and ch.replace is not None
            key = (ch.service, ch.file)
            if ch.replace not in self.text.get(key, ""):
                return None
            self.text[key] = self.text[key].replace(ch.replace, ch.find, 1)
            return BenignChange(at=at, service=ch.service, kind="code", summary=summary, author=author, file=ch.file,
                                find=ch.replace, replace=ch.find)
        assert ch.env is not None
        if self.level.get(ch.service) != ch.env["LOG_LEVEL"]:
            return None  # changed again since: the revert would undo someone else's change
        prior = self.prior.get((ch.service, ch.at), "info")
        self.level[ch.service] = prior
        return BenignChange(at=at, service=ch.service, kind="config", summary=summary, author=author,
                            env={"LOG_LEVEL": prior})


def generate(app: str, seed: int, regime: str, catalog: Catalog | None = None,
             catalog_file: str | None = None) -> Schedule:
    """Generate the schedule of (app, seed, regime) (module docstring).

    Args:
        app: an app reference (:func:`engine.apps.model.load_app`: a shipped name, an app file
            or an app directory).
        seed: the schedule's seed.
        regime: one of :data:`REGIMES`.
        catalog: the catalog to draw from (default: the app's, :func:`faults.spec.app_catalog`).
        catalog_file: the catalog file of a user's app file (``--catalog``); the schedule
            records it (``catalog:``) so runs, seals and replays find the same catalog.

    Raises:
        ValueError: unknown regime; FileNotFoundError: no catalog for the app;
        faults.spec.CatalogError: a catalog that does not load.
    """
    if regime not in REGIMES:
        raise ValueError(f"unknown regime {regime!r}; choose one of {', '.join(REGIMES)}")
    cfg = REGIMES[regime]
    cat = catalog or app_catalog(app, catalog_file)
    model = load_app(app)
    rng = _rng(model.name, seed, regime)  # the model's name, not where its file lives
    duration = int(cfg["duration_s"])
    lo, hi = cfg["life_clip"]
    n_faults = int(cfg["faults"])
    if regime == "marathon":
        n_faults = int(np.clip(rng.poisson(n_faults), 52, 68))
    by_bucket: dict[str, list[FaultSpec]] = {}
    for spec in cat.faults:
        by_bucket.setdefault(_bucket(spec), []).append(spec)
    # How many faults of each bucket this schedule draws: the documented mix, as far as the
    # catalog holds faults of each bucket (mix_quota).
    span = duration - FIRST_FAULT_S - lo - 60
    # Exclusive faults beyond the cap are not available to the quota: what the infrastructure
    # bucket cannot take goes to the others (mix_quota).
    cap = max(1, min(span // EXCLUSIVE_EVERY_S, len(model.services) // SERVICES_PER_EXCLUSIVE))
    room = {b: len(by_bucket.get(b, [])) for b in MIX}
    n_exclusive = sum(1 for s in by_bucket.get("infrastructure", []) if _exclusive(s))
    room["infrastructure"] -= max(0, n_exclusive - cap)
    quota = mix_quota(n_faults, room)
    used: set[str] = set()
    busy: dict[str, list[tuple[int, int]]] = {}
    outages: list[tuple[int, int]] = []
    faults: list[ScheduledFault] = []
    mean_gap = span / n_faults

    def free(spec: FaultSpec, start: int, end: int) -> bool:
        if _exclusive(spec):
            if any(not (f.end <= start or end <= f.at) for f in faults):
                return False
        elif any(not (e <= start or end <= s) for s, e in outages):
            return False
        # The target is busy from injection until the revert has built and rolled out.
        until = end + int(onset_seconds(model, spec))
        return all(e <= start or until <= s for s, e in busy.get(spec.target, []))

    def place(spec: FaultSpec, at: int, life: int) -> None:
        quota[_bucket(spec)] -= 1
        used.add(spec.id)
        # The target stays busy until this fault's revert has built and rolled out.
        busy.setdefault(spec.target, []).append((at, at + life + int(onset_seconds(model, spec))))
        if _exclusive(spec):
            outages.append((at, at + life))
        faults.append(ScheduledFault(at=at, fault=spec.id, target=spec.target, lifetime=life))

    # Infrastructure faults are placed first, each at a uniform time of the window: a zone outage
    # needs a window no other fault shares, and a schedule filled in arrival order (about seven
    # faults live at once in the marathon) leaves none. Runtime faults come next, the same way:
    # they target a few services (Online Boutique's ten, six), which change faults on every
    # service would otherwise have taken first. n uniform times in a window are a Poisson
    # process conditioned on its count, so the arrivals keep their law.
    for bucket in ("infrastructure", "runtime"):
        tries = 0
        while quota[bucket] > 0 and tries < 50 * max(1, quota[bucket]):
            tries += 1
            spare = [s for s in by_bucket.get(bucket, []) if s.id not in used
                     and not (_exclusive(s) and len(outages) >= cap)]
            if not spare:
                break
            spec = spare[int(rng.integers(len(spare)))]
            at = FIRST_FAULT_S + round(float(rng.uniform(0, span)))
            drawn = int(np.clip(round(float(rng.lognormal(np.log(cfg["median_life_s"]), LIFE_SIGMA))), lo, hi))
            life = lifetime(model, spec, drawn)
            if free(spec, at, at + life):
                place(spec, at, life)
    # Then one arrival per remaining (change) quota unit, in a seeded order: each takes the next
    # arrival time of the Poisson process and a free fault of its bucket, and is drawn again at
    # later times while none is free; an arrival that finds no slot in LABEL_TRIES draws is
    # dropped, so a crowded schedule loses change arrivals (the buckets placed first keep theirs).
    labels = [b for b in MIX for _ in range(quota[b]) if b not in ("infrastructure", "runtime")]
    order = rng.permutation(len(labels))
    t = float(FIRST_FAULT_S)
    for i in order:
        bucket = labels[int(i)]
        for _ in range(LABEL_TRIES):
            at = round(t)
            drawn = int(np.clip(round(float(rng.lognormal(np.log(cfg["median_life_s"]), LIFE_SIGMA))), lo, hi))
            pool = [s for s in by_bucket[bucket] if s.id not in used and free(s, at, at + lifetime(model, s, drawn))]
            t += float(rng.exponential(mean_gap))
            if t > FIRST_FAULT_S + span:
                t = FIRST_FAULT_S + float(rng.uniform(0, span))
            if pool:
                spec = pool[int(rng.integers(len(pool)))]
                place(spec, at, lifetime(model, spec, drawn))
                break
    faults.sort(key=lambda f: (f.at, f.fault))
    # The run lasts until the last fault is reverted (arrivals keep to the regime's window).
    duration = max(duration, max((f.end for f in faults), default=0) + 60)
    specs = {f.id: f for f in cat.faults}
    changes: list[BenignChange] = []
    benign = _Benign(app, cat)
    benign.want(Counter(people.row_kind(spec) for spec in (specs[f.fault] for f in faults)
                        if people.shows_in_log(spec)))
    life_mu = np.log(cfg["median_life_s"])

    def guards(at: int) -> tuple[frozenset[str], frozenset[str]]:
        live = [specs[f.fault] for f in faults if f.at <= at < f.end]
        near = [specs[f.fault] for f in faults if f.at - _lead(model, specs[f.fault]) <= at < f.end]
        biting = [specs[f.fault] for f in faults
                  if f.at - _lead(model, specs[f.fault]) <= at < f.at + onset_seconds(model, specs[f.fault])]
        return (frozenset(s.target for s in live if s.mechanism == "image"),
                frozenset(s.target for s in near if s.mechanism in PROCESS_MECHANISMS)
                | frozenset(s.target for s in biting))

    # A template change (and its revert) restarts or adds pods: it keeps away from every service
    # a fault works through -- its target, flag service, remedy service, caller, store -- from a
    # build and rollout before its injection, through the fault's life, until its revert has
    # rolled out, and away from every service while a zone outage is near or live.
    # The lead of a service's change is its own rollout (twice over: the change, then a revert).
    window = {s: int(2 * rollout_seconds(model, s)) for s in benign.services}
    widest = max(window.values(), default=0)
    reach = [(f.at - _lead(model, specs[f.fault]), f.end + int(onset_seconds(model, specs[f.fault])),
              specs[f.fault], _fault_services(specs[f.fault])) for f in faults]

    def template_guard(at: int) -> frozenset[str]:
        out: set[str] = set()
        for start, until, spec, touched in reach:
            if not start - widest <= at < until:
                continue
            hit = benign.services if spec.mechanism == "zone-outage" else touched
            out.update(s for s in hit if start - window.get(s, widest) <= at)
        return frozenset(out)

    reverts: list[tuple[int, int, BenignChange, str]] = []  # (at, order, change reverted, author)
    # A benign change never queues behind another one: a queue would roll out later than the
    # guards above allow for (the build and rollout of one change).
    settled: dict[str, int] = {}

    def settle(ch: BenignChange) -> None:
        svc = model.service(ch.service)
        build = build_seconds(svc.language) if ch.kind == "code" else 0.0
        settled[ch.service] = ch.at + int(build + 2 * rollout_seconds(model, ch.service))
    # Benign changes arrive in the faults' window and are reverted a fault-like lifetime
    # later, so the time of a change says nothing either.
    t = FIRST_FAULT_S + float(rng.exponential(cfg["benign_every_s"]))
    while t < FIRST_FAULT_S + span or reverts:
        at = round(t) if t < FIRST_FAULT_S + span else duration
        while reverts and reverts[0][0] <= at:
            r_at, _, orig, author = reverts.pop(0)
            no_code, no_change = guards(r_at)
            if orig.service in no_change or (orig.kind == "code" and orig.service in no_code) \
                    or (orig.kind in TEMPLATE_KINDS and orig.service in template_guard(r_at)) \
                    or settled.get(orig.service, 0) > r_at:
                continue  # the service is busy then; the change stays
            back = benign.revert(orig, r_at, author)
            if back is not None:
                changes.append(back)
                settle(back)
        if at >= duration:
            break
        no_code, no_change = guards(at)
        no_change |= frozenset(name for name, until in settled.items() if until > at)
        change = benign.change(rng, at, no_code=no_code, no_change=no_change, no_template=template_guard(at))
        if change is not None:
            changes.append(change)
            settle(change)
            drawn = int(np.clip(round(float(rng.lognormal(life_mu, LIFE_SIGMA))), lo, hi))
            like = [f for f in cat.faults if people.row_service(f) == change.service] or list(cat.faults)
            life = lifetime(model, like[int(rng.integers(len(like)))], drawn)
            author = people.author_for(cat, change.service, float(rng.random()))
            if rng.random() < BENIGN_REVERT_P and at + life < duration - 120:
                reverts.append((at + life, len(changes), change, author))
                reverts.sort(key=lambda r: (r[0], r[1]))
        t += float(rng.exponential(cfg["benign_every_s"]))
    changes.sort(key=lambda c: c.at)
    bursts = []
    t = float(rng.exponential(cfg["burst_every_s"]))
    while t < duration - 300:
        length = int(rng.integers(60, 181))
        factor = round(float(rng.uniform(1.4, 1.9)), 2)
        bursts.append(LoadBurst(at=round(t), duration=length, factor=factor))
        t += length + float(rng.exponential(cfg["burst_every_s"]))
    head: dict[str, Any] = {"app": app} if catalog_file is None else {"app": app, "catalog": catalog_file}
    data = {**head, "seed": seed, "regime": regime, "generator": GENERATOR_VERSION, "duration_s": duration,
            "faults": [f.model_dump() for f in faults], "changes": [c.model_dump(exclude_none=True) for c in changes],
            "bursts": [b.model_dump() for b in bursts],
            "noise": _noise(app, seed, duration, faults, cat)}
    return parse_schedule(data, f"<generated {app}/{regime}/{seed}>", cat)


def _noise(app: str, seed: int, duration: int, faults: list[ScheduledFault], cat: Catalog) -> dict[str, Any]:
    """The schedule's background alert noise (:mod:`faults.noise`), from its own random stream
    of (app, seed), so it draws nothing from the faults' stream, and placed around the faults
    so that none of it can be attributed to one."""
    return background.plan(app, seed, duration, faults, cat).model_dump(mode="json", exclude_none=True)


def _log_kind(kind: str, file: str | None) -> str:
    """The pipeline log's kind of a change of ``kind``: a code change to a configuration file
    rolls out as configuration (no build)."""
    return "config" if kind == "code" and file is not None and file.endswith(CONFIG_SUFFIXES) else kind


def _fault_services(spec: FaultSpec) -> set[str]:
    """Every service a fault works through: its target, flag service, remedy service, and the
    caller or store of a runtime fault."""
    out = {spec.target}
    if spec.config is not None and spec.config.flag is not None:
        out.add(spec.config.flag.service)
    if spec.remedy.service:
        out.add(spec.remedy.service)
    if spec.runtime is not None:
        out.update(s for s in (spec.runtime.caller, spec.runtime.store) if s)
    return out


