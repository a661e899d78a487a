"""The forms of a secret the mask hides, and the matcher that finds them in a text.

A text is compared by its *squeezed* form: its ASCII letters and digits, lower-cased,
everything else left out (after NFKC, so fullwidth and mathematical letters count as
their ASCII selves).  A secret's forms are squeezed the same way, so one comparison
covers every case and every separator: ``S3cr3t``, ``s3CR3T``, ``s 3 c r 3 t``, one
character per line, dashes or zero-width characters between them.  The forms are:

- the secret itself, reversed, rot13, and rot13 reversed;
- hex (also ``\\x73``, ``%73`` and ``\\u0073`` escapes), decimal character codes;
- base64 (standard and URL-safe) at each of its 3 byte alignments, base32 at each of
  its 5 (the characters that depend on the secret alone);
- the two halves of each of those four, once each half has at
  least :data:`MIN_PART` letters and digits: however the secret is cut in two, the
  longer piece holds one of them.

A squeezed form is used once it has :data:`MIN_FORM` letters and digits; a secret with
fewer is also looked for exactly, as it is written.  Aho-Corasick (``ahocorasick_rs``)
finds every squeezed form in one pass over the squeezed text, and only a text that
holds one is searched again, around what was found, with a regular expression that
allows separators between the characters, to replace the secret where it stands.
"""

from __future__ import annotations

import base64
import bisect
import codecs
import re
import unicodedata
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass, field

import ahocorasick_rs

MIN_FORM = 6  # letters and digits a squeezed form needs (fewer would mask ordinary words)
MIN_PART = 8  # letters and digits each half needs: secrets of 16 or more are halved

_ALNUM = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_DROP = bytes(b for b in range(256) if b not in _ALNUM)
_LOWER = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"abcdefghijklmnopqrstuvwxyz")
_SEPARATORS = "[^0-9A-Za-z]*+"  # possessive: a run of separators is never re-tried
_WHOLE_TEXT = 8192  # texts up to this length are searched whole once a form is found
_STEP = 512  # characters per block of the squeezed-offset index


def squeeze(text: str) -> bytes:
    """The ASCII letters and digits of ``text``, lower-cased (UTF-8 multi-byte
    characters are all bytes >= 0x80, so they drop out like separators)."""
    return text.encode("utf-8", "ignore").translate(_LOWER, _DROP)


def _b64_cores(raw: bytes) -> list[str]:
    """The base64 characters that depend on ``raw`` alone, for each byte alignment."""
    cores = []
    for offset in range(3):
        padded = b"\0" * offset + raw
        skip = {0: 0, 1: 2, 2: 3}[offset]
        end = (len(padded) * 8) // 6
        cores.append(base64.b64encode(padded).decode("ascii")[skip:end])
    return cores


def _b32_cores(raw: bytes) -> list[str]:
    """The base32 characters that depend on ``raw`` alone, for each byte alignment."""
    cores = []
    for offset in range(5):
        padded = b"\0" * offset + raw
        skip = -(-offset * 8 // 5)  # characters touched by the zero bytes
        end = (len(padded) * 8) // 5
        cores.append(base64.b32encode(padded).decode("ascii")[skip:end])
    return cores


def forms_of(value: str) -> list[str]:
    """The squeezed forms of ``value`` that the mask hides (longest first)."""
    raw = value.encode("utf-8")
    core = squeeze(value).decode("ascii")
    rot = codecs.encode(core, "rot13")
    texts = [
        core, core[::-1], rot, rot[::-1], raw.hex(), "".join(f"x{b:02x}" for b in raw),
        "".join(str(b) for b in raw), urllib.parse.quote(value, safe=""),
        *_b64_cores(raw), *_b32_cores(raw),
    ]
    if value.isascii():
        texts.append("".join(f"u{ord(c):04x}" for c in value))
    if len(core) >= 2 * MIN_PART:
        half = -(-len(core) // 2)
        for whole in (core, core[::-1], rot, rot[::-1]):
            texts += [whole[:half], whole[-half:]]
    squeezed = {squeeze(t).decode("ascii") for t in texts}
    return sorted((f for f in squeezed if len(f) >= MIN_FORM), key=lambda f: (-len(f), f))


def _spread(form: str) -> str:
    """A pattern for ``form`` in a text: any case, any separators between characters."""
    parts = [f"[{c}{c.upper()}]" if c.isalpha() else c for c in form]
    return _SEPARATORS.join(parts)


@dataclass(frozen=True)
class _Secret:
    name: str
    value: str
    forms: tuple[str, ...]


@dataclass
class SecretMatcher:
    """Finds and replaces every form of a set of named secrets."""

    secrets: tuple[_Secret, ...] = ()
    _automaton: ahocorasick_rs.BytesAhoCorasick | None = field(default=None, repr=False)
    _owner: list[int] = field(default_factory=list, repr=False)  # needle -> secret
    _exact_only: tuple[int, ...] = field(default=(), repr=False)
    _patterns: dict[frozenset[int], re.Pattern[str]] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, named: Iterable[tuple[str, str]], *, min_length: int) -> SecretMatcher:
        """A matcher for the ``(name, value)`` pairs whose value is long enough."""
        secrets = tuple(
            _Secret(name, value, tuple(forms_of(value)))
            for name, value in sorted(set(named))
            if value and len(value) >= min_length
        )
        needles: list[bytes] = []
        owner: list[int] = []
        for i, secret in enumerate(secrets):
            for form in secret.forms:
                needles.append(form.encode("ascii"))
                owner.append(i)
        automaton = ahocorasick_rs.BytesAhoCorasick(needles) if needles else None
        # Too few letters and digits to be found squeezed: looked for exactly as well.
        exact = tuple(i for i, s in enumerate(secrets) if len(squeeze(s.value)) < MIN_FORM)
        return cls(secrets, automaton, owner, exact)

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def found(self, text: str) -> list[tuple[int, int, int]]:
        """``(secret, start, end)`` of each form found in ``text``, in squeezed offsets
        (an exactly-matched secret: ``start`` is -1)."""
        hits: list[tuple[int, int, int]] = []
        if self._automaton is not None:
            squeezed = squeeze(text)
            hits += [(self._owner[i], start, end) for i, start, end in
                     self._automaton.find_matches_as_indexes(squeezed, overlapping=True)]
        hits += [(i, -1, -1) for i in self._exact_only if self.secrets[i].value in text]
        return hits

    def mask(self, text: str, replace: str = "[secret:{name}]") -> str:
        """``text`` with every form of every secret replaced by ``replace``."""
        if not self.secrets or not text:
            return text
        hits = self.found(text)
        if not hits and not text.isascii():
            # Fullwidth or mathematical letters count as their ASCII selves.
            folded = unicodedata.normalize("NFKC", text)
            if folded != text and (hits := self.found(folded)):
                text = folded
        if not hits:
            return text
        pattern = self._pattern(frozenset(i for i, _, _ in hits))

        def sub(part: str) -> str:
            return pattern.sub(lambda m: replace.format(name=self._name(m)), part)

        if len(text) <= _WHOLE_TEXT or any(start < 0 for _, start, _ in hits):
            return sub(text)
        # In a long text the expression runs only around what the automaton found.
        where = _AlnumIndex(text)
        margin = max(len(self.secrets[i].value) for i, _, _ in hits)
        spans = sorted((max(0, where.position(start) - margin),
                        where.position(end - 1) + 1 + margin) for _, start, end in hits)
        out, done = [], 0
        for begin, stop in _merged(spans):
            out += [text[done:begin], sub(text[begin:stop])]
            done = stop
        out.append(text[done:])
        return "".join(out)

    def _name(self, match: re.Match[str]) -> str:
        return self.secrets[int((match.lastgroup or "s0")[1:])].name

    def _pattern(self, hits: frozenset[int]) -> re.Pattern[str]:
        pattern = self._patterns.get(hits)
        if pattern is None:
            branches = []
            for i in sorted(hits, key=lambda i: -len(self.secrets[i].value)):
                secret = self.secrets[i]
                alternatives = [re.escape(secret.value), *map(_spread, secret.forms)]
                branches.append(f"(?P<s{i}>{'|'.join(alternatives)})")
            pattern = re.compile("|".join(branches))
            if len(self._patterns) > 64:
                self._patterns.clear()
            self._patterns[hits] = pattern
        return pattern


class _AlnumIndex:
    """Where the k-th ASCII letter or digit of a text is (squeezed offset to offset)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.before: list[int] = [0]  # letters and digits before each block
        for at in range(0, len(text), _STEP):
            self.before.append(self.before[-1] + len(squeeze(text[at : at + _STEP])))

    def position(self, k: int) -> int:
        block = bisect.bisect_right(self.before, k) - 1
        count = self.before[block]
        at = block * _STEP
        for i, char in enumerate(self.text[at : at + _STEP]):
            if char.isascii() and char.isalnum():
                if count == k:
                    return at + i
                count += 1
        return min(len(self.text), at + _STEP)


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for begin, stop in spans:
        if merged and begin <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], stop))
        else:
            merged.append((begin, stop))
    return merged
