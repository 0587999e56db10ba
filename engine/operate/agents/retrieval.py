"""BM25 retrieval over runbooks and past incidents (for the ``rag`` agent).

Passages are markdown sections: each runbook in ``engine/operate/agents/runbooks/`` is split at its
``## `` headings (the passage title is "runbook title / section"), and each past-incident
record the agent wrote into its workspace (``incidents/*.md``) is one passage. Ranking is
Okapi BM25 (Robertson and Zaragoza, "The Probabilistic Relevance Framework: BM25 and
Beyond", 2009) from ``rank-bm25`` with its defaults (k1 = 1.5, b = 0.75); no model weights.

Tokens are lower-cased words, with CamelCase alert names and hyphen/dot-joined names split
into their parts *and* kept whole, so ``HighRequestErrorRate`` matches "error rate" and
``currencyservice`` matches itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from rank_bm25 import BM25Okapi

RUNBOOKS_DIR = Path(__file__).resolve().parent / "runbooks"
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/-]*")
_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
STOP_WORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "in", "is", "it", "its", "of",
    "on", "or", "that", "the", "this", "to", "was", "were", "will", "with", "when", "what", "which", "not", "no"})


def tokenize(text: str) -> list[str]:
    """Search tokens of ``text`` (module docstring)."""
    out: list[str] = []
    for word in _WORD.findall(text):
        low = word.lower().strip(".:/-")
        if low and low not in STOP_WORDS:
            out.append(low)
        parts = [p.lower() for p in _PART.findall(word)]
        if len(parts) > 1:
            out.extend(p for p in parts if p not in STOP_WORDS)
    return out


@dataclass(frozen=True)
class Passage:
    """One retrievable passage: ``source`` is ``runbook:<file>`` or ``incident:<path>``."""

    source: str
    title: str
    text: str


def split_markdown(source: str, text: str) -> list[Passage]:
    """A markdown document as passages, one per ``## `` section (the preamble is one too)."""
    title = source
    sections: list[tuple[str, list[str]]] = [("", [])]
    for line in text.splitlines():
        if line.startswith("# ") and title == source:
            title = line[2:].strip()
            continue
        if line.startswith("## "):
            sections.append((line[3:].strip(), []))
            continue
        sections[-1][1].append(line)
    out = []
    for heading, lines in sections:
        body = "\n".join(lines).strip()
        if body:
            out.append(Passage(source, f"{title} / {heading}" if heading else title, body))
    return out


def runbook_passages(directory: Path = RUNBOOKS_DIR) -> list[Passage]:
    """Every runbook section in ``directory`` (``*.md``, sorted by file name)."""
    out: list[Passage] = []
    for path in sorted(directory.glob("*.md")):
        out.extend(split_markdown(f"runbook:{path.name}", path.read_text(encoding="utf-8")))
    return out


class KnowledgeBase:
    """A BM25 index over passages.

    Args:
        passages: what to index (may be empty: every search then returns nothing).
    """

    def __init__(self, passages: list[Passage]) -> None:
        self.passages = passages
        docs = [tokenize(f"{p.title} {p.text}") for p in passages]
        self._bm25 = BM25Okapi(docs) if passages else None

    def search(self, query: str, k: int = 3) -> list[tuple[Passage, float]]:
        """The ``k`` best passages for ``query`` with their BM25 scores (only scores > 0), best first;
        ties keep corpus order."""
        terms = tokenize(query)
        if self._bm25 is None or not terms:
            return []
        scores = self._bm25.get_scores(terms)
        ranked = sorted(range(len(self.passages)), key=lambda i: (-float(scores[i]), i))
        return [(self.passages[i], float(scores[i])) for i in ranked[:k] if float(scores[i]) > 0]
