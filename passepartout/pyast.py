"""Parsing Python source into an AST (and compiling an AST), one at a time in this
process, and once more when another thread got in the way.

CPython 3.11 keeps the AST converter's recursion counter per interpreter, not per
thread: two conversions in different threads that interleave (a thread switch inside
one, say when the collector runs) corrupt it, and one of them fails with
``SystemError: AST constructor recursion depth mismatch`` (python/cpython#106905).  The
agent parses skill files on several threads (discovery, vetting, the trust question,
the eval tool, a reload), so every parse of ours goes through this lock.  Code we do
not own parses too (Python 3.11 formats every traceback with ``ast.parse``, on
whatever thread logs it), so a parse that hit that error is tried again: the error
says nothing about the source, and the counter is whole again once the other is done.
"""

from __future__ import annotations

import ast
import threading
import time
from collections.abc import Callable
from types import CodeType
from typing import TypeVar

_lock = threading.Lock()
_MISMATCH = "recursion depth mismatch"
_TRIES = 5
T = TypeVar("T")


def _guarded(convert: Callable[[], T]) -> T:
    for attempt in range(_TRIES):
        try:
            with _lock:
                return convert()
        except SystemError as err:
            if _MISMATCH not in str(err) or attempt == _TRIES - 1:
                raise
            time.sleep(0.001 * (attempt + 1))  # let the other thread finish its own
    raise AssertionError("unreachable")


def parse_module(source: str, filename: str = "<unknown>") -> ast.Module:
    return _guarded(lambda: ast.parse(source, filename=filename, mode="exec"))


def parse_expression(source: str, filename: str = "<unknown>") -> ast.Expression:
    return _guarded(lambda: ast.parse(source, filename=filename, mode="eval"))


def compile_tree(tree: ast.Module | ast.Expression, filename: str, mode: str) -> CodeType:
    """``compile`` of an AST, which converts it back through the same counter."""
    return _guarded(lambda: compile(tree, filename, mode))
