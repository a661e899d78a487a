"""The one ``one_line`` (passepartout.text), and the import circle it ends: the text
toolkit and org syntax import none of the rooms that use them, and security/ does not
import events/."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import passepartout
from passepartout.org.escape import org_line
from passepartout.text import one_line, shorten

PACKAGE = Path(passepartout.__file__).parent


def test_one_line_leaves_no_control_format_or_separator_character() -> None:
    text = "a\x1b[31m\nb\u2028c\u202ed\u200be\u00a0f\tg\r\nh"
    assert one_line(text) == "a [31m b c d e f g h"
    assert one_line("  spaced   out  ") == "spaced out"
    assert one_line(42) == "42"


def test_one_line_shows_controls_to_a_person_when_asked() -> None:
    osc52 = "printf '\x1b]52;c;cm0gLXJmIH4K\x07'\nnext"
    assert one_line(osc52, shown=True) == "printf '\\x1b]52;c;cm0gLXJmIH4K\\x07' next"
    assert one_line("a\u202eb", shown=True) == "a\\u202eb"


def test_one_line_is_bounded_hard_or_on_a_word() -> None:
    assert one_line("word " * 50, 12) == "word word w…"
    assert len(one_line("x" * 500, 100)) == 100
    assert one_line("word " * 50, 12, on_word=True) == "word word…"
    assert one_line("abcdefghij" * 5, 10, on_word=True) == "abcdefghij…"
    assert one_line("x" * 500, None) == "x" * 500
    assert shorten("short", 10) == "short"


def test_org_line_escapes_for_org_where_one_line_does_not() -> None:
    assert org_line("[[elisp:(kill-emacs)]]\x1b") == "[[\u200belisp\u200b:(kill-emacs)]]\\x1b"
    assert one_line("[[elisp:(kill-emacs)]]\x1b") == "[[elisp:(kill-emacs)]]"


def module_imports(path: Path) -> set[str]:
    """The passepartout modules ``path`` imports when it is imported (outside
    ``if TYPE_CHECKING:`` and outside functions)."""
    found: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            if isinstance(node, ast.If | ast.Try):
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names)

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    return {name for name in found if name.startswith("passepartout.")}


def room_imports(room: str) -> set[str]:
    paths = [PACKAGE / f"{room}.py"] if (PACKAGE / f"{room}.py").exists() else sorted(
        (PACKAGE / room).rglob("*.py"))
    return set().union(*(module_imports(path) for path in paths))


@pytest.mark.parametrize(("room", "allowed"), [
    ("text", set()),
    ("org", {"org", "text", "fsutil"}),
])
def test_the_toolkit_rooms_import_none_of_their_users(room: str, allowed: set[str]) -> None:
    rooms = {name.split(".")[1] for name in room_imports(room)}
    assert rooms <= allowed, rooms - allowed


def test_security_does_not_import_events() -> None:
    assert not {n for n in room_imports("security") if n.startswith("passepartout.events")}
