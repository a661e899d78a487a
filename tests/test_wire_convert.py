"""The boundary between s-expressions and Python values (signals, wire.frames).

nil, (), None, False and [] are one value; t is True; keywords stay keywords; dicts and
dataclasses travel as plists; Unicode and escapes survive; Emacs itself reads what we
write (checked in emacs --batch).
"""

from __future__ import annotations

import enum
import math
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from passepartout.errors import ProtocolError
from passepartout.signals import ATTACHMENT_MIN, MAX_NESTING, Keyword, Symbol
from passepartout.signals import dumps as encode
from passepartout.signals import loads as decode
from passepartout.wire.frames import frame, read_payload


@pytest.mark.parametrize("text", ["nil", "()", "( )", "[]"])
def test_every_spelling_of_nil_reads_as_none(text: str) -> None:
    assert decode(text) is None


@pytest.mark.parametrize("value", [None, False, [], (), {}, set()])
def test_every_empty_value_is_written_as_nil(value: Any) -> None:
    assert encode(value) == "nil"


def test_atoms_read() -> None:
    assert decode("t") is True
    assert decode(":user-input") == Keyword("user-input")
    assert isinstance(decode(":user-input"), Keyword)
    assert isinstance(decode("pong"), Symbol) and decode("pong") == "pong"
    assert decode("42") == 42 and decode("-1.5") == -1.5
    assert decode('"a\\"b\\\\c\nd"') == 'a"b\\c\nd'


def test_nested_plists_and_vectors_read() -> None:
    value = decode('(:a 1 :b (:c "x" :d nil) :e [1 2 (3)] :f t)')
    assert value == [Keyword("a"), 1, Keyword("b"), [Keyword("c"), "x", Keyword("d"), None],
                     Keyword("e"), [1, 2, [3]], Keyword("f"), True]


def test_unicode_reads_and_writes() -> None:
    text = "été — 日本語 🎉 \u200b \t"
    assert decode(encode(text)) == text
    assert encode("é") == '"é"'
    data = frame(text)
    assert int(data[:6], 16) == len(data) - 6  # the length counts UTF-8 bytes


def test_writing() -> None:
    assert encode(True) == "t"
    assert encode(Keyword("a")) == ":a"
    assert encode(Symbol("passepartout--on-chunk")) == "passepartout--on-chunk"
    assert encode({"a": 1, "b": [1, "x", None], "c": {"d": True}}) == \
        '(:a 1 :b (1 "x" nil) :c (:d t))'
    assert encode('say "hi" \\ back') == '"say \\"hi\\" \\\\ back"'
    assert encode(1.0) == "1.0" and encode(2) == "2"
    assert encode(math.inf) == "1.0e+INF" and encode(-math.inf) == "-1.0e+INF"
    assert encode(math.nan) == "0.0e+NaN"


def test_symbols_that_elisp_would_misread_are_escaped() -> None:
    assert encode(Symbol("a b")) == "a\\ b"
    assert encode(Symbol("1")) == "\\1"
    assert encode(Symbol("")) == "##"
    assert decode(encode(Symbol("(x)"))) == Symbol("(x)")


class Color(enum.Enum):
    RED = "red"


@dataclass
class Job:
    name: str
    next_run: float | None
    tags: list[str]


def test_records_paths_and_enums_are_written_as_plists_and_text() -> None:
    assert encode(Job("backup", None, ["a"])) == '(:name "backup" :next_run nil :tags ("a"))'
    assert encode(Path("/tmp/x")) == '"/tmp/x"'
    assert encode(Color.RED) == '"red"'
    assert encode(object()).startswith('"<object object')  # text, never a failure


@pytest.mark.parametrize("text", ["", "(", ")", "(a))", '"open', "(a . b c) d", "#<buffer x>x y"])
def test_malformed_text_is_a_protocol_error(text: str) -> None:
    with pytest.raises(ProtocolError):
        decode(text)


@pytest.mark.parametrize("depth", [MAX_NESTING + 1, 5_000, 100_000])
def test_deep_nesting_is_refused_not_a_crash(depth: int) -> None:
    with pytest.raises(ProtocolError, match="nested"):
        decode("(" * depth + ")" * depth)
    with pytest.raises(ProtocolError, match="nested"):
        decode("[" * depth + "]" * depth)


def test_nesting_up_to_the_limit_reads() -> None:
    value = decode("(" * MAX_NESTING + "1" + ")" * MAX_NESTING)
    for _ in range(MAX_NESTING):
        value = value[0]
    assert value == 1


def test_writing_a_too_deep_value_is_a_protocol_error() -> None:
    value: list[Any] = [1]
    for _ in range(MAX_NESTING + 2):
        value = [value]
    with pytest.raises(ProtocolError):
        encode(value)


_atoms = st.one_of(
    st.none(), st.just(True), st.integers(-(2**40), 2**40),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.text(st.characters(exclude_categories=["Cs"])),
    st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True).map(Keyword),
)
_values = st.recursive(_atoms, lambda inner: st.lists(inner, min_size=1, max_size=4),
                       max_leaves=20)


@settings(max_examples=120, deadline=None)
@given(_values)
def test_round_trip(value: Any) -> None:
    assert decode(encode(value)) == value


# Emacs reads every value in the first file and prints them, as one list, to the second.
_READ_ALL = (
    "(let ((coding-system-for-read 'utf-8) (values nil))"
    " (with-temp-buffer (insert-file-contents (car command-line-args-left))"
    " (goto-char (point-min))"
    " (condition-case nil (while t (push (read (current-buffer)) values))"
    " (end-of-file nil)))"
    " (let ((coding-system-for-write 'utf-8))"
    " (write-region (prin1-to-string (nreverse values)) nil (cadr command-line-args-left))))"
)


@pytest.mark.emacs
def test_emacs_reads_what_we_write(tmp_path: Path) -> None:
    emacs = shutil.which("emacs")
    assert emacs, "emacs --batch is needed (Debian emacs-nox)"
    values: list[Any] = [
        None, True, 7, -2.5, "plain", 'quote " and \\ backslash', "line\nbreak\ttab",
        "été 日本語 🎉", Keyword("user-input"), Symbol("a b"),
        {"session": "s1", "info": {"cancelled": False, "ok": True}, "list": [1, "x", None]},
    ]
    source = tmp_path / "values.el"
    source.write_text("\n".join(encode(v) for v in values) + "\n", encoding="utf-8")
    printed = tmp_path / "printed.el"
    subprocess.run([emacs, "--batch", "-Q", "--eval", _READ_ALL, str(source), str(printed)],
                   capture_output=True, timeout=60, check=True)
    assert decode(printed.read_text(encoding="utf-8")) == [decode(encode(v)) for v in values]


def test_long_strings_travel_as_attachments() -> None:
    long = 'ü "q" \\ 日本\n' * (ATTACHMENT_MIN // 8)
    value = [Symbol("return"), 3, [long, "short", {"text": long + "!"}]]
    data = frame(value, attachments=True)
    assert data[6:].startswith(b"(attachments ")
    assert long.encode("utf-8") in data  # raw, not printed
    assert read_payload(data[6:]) == [Symbol("return"), 3,
                                      [long, "short", [Keyword("text"), long + "!"]]]
    # Without the option, or without a long string, the same plain frame as ever.
    assert b"attachments" not in frame(value)
    assert frame(["a", 1], attachments=True) == frame(["a", 1])
    assert read_payload(frame(value)[6:]) == read_payload(data[6:])


@pytest.mark.parametrize("payload", [
    b"(attachments 99)(x passepartout-attachment-0)abc",
    b"(attachments 3)(x passepartout-attachment-1)abc",
    b"(attachments 3)(x passepartout-attachment-01x)abc",
    b"(attachments 3)(x)abc",
    b"(attachments 3 3)(x passepartout-attachment-0 passepartout-attachment-0)abcdef",
])
def test_bad_attachments_are_refused(payload: bytes) -> None:
    with pytest.raises(ProtocolError):
        read_payload(payload)


def test_a_placeholder_symbol_without_attachments_is_a_symbol() -> None:
    value = read_payload(b"(x passepartout-attachment-0)")
    assert value == ["x", Symbol("passepartout-attachment-0")]


def test_a_value_holding_a_placeholder_symbol_goes_plain() -> None:
    long = "x" * ATTACHMENT_MIN
    value = [Symbol("return"), 1, [long, Symbol("passepartout-attachment-0")]]
    data = frame(value, attachments=True)
    assert not data[6:].startswith(b"(attachments")
    assert read_payload(data[6:]) == value
