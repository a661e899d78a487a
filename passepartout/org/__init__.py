"""Org text, read and written in one place.

:mod:`.heading` reads and writes heading lines (stars, TODO keyword, priority, title,
tags), :mod:`.drawer` reads and writes drawers (the property drawer and named ones),
:mod:`.entry` writes a whole entry (heading, planning, properties, body).  Escaping
of what goes into them stays in :mod:`passepartout.org.escape` (``org_escape``),
which every writer keeps using: the functions here lay out text they are given.

Some readers keep a grammar of their own on purpose: the approvals and grants
parsers are security code and stricter (see ``STRICT_PROPERTY``), and the memory
scanner (:mod:`passepartout.memory.orgscan`) is tuned for import speed.
"""
