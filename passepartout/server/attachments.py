"""What the person attaches to a turn from Emacs or an ACP client: a region, a subtree,
a buffer, a file, an embedded resource or a link, read and filtered here, never in the
client alone.  One boundary for every face: :func:`place_refusal` judges every file a
face names (an attachment, an ACP resource's claimed URI or link, an MCP argument).

Emacs sends each part as a plist: its label, the file (if any), and either nothing
more (a file on the context list: read here, through the file tools' path rules) or
the buffer's whole text with the part's bounds.  The whole text is read with org's
privacy rules (``@personal`` subtrees, inherited tags, ``#+FILETAGS``), so a region
inside a private subtree is withheld even though the tag line is outside it; the
private lines teach the private index, and the secret mask applies.  Each part and
the whole are bounded.

An ACP client sends an embedded resource as its claimed URI and its text, and a link as
a file to read (:func:`passepartout.faces.acp.updates.prompt_parts`): the claimed place is
judged like a file Emacs names, and the text is filtered like a buffer's.

The places refused, to reading too: what the file tools never read (credential and
secret places, kernel views), and the agent's own places (its state, configuration,
approvals, flight plans and skills), wherever they lie, inside the memex too.  Both the
place as spelled and the real one (symlinks resolved) are judged.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from passepartout.errors import PassepartoutError, ProtocolError
from passepartout.org import private as orgprivacy
from passepartout.org.escape import org_line as one_line
from passepartout.security.privacy import index as privateindex
from passepartout.signals import Keyword, Symbol, plist_to_dict

log = logging.getLogger(__name__)

PART_MAX = 20_000  # characters of one attached part sent to the model
TOTAL_MAX = 60_000  # characters of every part of one turn together
TEXT_MAX = 8_000_000  # characters of the buffer text Emacs may send with a part
ITEMS_MAX = 20
FILE_BYTES = 1_000_000  # bytes read of a file on the context list
RESOURCE_BYTES = FILE_BYTES  # bytes of one resource's text an ACP client may embed
PROMPT_BYTES = 3_000_000  # bytes of a whole ACP prompt, its resources included


class AttachmentError(PassepartoutError):
    """A part that cannot be attached (a credential place, a missing file, ...)."""


@dataclass(frozen=True)
class Item:
    """One part as Emacs described it."""

    name: str
    file: str | None = None
    text: str | None = None
    start: int | None = None
    end: int | None = None


@dataclass(frozen=True)
class Part:
    """One part as the model sees it."""

    name: str
    text: str
    withheld: bool = False
    cut: int = 0  # characters left out to stay within the bound


def read_items(raw: Any) -> list[Item]:
    """Check Emacs's list of plists; a malformed one is a :class:`ProtocolError`."""
    if raw is None or raw == []:
        return []
    if not isinstance(raw, list):
        raise ProtocolError(":attachments must be a list of property lists")
    if len(raw) > ITEMS_MAX:
        raise ProtocolError(f":attachments holds {len(raw)} parts; at most {ITEMS_MAX}")
    return [_item(plist_to_dict(entry)) for entry in raw]


def _string(fields: Mapping[str, Any], key: str) -> str | None:
    value = fields.get(key)
    if value is None or value == []:
        return None
    if not isinstance(value, str) or isinstance(value, Keyword | Symbol):
        raise ProtocolError(f"an attachment's :{key} must be a string")
    return value


def _offset(fields: Mapping[str, Any], key: str) -> int | None:
    value = fields.get(key)
    if value is None or value == []:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ProtocolError(f"an attachment's :{key} must be a character offset")
    return value


def _item(fields: Mapping[str, Any]) -> Item:
    text = _string(fields, "text")
    file = _string(fields, "file")
    if text is None and file is None:
        raise ProtocolError("an attachment needs :text or :file")
    if text is not None and len(text) > TEXT_MAX:
        raise ProtocolError(f"an attachment's text is over {TEXT_MAX} characters")
    name = _string(fields, "name") or (os.path.basename(file) if file else "text")
    return Item(one_line(name, 200), file, text, _offset(fields, "start"),
                _offset(fields, "end"))


def resolve(items: list[Item], sec: Any) -> list[Part]:
    """Each item read, filtered for privacy and secrets, and bounded."""
    if items and sec is None:
        raise AttachmentError("the security layer is not loaded: nothing can be attached")
    parts: list[Part] = []
    room = TOTAL_MAX
    for item in items:
        part = _resolve(item, sec)
        text = part.text
        limit = min(PART_MAX, room)
        cut = max(0, len(text) - limit)
        if cut:
            text = text[:limit]
        room -= len(text)
        parts.append(Part(part.name, text, part.withheld, part.cut + cut))
    return parts


def _resolve(item: Item, sec: Any) -> Part:
    from passepartout.security.files import FileToolError, read_text

    rules = sec.path_rules()
    tag = sec.private_tag
    if item.file is not None:
        _, reason = place_refusal(item.file, sec)
        if reason is not None:
            raise AttachmentError(f"{item.name}: refused: {reason}")
    if item.text is None:
        assert item.file is not None
        try:
            text = read_text(item.file, rules, max_bytes=FILE_BYTES)
        except FileToolError as err:
            raise AttachmentError(f"{item.name}: {err.message}") from None
        source = _real(item.file)
    else:
        text = item.text
        source = _real(item.file) if item.file else f"emacs-buffer:{item.name}"
    start = min(item.start or 0, len(text))
    end = len(text) if item.end is None else max(start, min(item.end, len(text)))
    if item.text is not None and item.file is not None and item.start is None:
        text, start, end = _in_file(item.text, item.file, rules)
    shown, withheld = withhold(text, start, end, tag, source)
    return Part(item.name, sec.vault.mask(shown), withheld)


def _in_file(text: str, file: str, rules: Any) -> tuple[str, int, int]:
    """``text`` as a part of the file it claims to come from, when it is one (an ACP
    client embeds a selection without its tag line): the file's whole text and the
    part's bounds, so that org's privacy rules read it in place.  Else ``text`` alone."""
    from passepartout.security.files import FileToolError, read_text

    try:
        whole = read_text(file, rules, max_bytes=FILE_BYTES)
    except FileToolError:
        return text, 0, len(text)  # a file not on disk (unsaved) or not a regular one
    at = whole.find(text) if text.strip() else -1
    if at < 0:
        return text, 0, len(text)
    return whole, at, at + len(text)


def own_places(sec: Any) -> list[tuple[Path, str]]:
    """The agent's own places (each as spelled and as it really is), and what each is."""
    places = sec.places
    named: list[tuple[Path, str]] = [
        (places.config_dir, "the agent's configuration"),
        (places.state_dir, "the agent's state"),
        (places.approvals_file, "the agent's approvals file"),
        (Path(sec.book.ledger_path), "the agent's flight plans"),
        *((d, "a skills directory of the agent") for d in places.skill_dirs),
    ]
    out: list[tuple[Path, str]] = []
    for root, what in named:
        spelled = os.path.expanduser(str(root))
        for form in dict.fromkeys((os.path.abspath(spelled), os.path.realpath(spelled))):
            out.append((Path(form), what))
    return out


def own_place(path: Path, sec: Any) -> str | None:
    """What of the agent's own the absolute path ``path`` lies in (None: nothing)."""
    for root, what in own_places(sec):
        if path == root or root in path.parents:
            return what
    return None


def place_refusal(raw: str, sec: Any, *,
                  base: Path | None = None) -> tuple[Path | None, str | None]:
    """Where the file a face names really is, and why it is refused (None: it may be
    read).  ``raw`` may start with ``~``; a relative one is taken in ``base`` (else the
    workspace).  Refused: what the file tools never read, and the agent's own places
    (:func:`own_places`), judged as spelled and with symlinks resolved."""
    from passepartout.security.files.paths import denial

    if not isinstance(raw, str) or not raw.strip() or "\x00" in raw:
        return None, "an empty or unusable path"
    text = os.path.expanduser(raw)
    if base is not None and not os.path.isabs(text):
        text = os.path.join(base, text)
    resolved, reason = denial(text, sec.path_rules(), writing=False)
    if resolved is None:
        return None, reason or f"{raw}: an unusable path"
    for place in dict.fromkeys((resolved.spelled, resolved.path)):
        what = own_place(place, sec)
        if what is not None:
            return resolved.path, f"{raw} is in {what}, which no face reads"
    return resolved.path, reason


def _real(path: str) -> str:
    try:
        return os.path.realpath(os.path.expanduser(path))
    except (OSError, ValueError):
        return path


def private_lines(text: str, tag: str) -> list[bool]:
    """For each line of ``text`` (split as org does), whether it is private."""
    if tag not in text:
        return [False] * (text.count("\n") + 1)
    return orgprivacy.read_private(text, tag).private


def withhold(text: str, start: int, end: int, tag: str,
             source: str | None = None) -> tuple[str, bool]:
    """``text[start:end]`` with each run of lines private in the whole ``text``
    replaced by the marker; whether anything was withheld.  With ``source``, the
    private lines teach the private index (so they are withheld wherever they go)."""
    part = text[start:end]
    if tag not in text:
        return part, False
    reading = orgprivacy.read_private(text, tag)
    if not reading.any_private():
        return part, False
    if source is not None:
        privateindex.current().add(source, reading.private_text(), tag)
    first = text.count("\n", 0, start)
    kept: list[str] = []
    withheld = False
    pieces = part.split("\n")
    for offset, line in enumerate(pieces):
        if offset and offset == len(pieces) - 1 and not line:
            kept.append(line)  # the part ends at a line's start: none of it is taken
        elif reading.private[first + offset]:
            withheld = True
            if not kept or kept[-1] != orgprivacy.MARKER:
                kept.append(orgprivacy.MARKER)
        else:
            kept.append(line)
    return "\n".join(kept), withheld


def section_text(parts: list[Part]) -> str:
    """The turn's context section: each part between markers, with what was cut."""
    blocks = []
    for part in parts:
        notes = []
        if part.withheld:
            notes.append(f"{orgprivacy.MARKER} marks private text left out")
        if part.cut:
            notes.append(f"{part.cut} characters left out at the end")
        note = f" ({'; '.join(notes)})" if notes else ""
        blocks.append(f"--- {part.name}{note} ---\n{part.text.rstrip()}\n"
                      f"--- end of {part.name} ---")
    return "The person attached this to the request:\n" + "\n\n".join(blocks)
