"""Hybrid search over memory: full text (SQLite FTS5, bm25) and vectors, fused.

Each side proposes its best ``POOL`` nodes; reciprocal rank fusion (the sum of
1 / (RRF_K + rank) over the lists a node is in) orders the union, so a note found
only by a rare word and a note found only by meaning both reach the top, and a
note both find comes first. Scores of the two sides are never compared, only ranks.
bench/embedders.py measures recall@10 of each side and of the fusion.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, replace

from passepartout.text import one_line

RRF_K = 60  # the usual constant: a low rank counts, the very top does not dominate
POOL = 50  # candidates taken from each side before fusing
SNIPPET_CHARS = 160
# Words nearly every note has: OR-ed into a full-text query they rank noise first
# (bench/embedders.py: hybrid recall@10 fell below vectors alone with them in).
_STOPWORDS = """a an and are as at be but by can do does for from had has have how i if in into
is it its me my of on or our should so that the their then there these they this to was we
were what when where which who why will with you your"""
STOPWORDS = frozenset(_STOPWORDS.split())


@dataclass(frozen=True)
class SearchHit:
    """A search result. ``method`` says how it was found: "fts", "embedding", or
    "fts+embedding" for both; ``snippet`` is a line of its text around what matched
    and ``file`` the memex-relative org file it lives in ("" when unknown)."""

    id: str
    title: str
    score: float
    method: str
    snippet: str = ""
    file: str = ""


def snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    """Text on one line for a terminal or a model, cut at ``limit`` characters on a
    word."""
    return one_line(text, limit, on_word=True)


def fts_query(query: str) -> str | None:
    """An FTS5 query matching any word of ``query`` but the stopwords (unless it has
    nothing else); None when it has no word. Each word is quoted, so FTS5's own
    syntax in a query is only text."""
    words = re.findall(r"\w+", query)
    words = [w for w in words if w.lower() not in STOPWORDS] or words
    if not words:
        return None
    return " OR ".join('"' + w + '"' for w in words)


def text_hits(conn: sqlite3.Connection, query: str, k: int) -> list[SearchHit]:
    """The ``k`` best full-text matches by bm25, each with a snippet of its body."""
    match = fts_query(query)
    if match is None or k < 1:
        return []
    rows = conn.execute(
        "SELECT idx.id, fts.title, bm25(fts), snippet(fts, 1, '', '', '…', 24)"
        " FROM fts JOIN idx ON idx.rowid = fts.rowid"
        " WHERE fts MATCH ? ORDER BY bm25(fts) LIMIT ?",
        (match, k),
    ).fetchall()
    return [SearchHit(r[0], r[1], -float(r[2]), "fts", snippet(r[3] or "")) for r in rows]


def fuse(text: Sequence[SearchHit], vector: Sequence[SearchHit], k: int) -> list[SearchHit]:
    """Reciprocal rank fusion of the two ranked lists; the best ``k``."""
    score: dict[str, float] = {}
    first: dict[str, SearchHit] = {}
    methods: dict[str, list[str]] = {}
    for hits in (text, vector):
        for rank, h in enumerate(hits):
            score[h.id] = score.get(h.id, 0.0) + 1.0 / (RRF_K + rank + 1)
            if h.id not in first or (not first[h.id].snippet and h.snippet):
                first[h.id] = h
            methods.setdefault(h.id, []).append(h.method)
    order = sorted(score, key=lambda i: (-score[i], i))[:k]
    return [
        replace(first[i], score=score[i], method="+".join(dict.fromkeys(methods[i])))
        for i in order
    ]
