"""Org text, read and written in one place, as org-mode reads and writes it.

Reading: :mod:`.heading` (the one ``Heading``; a headline read and written),
:mod:`.drawer` (drawers), :mod:`.outline` (the one ``Outline``: an org text's headings,
as a list and a tree, and where each entry and subtree lies),
:mod:`.timestamps` and :mod:`.repeaters` (timestamps, and what a repeater makes of one),
:mod:`.private` (which lines carry the private tag, inherited as org inherits tags),
:mod:`.filetype` (which files org opens).

Writing: :mod:`.escape` (``org_escape``, the one escaping every writer goes through, and
``org_line`` for a headline or property value), :mod:`.entry` (a whole entry),
:mod:`.edits` (org's own edits as pure functions on a file's text),
:mod:`.edit_files` and :mod:`.private_edits` (the edits applied to files on disk,
refusing private subtrees), :mod:`.eventlog` (``events.org``, where every room reports).

Some readers keep a grammar of their own on purpose: the approvals and grants
parsers are security code and stricter (see ``STRICT_PROPERTY``), and the memory
scanner (:mod:`passepartout.memory.orgscan`) reads as orgparse does, for import speed.
Nothing here evaluates what org would evaluate, and nothing here imports the rooms
that use it (security, events, memory).
"""
