"""Hybrid search over memory: full text (SQLite FTS5, bm25) and vectors, fused.

Full text is indexed per passage: a node's body is cut into passages of about
``PASSAGE_CHARS`` characters, each an FTS row carrying the node's title, so a long
node is found by the passage that matches rather than drowned by its length, and
results are per node (its best passage, whose snippet is shown). A passage's rowid
is its node's index rowid times ``SPAN`` plus its number. The title counts
``TITLE_WEIGHT`` times the body; the titles of a node's ancestors (its outline
path) that match the query add ``PATH_WEIGHT`` of their own title score, so
"Miscellaneous" under "Version 9.4" is found by "miscellaneous in 9.4".

Each side proposes its best ``POOL`` nodes with its scores; each side's scores are
standardised (minus their mean, over their standard deviation) and a node's fused
score is the sum of its two standard scores, a side that did not propose it adding 0
(an average node of that side). A note found only by a rare word and a note found only
by meaning both reach the top, and a note both find comes first; unlike a fusion of
ranks, how far a hit stands above the others on its side counts, so a clear match on
one side is not drowned by the other side's noise. Full text scores no node it did not
match (bm25 0), so its scores are standardised as if at least ``TEXT_FLOOR`` nodes had
been scored, the missing ones at 0: a word that matches one note alone makes it stand
about three deviations out, as the vector side's best do.
bench/embedders.py measures recall@10 and MRR of each side and of the fusion; the
weights here were chosen on its tuning questions only (a passage of 400 to 1,500
characters or a title weight of 2 to 8 changed recall there by no more than one
question; standard scores found 5 paraphrases of 45 more than a fusion of ranks, with
either side weighted 0.8 to 1.2 or a pool of 30 to 100 no better; Porter stemming
in full text helped full text alone and the fusion not at all).
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, replace

from passepartout.sqlparts import in_parts
from passepartout.text import one_line

POOL = 50  # candidates taken from each side before fusing
TEXT_FLOOR = 10  # full-text scores are standardised as if at least this many
PASSAGE_CHARS = 800  # characters of body in one full-text passage
SPAN = 1024  # passage rowids per node; a node's passages past the last are kept in it
TITLE_WEIGHT = 4.0  # bm25 weight of the title column against the body's 1
PATH_WEIGHT = 0.5  # share of an ancestor's title score a node gains
FTS_LAYOUT = "passages-1"  # the fts table's layout, kept in meta (older stores are rebuilt)
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


def passages(body: str, size: int = PASSAGE_CHARS, most: int = SPAN) -> list[str]:
    """``body`` cut into passages of about ``size`` characters, at a blank line, a line
    end or a space in the second half of each when there is one; never more than
    ``most`` (the last takes the rest); one empty passage for an empty body."""
    out: list[str] = []
    start = 0
    while start < len(body):
        end = start + size
        if len(out) == most - 1 or end >= len(body):
            end = len(body)
        else:
            half = start + size // 2
            cut = body.rfind("\n\n", half, end)
            if cut < 0:
                cut = max(body.rfind("\n", half, end), body.rfind(" ", half, end))
            end = cut + 1 if cut > 0 else end
        piece = body[start:end].strip()
        if piece:
            out.append(piece)
        start = end
    return out or [""]


def fts_rows(rowid: int, title: str, body: str) -> list[tuple[int, str, str]]:
    """The full-text rows of the node at index ``rowid``: (rowid, title, passage)."""
    return [(rowid * SPAN + i, title, p) for i, p in enumerate(passages(body))]


def fts_write(conn: sqlite3.Connection, rows: Sequence[tuple[int, str, str]]) -> None:
    conn.executemany("INSERT INTO fts(rowid, title, body) VALUES (?, ?, ?)", rows)


def fts_delete(conn: sqlite3.Connection, rowid: int) -> None:
    """Remove every passage of the node at index ``rowid``."""
    conn.execute("DELETE FROM fts WHERE rowid >= ? AND rowid < ?",
                 (rowid * SPAN, (rowid + 1) * SPAN))


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
    """The ``k`` best nodes by full text: each scored by its best passage (bm25, the
    title weighted) plus a share of its ancestors' matching titles, with a snippet
    of that passage."""
    match = fts_query(query)
    if match is None or k < 1:
        return []
    weights = f"bm25(fts, {TITLE_WEIGHT}, 1.0)"
    best: dict[int, tuple[float, int]] = {}  # node rowid -> (score, passage rowid)
    for rowid, score in conn.execute(
        f"SELECT rowid, -{weights} FROM fts WHERE fts MATCH ? ORDER BY {weights} LIMIT ?",
        (match, max(k, POOL) * 8),
    ):
        node = rowid // SPAN
        if node not in best:
            best[node] = (float(score), rowid)
    parents = _parents(conn, list(best))
    titles = _title_scores(conn, match)
    scored = []
    for node, (score, passage) in best.items():
        path, up = 0.0, parents.get(node)
        while up is not None:
            path += titles.get(up, 0.0)
            up = parents.get(up)
        scored.append((score + PATH_WEIGHT * path, node, passage))
    scored.sort(key=lambda t: (-t[0], t[1]))
    hits = []
    for score, node, passage in scored[:k]:
        row = conn.execute(
            "SELECT idx.id, fts.title, snippet(fts, 1, '', '', '…', 24) FROM fts"
            " JOIN idx ON idx.rowid = ? WHERE fts MATCH ? AND fts.rowid = ?",
            (node, match, passage),
        ).fetchone()
        if row is not None:
            hits.append(SearchHit(row[0], row[1], score, "fts", snippet(row[2] or "")))
    return hits


def _parents(conn: sqlite3.Connection, nodes: list[int]) -> dict[int, int | None]:
    """Index rowid -> its parent's (None at the top) for ``nodes`` and every ancestor
    of theirs: one query per level of the outline."""
    parents: dict[int, int | None] = {}
    todo = list(dict.fromkeys(nodes))
    for _ in range(64):  # deeper outlines than this are not org files
        if not todo:
            break
        found: dict[int, int] = {}
        for part, marks in in_parts(todo):
            found.update(conn.execute(
                "SELECT c.rowid, p.rowid FROM idx AS c JOIN idx AS p ON p.id = c.parent"
                f" WHERE c.rowid IN ({marks})", part).fetchall())
        for n in todo:
            parents[n] = found.get(n)
        todo = [p for p in dict.fromkeys(found.values()) if p not in parents]
    return parents


def _title_scores(conn: sqlite3.Connection, match: str) -> dict[int, float]:
    """Index rowid -> the score of its title alone against the query, for every node
    whose title matches (one pass over the first passages)."""
    out: dict[int, float] = {}
    for rowid, score in conn.execute(
        "SELECT rowid, -bm25(fts, 1.0, 0.0) FROM fts WHERE fts MATCH ? AND rowid % ? = 0",
        ("{title} : (" + match + ")", SPAN),
    ):
        out[rowid // SPAN] = float(score)
    return out


def standard_scores(hits: Sequence[SearchHit], floor: int = 0) -> dict[str, float]:
    """Each hit's score minus the mean, over the standard deviation (1 when they are all
    equal), the statistics taken as if ``floor`` scores at least had been given, the
    missing ones 0."""
    scores = [h.score for h in hits]
    n = max(len(scores), floor)
    if n == 0:
        return {}
    mean = sum(scores) / n
    var = (sum((x - mean) ** 2 for x in scores) + (n - len(scores)) * mean * mean) / n
    sd = math.sqrt(var) or 1.0
    out: dict[str, float] = {}
    for h in hits:
        out.setdefault(h.id, (h.score - mean) / sd)
    return out


def fuse(text: Sequence[SearchHit], vector: Sequence[SearchHit], k: int,
         threshold: float | None = None) -> list[SearchHit]:
    """The best ``k`` of both lists by the sum of their standard scores (see the
    module): full text standardised with ``TEXT_FLOOR``, a side missing a node adding 0.
    With ``threshold``, vector hits scoring under it are then left out, as if not
    proposed (standardised among the few above it, one alone would be average)."""
    score: dict[str, float] = {}
    first: dict[str, SearchHit] = {}
    methods: dict[str, list[str]] = {}
    z_vector = standard_scores(vector)
    if threshold is not None:
        vector = [h for h in vector if h.score >= threshold]
        z_vector = {h.id: z_vector[h.id] for h in vector}
    for hits, z in ((text, standard_scores(text, TEXT_FLOOR)), (vector, z_vector)):
        for i, v in z.items():
            score[i] = score.get(i, 0.0) + v
        for h in hits:
            if h.id not in first or (not first[h.id].snippet and h.snippet):
                first[h.id] = h
            methods.setdefault(h.id, []).append(h.method)
    order = sorted(score, key=lambda i: (-score[i], i))[:k]
    return [
        replace(first[i], score=score[i], method="+".join(dict.fromkeys(methods[i])))
        for i in order
    ]
