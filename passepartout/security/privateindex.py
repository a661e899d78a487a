"""The private text index, and the filter every request to a remote model passes.

As org files are read (the memex scan at start and its watcher, the file tools,
``grep-search``), the text of their private subtrees (see
:mod:`passepartout.org.private`) is learned here.  :func:`withhold_value`,
beside the vault's mask at the provider call, replaces any of it with
``[private: withheld]``, whichever tool or path brought it: a ``cat`` in the
sandbox, a grep line, a memory note, the focus, a cron prompt.

What is compared: each private line, folded (lower case, every run of blanks one
space, leading punctuation dropped), of at least ``MIN_FRAGMENT`` characters, when it
tells something: never what every org file has (drawer and block delimiters,
planning lines, timestamps, a property's name, a lone short word), and never text the
memex's public lines hold too (a ``:TIER: reasoning`` or a date a public heading
shares).  The public text of every file read is kept for that (folded), and what it
holds is taken out of the tables when they are built.  A line shorter than
``WINDOW`` is withheld where it appears whole; of a longer line, any piece of
``WINDOW`` characters or more.  Text read whole from its org file is judged by where
it came from instead (:func:`~passepartout.org.private.redact`): there the
whole private subtree is withheld, its planning and drawer lines too.  Lookups start
only at word starts, in two hash tables, so a request costs one pass over its text
(figures in the tests).
Base64 and hex runs are decoded and checked too, and a text that itself holds an
org heading tagged private has that subtree withheld even if the file was never
scanned (a ``cat`` of a file outside the memex).
"""

from __future__ import annotations

import base64
import binascii
import collections
import logging
import os
import re
import stat
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import ahocorasick_rs

from passepartout.errors import PipelineError
from passepartout.org.filetype import org_by_content, org_by_name
from passepartout.org.private import (
    DEFAULT_TAG,
    MARKER,
    heading_level,
    heading_tags,
    read_private,
    redact,
)

log = logging.getLogger(__name__)

MIN_FRAGMENT = 8
WINDOW = 24
READY_WAIT = 60.0  # seconds a request waits for the first scan before it is refused
MAX_FILE_BYTES = 8_000_000
# Withheld pieces with only blanks or punctuation between are withheld as one; public
# text between two private lines stays.
GAP = 1

_NONBLANK = re.compile(r"\S+")
_ALNUM = re.compile(r"[^\W_]")
_STRUCTURE = re.compile(
    r"[ \t]*(?::[\w-]+:|#\+(?:begin|end)_?\S*(?:[ \t]+[\w-]+)?|#\+end:?|"
    r"\\(?:begin|end)\{[^}]*\}|[-+|*#:.\s]*)[ \t]*\r?", re.IGNORECASE)
_BASE64_RUN = re.compile(
    r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}={0,2}(?:\s{1,4}[A-Za-z0-9+/_-]{16,}={0,2})*")
_HEX_RUN = re.compile(r"(?<![0-9a-fA-F])[0-9a-fA-F]{32,}(?:\s{1,4}[0-9a-fA-F]{16,})*")
_SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__"})
_PLANNING = re.compile(r"[ \t]*(?:CLOSED|DEADLINE|SCHEDULED):", re.IGNORECASE)
_TIMESTAMP = re.compile(r"[<\[]\d{4}-\d{2}-\d{2}[^]>\n]*[]>](?:--[<\[][^]>\n]*[]>])?")
_PROPERTY = re.compile(r"[ \t]*:[^\s:]+\+?:(?:[ \t]+(.*))?")
_DIGIT = re.compile(r"\d")
LONE_WORD = 12  # a single word shorter than this, without a digit, tells nothing


class PrivacyNotReady(PipelineError):
    """The first scan of the memex has not finished: no request may leave yet."""


# Punctuation reads as a blank: "7:Bank" (grep -n) and "Bank, 9876" still match.
_PUNCTUATION = str.maketrans({c: " " for c in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"})
_PUBLIC_BLANKS = str.maketrans({c: " " for c in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~\t\r\f\v"})


def fold(text: str) -> str:
    """Lower case, punctuation as blanks, every run of blanks one space, no blank at
    either end: what the index compares."""
    joined = " ".join(text.translate(_PUNCTUATION).split())
    low = joined.lower()
    if len(low) != len(joined):  # "İ" and a few others lower to two characters
        low = "".join(c.lower() if len(c.lower()) == 1 else c for c in joined)
    return low


def _origins(text: str) -> list[int]:
    """For each character of ``fold(text)``, its offset in ``text``, then the end."""
    starts: list[int] = []
    for match in _NONBLANK.finditer(text.translate(_PUNCTUATION)):
        if starts:
            starts.append(match.start() - 1)  # the one space between words
        starts.extend(range(match.start(), match.end()))
    starts.append(len(text))
    return starts


def fragment(line: str) -> str | None:
    """What the index keeps of a private line, or None for a line too short or too
    common to tell anything: blank, a drawer or block delimiter, a planning line, a
    timestamp, a property's name (its value is kept when it tells something), a lone
    short word."""
    if len(line) < MIN_FRAGMENT or _STRUCTURE.fullmatch(line) or _PLANNING.match(line):
        return None
    prop = _PROPERTY.fullmatch(line.rstrip("\r"))
    if prop is not None:
        line = prop.group(1) or ""
    line = _TIMESTAMP.sub(" ", line)
    folded = fold(line)
    if len(folded) < MIN_FRAGMENT or len(_ALNUM.findall(folded[:64])) < 4:
        return None
    if " " not in folded and len(folded) < LONE_WORD and not _DIGIT.search(folded):
        return None
    return folded


def public_text(lines: Iterable[str]) -> str:
    """Public lines as the index keeps them: folded as :func:`fold` does, but one per
    line (a match never spans two), in a few passes over the whole text."""
    text = _TIMESTAMP.sub(" ", "\n".join(lines)).translate(_PUBLIC_BLANKS).lower()
    while "  " in text:  # str.replace is many times faster here than a regex
        text = text.replace("  ", " ")
    return text


def _title(line: str) -> str:
    """A private heading's title without stars and tags (also learned on its own)."""
    text = line[heading_level(line) + 1:]
    tags = heading_tags(line)
    if tags:
        text = text.rstrip(" \t\r")
        text = text[: len(text) - len(":" + ":".join(tags) + ":")]
    return text.strip()


def private_fragments(lines: Iterable[str]) -> set[str]:
    found: set[str] = set()
    for line in lines:
        for piece in (line, _title(line)) if line.startswith("*") else (line,):
            folded = fragment(piece)
            if folded is not None:
                found.add(folded)
    return found


class PrivateIndex:
    """Private fragments by source (a file's real path), and the tables to find them."""

    def __init__(self) -> None:
        self._sources: dict[str, frozenset[str]] = {}
        self._public: dict[str, str] = {}
        self._tags: set[str] = {DEFAULT_TAG}
        self._lock = threading.RLock()
        self._generation = 0
        self._built = -1
        self._short: dict[str, list[str]] = {}
        self._long: dict[str, list[tuple[str, int]]] = {}
        self._starts: set[str] = set()
        self._cache: collections.OrderedDict[str, str] = collections.OrderedDict()
        self._scans = 0
        self._ready = threading.Event()
        self._ready.set()
        self._failed: str | None = None
        self._dirty: set[str] = set()
        self._dirty_tag: dict[str, str] = {}

    # -- learning ---------------------------------------------------------------------

    def learn(self, source: str, lines: Iterable[str], tag: str = DEFAULT_TAG, *,
              public: Iterable[str] | None = None) -> None:
        """The private lines of ``source`` are ``lines`` (replacing what it had); with
        ``public``, its public lines too (what they hold is never withheld)."""
        found = frozenset(private_fragments(lines))
        shared = None if public is None else public_text(public)
        with self._lock:
            self._tags.add(tag)
            changed = self._sources.get(source, frozenset()) != found
            if found:
                self._sources[source] = found
            else:
                self._sources.pop(source, None)
            if shared is not None and self._public.get(source, "") != shared:
                changed = True
                if shared:
                    self._public[source] = shared
                else:
                    self._public.pop(source, None)
            if changed:
                self._generation += 1

    def add(self, source: str, lines: Iterable[str], tag: str = DEFAULT_TAG) -> None:
        """Add to what ``source`` has (text seen in passing, not a whole file)."""
        with self._lock:
            old = self._sources.get(source, frozenset())
        self.learn(source, [*old, *lines], tag)

    def learn_text(self, source: str, text: str, tag: str = DEFAULT_TAG) -> None:
        """All of ``source``'s text: its private lines, and its public ones."""
        reading = read_private(text, tag)
        public = [line for line, hidden in zip(reading.lines, reading.private, strict=True)
                  if not hidden]
        self.learn(source, reading.private_text(), tag, public=public)

    def learn_file(self, path: str | Path, tag: str = DEFAULT_TAG) -> bool:
        """Read ``path`` if it is an org file (org's rules: its name, else its mode
        line) and learn its private lines; True when it has some."""
        source = os.path.realpath(path)
        try:
            info = os.stat(source)
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
                self.learn(source, [], tag)
                return False
            with open(source, "rb") as handle:
                if not org_by_name(source):
                    head = handle.read(4096).decode("utf-8", "replace")
                    handle.seek(max(0, info.st_size - 3000))
                    tail = handle.read(3000).decode("utf-8", "replace")
                    if not org_by_content(head, tail):
                        self.learn(source, [], tag)
                        return False
                    handle.seek(0)
                data = handle.read(MAX_FILE_BYTES)
        except OSError:
            self.learn(source, [], tag)
            return False
        self.learn_text(source, data.decode("utf-8", "replace"), tag)
        return source in self._sources

    def forget(self, source: str) -> None:
        real = os.path.realpath(source)
        with self._lock:
            had = self._sources.pop(real, None) is not None
            if (self._public.pop(real, None) is not None) or had:
                self._generation += 1

    def private_files(self) -> list[str]:
        """The files known to hold private text (absolute real paths)."""
        with self._lock:
            return [s for s in self._sources if os.path.isabs(s) and os.path.isfile(s)]

    def size(self) -> int:
        with self._lock:
            return sum(len(f) for f in self._sources.values())

    # -- the memex scan -----------------------------------------------------------------

    def scan(self, dirs: Iterable[str | Path], tag: str = DEFAULT_TAG) -> int:
        """Learn every org file under ``dirs``; returns how many files were read."""
        count = 0
        for directory in dirs:
            for base, subdirs, files in os.walk(directory):
                subdirs[:] = [d for d in subdirs if d not in _SKIP_DIRS]
                for name in files:
                    self.learn_file(os.path.join(base, name), tag)
                    count += 1
        return count

    def scan_in_background(self, dirs: Iterable[str | Path],
                           tag: str = DEFAULT_TAG) -> threading.Thread:
        """Scan ``dirs`` in a thread; until it ends, requests wait (:meth:`wait_ready`)."""
        roots = [Path(d) for d in dirs]
        with self._lock:
            self._scans += 1
            self._ready.clear()

        def run() -> None:
            started = time.perf_counter()
            try:
                files = self.scan(roots, tag)
                log.info("privacy: %d files scanned in %.2f s, %d private fragments",
                         files, time.perf_counter() - started, self.size())
            except Exception as err:  # fail closed: no request leaves without the index
                log.exception("privacy: the memex scan failed")
                with self._lock:
                    self._failed = f"the scan of the memex for private text failed: {err}"
            finally:
                with self._lock:
                    self._scans -= 1
                    if self._scans == 0:
                        self._ready.set()

        thread = threading.Thread(target=run, name="privacy-scan", daemon=True)
        thread.start()
        return thread

    def wait_ready(self, timeout: float = READY_WAIT) -> None:
        """Return once the scans are done; raise :class:`PrivacyNotReady` otherwise."""
        if not self._ready.wait(timeout):
            raise PrivacyNotReady(
                "the memex is still being scanned for private text; try again in a moment")
        if self._failed:
            raise PrivacyNotReady(self._failed)

    def touch(self, path: str, tag: str = DEFAULT_TAG) -> None:
        """A file changed (the watcher): learned again before the next request."""
        with self._lock:
            self._dirty.add(path)
            self._dirty_tag[path] = tag

    def watch(self, dirs: Iterable[str | Path], tag: str = DEFAULT_TAG) -> Any:
        """Learn files again as they change under ``dirs`` (watchdog); returns the
        observer (``stop()`` it), or None when no directory exists."""
        from watchdog.events import FileSystemEvent, FileSystemEventHandler
        from watchdog.observers import Observer

        index = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: FileSystemEvent) -> None:
                if event.event_type in ("opened", "closed_no_write") or event.is_directory:
                    return
                for raw in (event.src_path, getattr(event, "dest_path", "")):
                    path = raw.decode() if isinstance(raw, bytes) else str(raw)
                    if path:
                        index.touch(path, tag)

        roots = [str(d) for d in dirs if Path(d).is_dir()]
        if not roots:
            return None
        observer = Observer()
        for root in roots:
            observer.schedule(Handler(), root, recursive=True)
        observer.daemon = True
        observer.start()
        return observer

    def refresh(self) -> None:
        with self._lock:
            dirty, self._dirty = self._dirty, set()
            tags = {p: self._dirty_tag.pop(p, DEFAULT_TAG) for p in dirty}
        for path in dirty:
            self.learn_file(path, tags[path])

    # -- finding and withholding ---------------------------------------------------------

    def _tables(self) -> tuple[dict[str, list[str]], dict[str, list[tuple[str, int]]]]:
        with self._lock:
            if self._built == self._generation:
                return self._short, self._long
            short: dict[str, list[str]] = {}
            long: dict[str, list[tuple[str, int]]] = {}
            pieces = {f for frags in self._sources.values() for f in frags}
            common = _held_by(pieces, self._public.values())
            for found in pieces:
                if len(found) < WINDOW:
                    if found not in common:
                        short.setdefault(found[:MIN_FRAGMENT], []).append(found)
                    continue
                w = 0
                while w + WINDOW <= len(found):
                    if found[w:w + WINDOW] not in common:
                        long.setdefault(found[w:w + WINDOW], []).append((found, w))
                    w = found.find(" ", w) + 1
                    if w == 0:
                        break
            # The whole first word of every piece the tables hold.
            self._starts = {found.split(" ", 1)[0] for found in
                            (f for pieces in short.values() for f in pieces)}
            self._starts |= {piece[w:].split(" ", 1)[0]
                             for pieces in long.values() for piece, w in pieces}
            self._short, self._long, self._built = short, long, self._generation
            self._cache.clear()
            return short, long

    def spans(self, folded: str) -> list[tuple[int, int]]:
        """Where private text lies in folded text, as merged (start, end) pairs."""
        short, long = self._tables()
        if not short and not long:
            return []
        words = folded.split(" ")
        starts = self._starts
        if starts.isdisjoint(words):  # most requests: no private line starts here
            return []
        found: list[tuple[int, int]] = []
        covered = a = 0
        for word in words:
            if a >= covered and word in starts:
                candidates = long.get(folded[a:a + WINDOW])
                if candidates:
                    span = _extend(folded, a, candidates)
                    found.append(span)
                    covered = span[1]
                for piece in short.get(folded[a:a + MIN_FRAGMENT], ()):
                    if folded.startswith(piece, a):
                        found.append((a, a + len(piece)))
            a += len(word) + 1
        return _merge(found)

    def contains_private(self, text: str) -> bool:
        return bool(text) and bool(self.spans(fold(text)))

    def withhold(self, text: str) -> str:
        """``text`` with every private piece replaced by ``[private: withheld]``."""
        if not text or len(text) < MIN_FRAGMENT:
            return text
        self._tables()
        with self._lock:
            cached = self._cache.get(text)
        if cached is not None:
            return cached
        out = self._structure(text)
        out = self._encoded(out)
        spans = self.spans(fold(out))
        if spans:
            origins = _origins(out)
            pieces, last = [], 0
            for start, end in spans:
                pieces += [out[last:origins[start]], MARKER]
                last = origins[end]
            out = "".join([*pieces, out[last:]])
        with self._lock:
            self._cache[text] = out
            while len(self._cache) > 1024:
                self._cache.popitem(last=False)
        return out

    def _structure(self, text: str) -> str:
        """Org text in ``text`` whose own headings say it is private (learned too)."""
        with self._lock:
            tags = sorted(self._tags)
        for tag in tags:
            if tag in text:
                reading = read_private(text, tag)
                if reading.any_private():
                    self.add("<seen>", reading.private_text(), tag)
                    text = redact(text, tag)
        return text

    def _encoded(self, text: str) -> str:
        """Base64 and hex runs that decode to private text are withheld whole."""
        if len(text) < 32:
            return text

        def check(match: re.Match[str], decode: Any) -> str:
            raw = match.group(0)
            try:
                plain = decode("".join(raw.split())).decode("utf-8", "replace")
            except (ValueError, binascii.Error):
                return raw
            folded = fold(plain)
            private = bool(self.spans(folded)) or any(
                read_private(plain, t).any_private() for t in self._tags if t in plain)
            return MARKER if private else raw

        text = _BASE64_RUN.sub(lambda m: check(m, _b64decode), text)
        return _HEX_RUN.sub(lambda m: check(m, bytes.fromhex), text)

    def withhold_value(self, value: Any) -> Any:
        """:meth:`withhold` through a structure (dicts, lists, tuples)."""
        if isinstance(value, str):
            out = self.withhold(value)
            return value if out == value else out
        if isinstance(value, dict):
            return {k: self.withhold_value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.withhold_value(v) for v in value)
        return value


def _held_by(pieces: Iterable[str], public: Iterable[str]) -> set[str]:
    """Which short pieces and windows of long ones the public text holds (one pass)."""
    wanted: set[str] = set()
    for piece in pieces:
        if len(piece) < WINDOW:
            wanted.add(piece)
            continue
        w = 0
        while w + WINDOW <= len(piece):
            wanted.add(piece[w:w + WINDOW])
            w = piece.find(" ", w) + 1
            if w == 0:
                break
    texts = [t for t in public if t]
    if not wanted or not texts:
        return set()
    automaton = ahocorasick_rs.AhoCorasick(list(wanted))
    return set(automaton.find_matches_as_strings("\n".join(texts), overlapping=True))


def _b64decode(text: str) -> bytes:
    text = text.rstrip("=")
    text = text[: len(text) - len(text) % 4]
    if "-" in text or "_" in text:
        return base64.urlsafe_b64decode(text)
    return base64.b64decode(text)


def _extend(folded: str, a: int, candidates: list[tuple[str, int]]) -> tuple[int, int]:
    """The longest stretch around ``folded[a:a+WINDOW]`` that a private line shares."""
    start, end = a, a + WINDOW
    for piece, w in candidates[:16]:
        i, j = a + WINDOW, w + WINDOW
        while i < len(folded) and j < len(piece) and folded[i] == piece[j]:
            i += 1
            j += 1
        k, m = a, w
        while k > 0 and m > 0 and folded[k - 1] == piece[m - 1]:
            k -= 1
            m -= 1
        start, end = min(start, k), max(end, i)
    return start, end


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1] + GAP:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


# -- the process's index ----------------------------------------------------------------

_current = PrivateIndex()


def current() -> PrivateIndex:
    """The index of this process (shared by its agents, as the vault is)."""
    return _current


def withhold_value(value: Any, *, wait: float = READY_WAIT) -> Any:
    """The boundary: ``value`` (a request's messages) without private text; waits for
    the memex scan first and refuses (:class:`PrivacyNotReady`) if it does not end."""
    index = _current
    index.wait_ready(wait)
    index.refresh()
    return index.withhold_value(value)
