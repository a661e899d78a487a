"""Parsing Python source into an AST, one parse at a time in this process.

CPython 3.11 keeps the AST constructor's recursion counter per interpreter, not per
thread: two ``ast.parse`` calls in different threads that interleave (a thread switch
inside one, say when the collector runs) corrupt it, and one of them fails with
``SystemError: AST constructor recursion depth mismatch`` (python/cpython#106905).  The
agent parses skill files on several threads (discovery, vetting, the trust question,
the eval tool, a reload), so every parse of ours goes through this lock.
"""

from __future__ import annotations

import ast
import threading

_lock = threading.Lock()


def parse_module(source: str, filename: str = "<unknown>") -> ast.Module:
    with _lock:
        return ast.parse(source, filename=filename, mode="exec")


def parse_expression(source: str, filename: str = "<unknown>") -> ast.Expression:
    with _lock:
        return ast.parse(source, filename=filename, mode="eval")
