"""Org editing as org-mode does it: pure functions from a file's text to its new text.

:mod:`.outline` finds headings (by ``:ID:`` or outline path) and their parts;
:mod:`.edits` makes the edits (add a heading, set a property, set the TODO state with
org's repeater rule, add a note, refile, archive); :mod:`.files` applies them to files
on disk, atomically, refusing private subtrees unless the person approved.
"""

from passepartout.org.outline import OrgEditError, Outline

__all__ = ["OrgEditError", "Outline"]
