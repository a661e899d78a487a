"""A long list of values asked about in SQL ``IN (...)``, in parts under SQLite's limit
on bound parameters (999 in older builds)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

T = TypeVar("T")

IN_PART = 500  # values in one "IN (...)"


def in_parts(values: Sequence[T]) -> Iterator[tuple[Sequence[T], str]]:
    """Each part of ``values`` with its placeholders (``"?,?,?"``) for ``IN (...)``."""
    for start in range(0, len(values), IN_PART):
        part = values[start : start + IN_PART]
        yield part, ",".join("?" * len(part))
