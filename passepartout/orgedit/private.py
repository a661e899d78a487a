"""Which edits touch a private (``@personal``) subtree: the heading edited or moved,
anything inside it, the heading something is put under, or a file that is private
as a whole (its ``#+FILETAGS``).  The same reading of org as the privacy filter's
(:func:`passepartout.org.private.read_private`)."""

from __future__ import annotations

from passepartout.org.heading import Heading
from passepartout.org.outline import Outline
from passepartout.org.private import read_private


def subtree_private(text: str, outline: Outline, heading: Heading, tag: str) -> bool:
    """Whether the heading, an ancestor or anything in its subtree is private."""
    if tag not in text:
        return False
    private = read_private(text, tag).private
    end = outline.subtree_end(heading)
    return any(private[heading.line:end])


def under_private(text: str, outline: Outline, heading: Heading | None, tag: str) -> bool:
    """Whether new text put under ``heading`` (None: at the top of the file) is private
    there: the heading or an ancestor is private, or the whole file is."""
    if tag not in text:
        return False
    reading = read_private(text, tag)
    if reading.file_private:
        return True
    return heading is not None and reading.private[heading.line]


def end_parent(outline: Outline, level: int) -> Heading | None:
    """The heading a new level-``level`` heading at the end of the file falls under."""
    for heading in reversed(outline.headings):
        if heading.level < level:
            return heading
    return None
