"""Parsing while another thread's parse corrupts CPython 3.11's shared AST counter
(python/cpython#106905, which a traceback formatted on another thread can cause): the
parse is tried again; any other error is the source's own."""

from __future__ import annotations

import ast

import pytest

from passepartout import pyast


def test_a_parse_hit_by_the_counter_mismatch_is_tried_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    real = ast.parse
    calls: list[str] = []

    def flaky(source: str, **kwargs: object) -> ast.AST:
        calls.append(source)
        if len(calls) == 1:
            raise SystemError("AST constructor recursion depth mismatch (before=159, after=50)")
        return real(source, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ast, "parse", flaky)
    tree = pyast.parse_module("x = 1\n")
    assert isinstance(tree, ast.Module) and len(calls) == 2
    code = pyast.compile_tree(tree, "<test>", "exec")
    namespace: dict[str, object] = {}
    exec(code, namespace)
    assert namespace["x"] == 1


def test_other_errors_are_not_tried_again(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def broken(source: str, **kwargs: object) -> ast.AST:
        calls.append(1)
        raise SystemError("something else")

    monkeypatch.setattr(ast, "parse", broken)
    with pytest.raises(SystemError, match="something else"):
        pyast.parse_module("x = 1\n")
    assert calls == [1]
    monkeypatch.undo()
    with pytest.raises(SyntaxError):
        pyast.parse_module("def (:\n")
