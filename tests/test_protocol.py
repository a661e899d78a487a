"""The daemon's protocol: each event crosses the wire by its protocol name and comes
back the same; anything outside the protocol is dropped; an approval's answer is typed,
and only a clear yes is a yes.  Emacs keeps the same allow-list as the daemon."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from passepartout import protocol
from passepartout.errors import ProtocolError
from passepartout.protocol import (
    Allow,
    ApprovalAsked,
    Chunk,
    Deny,
    Disconnected,
    Done,
    Evaluated,
    Notice,
    OrgEdited,
    StatusChanged,
    ToolCalled,
    ToolDenied,
    ToolFinished,
    ToolRequested,
    TurnError,
    decode,
    decode_answer,
    encode,
    encode_answer,
)
from passepartout.signals import Keyword, Symbol, dumps, loads

ELISP = Path(__file__).resolve().parents[1] / "elisp"

EVENTS = [
    Chunk("s", "t", "hi"),
    ToolCalled("s", "t", "shell", {"cmd": "ls"}, "call_1"),
    ToolCalled("s", "t", "memory-search"),
    ToolFinished("s", "t", "shell", True, "done", "call_1"),
    ToolFinished("s", "t", "shell", False, "exit 2"),
    ToolDenied("s", "t", "shell(cmd='rm -rf /')", "protected"),
    ToolRequested("s", "t", "get_weather", '{"city": "Oslo"}', "call_2"),
    ApprovalAsked("id1", "s", "t", "shell(cmd='ls')", {"tool": "shell", "args": {"cmd": "ls"}}),
    ApprovalAsked("id2", None, None, "a job", {"tool": "shell"}),
    TurnError("s", "t", "llm-error", "rate limited"),
    Done("s", "t"),
    Done("s", "t", cancelled=True),
    Done("s", "t", False, "openai/gpt-4o", False),
    Notice("warning", "careful"),
    StatusChanged({"health": "ok", "ready": True}),
    OrgEdited("/tmp/a.org", "* old\n", "* new\n"),
]


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: type(e).__name__)
def test_every_event_comes_back_as_it_was_sent_through_the_wire(event: protocol.Event) -> None:
    name, args = encode(event)
    assert name in protocol.EVENT_NAMES and not name.startswith("passepartout--")
    # what the daemon prints is what a client reads back
    read = loads(dumps([Symbol("call"), 1, Symbol(name), args]))
    assert decode(str(read[2]), read[3]) == event


def test_events_travel_by_their_protocol_names() -> None:
    names = {encode(event)[0] for event in EVENTS}
    assert names == protocol.EVENT_NAMES == {
        "chunk", "tool", "done", "error", "approval", "notify", "status", "org-edit"}


def test_a_disconnection_never_crosses_the_wire() -> None:
    with pytest.raises(ProtocolError):
        encode(Disconnected("gone"))


@pytest.mark.attack
@pytest.mark.parametrize("name,args", [
    ("passepartout--on-chunk", ["s", "t", "hi"]),  # the old Elisp names are gone
    ("eval", ["(delete-file \"x\")"]),
    ("tool", ["s", "t", [Keyword("odd")]]),  # a broken plist
    ("tool", ["s", "t", [Keyword("event"), Symbol("rm"), Keyword("name"), "x"]]),
])
def test_what_is_not_in_the_protocol_is_dropped(name: str, args: list[Any]) -> None:
    assert decode(name, args) is None


@pytest.mark.attack
@pytest.mark.parametrize("wire,answer", [
    (True, Allow()),
    (None, Deny()),
    ("t", Deny()),  # a string is not yes
    (1, Deny()),
    ([Keyword("value"), "x"], Deny()),
    ([Keyword("allow"), True], Allow()),
    ([Keyword("allow"), True, Keyword("always"), True], Allow(always=True)),
    ([Keyword("allow"), None, Keyword("always"), True], Deny(always=True)),
    ([Keyword("allow"), "t", Keyword("always"), True], Deny(always=True)),
    ([Keyword("ok"), True, Keyword("value"), "2"], Evaluated(True, "2")),
    ([Keyword("ok"), None, Keyword("value"), "void-function"], Evaluated(False, "void-function")),
    ([Keyword("odd")], Deny()),
    ([Keyword("allow"), None, Keyword("reason"), "quit"], Deny(reason="quit")),
    ([Keyword("allow"), None, Keyword("reason"), "a\x1b[2J\nb"], Deny(reason="a [2J b")),
    ([Keyword("allow"), None, Keyword("reason"), 7], Deny()),
])
def test_only_a_clear_yes_is_a_yes(wire: Any, answer: protocol.ApprovalAnswer) -> None:
    assert decode_answer(wire) == answer


@pytest.mark.parametrize("answer", [Allow(), Deny(), Allow(always=True), Deny(always=True),
                                    Deny(reason="quit"), Deny(always=True, reason="quit"),
                                    Evaluated(True, "2"), Evaluated(False, "boom")])
def test_an_answer_comes_back_as_it_was_sent(answer: protocol.ApprovalAnswer) -> None:
    assert decode_answer(loads(dumps(encode_answer(answer)))) == answer


@pytest.mark.attack
def test_emacs_maps_exactly_the_protocol_names_to_its_callbacks(tmp_path: Path) -> None:
    emacs = shutil.which("emacs")
    if emacs is None:
        pytest.fail("emacs not found: install Debian's emacs-nox")
    code = ("(progn (require 'passepartout-server)"
            " (dolist (entry passepartout--callbacks)"
            "  (princ (format \"%s %s\\n\" (car entry) (cdr entry)))))")
    proc = subprocess.run([emacs, "--batch", "-Q", "-L", str(ELISP), "--eval", code],
                          capture_output=True, text=True, timeout=120, check=False,
                          env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    pairs = dict(line.split() for line in proc.stdout.splitlines())
    assert set(pairs) == protocol.EVENT_NAMES
    assert all(fn.startswith("passepartout--on-") for fn in pairs.values())
    assert pairs["chunk"] == "passepartout--on-chunk"
