"""The vetting scan: what a skill may use is listed, everything else is refused.

A skill (any skill outside the shipped, pinned set) imports only from
``passepartout.api`` and the standard-library modules of :data:`ALLOWED_MODULES`
(pure computation: text, numbers, dates, collections; nothing that reaches files,
processes, the network, the import machinery, pickling or foreign code).  What it
needs of the machine goes through ``passepartout.api``.

The scan also refuses the reflective ways around such a list: dunder attributes and
names (``x.__self__``, ``__builtins__``), private attributes of anything but ``self``,
frame and code attributes (``gi_frame``, ``f_globals``), the reflective builtins
(``getattr``, ``vars``, ``type``, ``open``, ``eval`` ...), ``str.format`` fields that
reach attributes, a module object used as a value, attributes set on what the skill
imported, relative imports, and strings in annotations (evaluated later) that would
do any of this.  Each finding names its line and why.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import re
import string
import types
from dataclasses import dataclass
from typing import Any

from passepartout.pyast import parse_expression, parse_module

API_MODULE = "passepartout.api"

# Pure standard-library modules a skill may import.  Not here on purpose: os, sys,
# pathlib, io, shutil, subprocess, socket, urllib, http, asyncio, threading, pickle,
# marshal, shelve, ctypes, importlib, pkgutil, runpy, inspect, types, gc, logging,
# contextlib (chdir, redirect_*), tempfile, glob, zipimport, code, codeop.
ALLOWED_MODULES = frozenset(
    {
        "__future__",
        "abc",
        "base64",
        "bisect",
        "calendar",
        "collections",
        "collections.abc",
        "copy",
        "dataclasses",
        "datetime",
        "decimal",
        "difflib",
        "enum",
        "fractions",
        "functools",
        "hashlib",
        "heapq",
        "hmac",
        "itertools",
        "json",
        "math",
        "numbers",
        "operator",
        "random",
        "re",
        "secrets",
        "statistics",
        "string",
        "textwrap",
        "time",
        "typing",
        "unicodedata",
        "uuid",
    }
)

# Names of allowed modules that still reach too far.
DENIED_MODULE_NAMES: dict[str, frozenset[str]] = {
    "operator": frozenset({"attrgetter", "methodcaller"}),
    "typing": frozenset({"get_type_hints", "ForwardRef"}),
    "string": frozenset({"Formatter"}),
    "functools": frozenset({"update_wrapper"}),
    "uuid": frozenset({"getnode", "uuid1"}),  # may run ifconfig or ip
    "calendar": frozenset({"main"}),
}

# Functions that change the class (or function) they are given: a skill may use them
# only as decorators of its own definitions, never call them on something it imported.
DECORATOR_ONLY = frozenset(
    {
        "dataclasses.dataclass",
        "functools.total_ordering",
        "functools.wraps",
        "functools.singledispatch",
        "enum.unique",
        "typing.final",
        "typing.runtime_checkable",
    }
)

DENIED_BUILTINS = frozenset(
    {
        "getattr",
        "setattr",
        "delattr",
        "vars",
        "globals",
        "locals",
        "dir",
        "type",
        "open",
        "exec",
        "eval",
        "compile",
        "breakpoint",
        "input",
        "help",
        "exit",
        "quit",
        "copyright",
        "credits",
        "license",
        "memoryview",
    }
)

# Attributes that hand out frames, code objects and class registries.
_FRAME_ATTR = re.compile(r"^(gi|cr|ag|tb|co)_\w+$|^f_(globals|builtins|locals|back|code|trace)$")
DENIED_ATTRS = frozenset({"mro", "register", "func_globals", "format_field", "get_field"})
# Dunder attributes whose reading gives nothing away.
HARMLESS_DUNDERS = frozenset({"__init__", "__post_init__", "__name__", "__qualname__", "__doc__"})
# Dunder names a class body may bind.
CLASS_BODY_DUNDERS = frozenset({"__slots__", "__hash__", "__match_args__"})


@dataclass(frozen=True)
class Finding:
    line: int
    what: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.what}"


def _dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _api_names() -> frozenset[str]:
    api = importlib.import_module(API_MODULE)
    return frozenset(getattr(api, "__all__", ()))


def _format_reaches_attributes(fmt: str) -> bool:
    try:
        fields = [f for _, f, spec, _ in string.Formatter().parse(fmt) if f is not None]
        specs = [s for _, f, s, _ in string.Formatter().parse(fmt) if s]
    except ValueError:
        return True
    return any("." in f or "[" in f for f in fields) or any(
        _format_reaches_attributes(s) for s in specs
    )


class _Scanner(ast.NodeVisitor):
    """One pass over a skill's tree; ``findings`` says what it may not do."""

    def __init__(self, line_offset: int = 0) -> None:
        self.findings: list[Finding] = []
        self.line_offset = line_offset
        self.modules: dict[str, str] = {}  # local name -> allowed module it is bound to
        self.imported: dict[str, str] = {}  # local name -> "module.name" it came from
        self.api_names = _api_names()
        self.allowed_parents: set[int] = set()  # ids of nodes a module may be the value of
        self.decorator_nodes: set[int] = set()
        self.self_names: list[set[str]] = [set()]
        self.class_depth = 0
        self._class_body: list[bool] = [False]

    def flag(self, node: ast.AST, what: str) -> None:
        self.findings.append(Finding(getattr(node, "lineno", 0) + self.line_offset, what))

    # -- imports ------------------------------------------------------------------------

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name == API_MODULE:
                self.flag(node, f"import {API_MODULE} is not allowed: "
                                f"use 'from {API_MODULE} import name'")
            elif alias.name not in ALLOWED_MODULES:
                self.flag(node, f"import of {alias.name} is not allowed")
            elif alias.asname:
                self.modules[alias.asname] = alias.name
            else:
                root = alias.name.split(".")[0]
                self.modules[root] = root

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level:
            self.flag(node, "relative imports are not allowed (a skill is one file)")
            return
        if module == API_MODULE:
            for alias in node.names:
                if alias.name not in self.api_names:
                    self.flag(node, f"{API_MODULE} has no public name {alias.name!r}")
                self.imported[alias.asname or alias.name] = f"{API_MODULE}.{alias.name}"
            return
        if module not in ALLOWED_MODULES:
            self.flag(node, f"import of {module} is not allowed")
            return
        for alias in node.names:
            if alias.name == "*":
                self.flag(node, f"'from {module} import *' is not allowed")
                continue
            if module == "__future__":
                continue
            problem = _module_attr_problem(module, alias.name)
            if problem:
                self.flag(node, problem)
                continue
            value = getattr(importlib.import_module(module), alias.name, None)
            local = alias.asname or alias.name
            if isinstance(value, types.ModuleType):
                self.modules[local] = value.__name__
            else:
                self.imported[local] = f"{module}.{alias.name}"

    # -- names ----------------------------------------------------------------------------

    def visit_Name(self, node: ast.Name) -> None:
        name = node.id
        if _dunder(name):
            in_class = self._class_body[-1] and isinstance(node.ctx, ast.Store)
            if not (in_class and name in CLASS_BODY_DUNDERS):
                self.flag(node, f"the name {name} is not allowed")
        elif name in DENIED_BUILTINS:
            self.flag(node, f"{name} is not allowed")
        elif name in self.modules and id(node) not in self.allowed_parents:
            self.flag(node, f"the module {self.modules[name]} may only be used as '{name}.name'")
        elif isinstance(node.ctx, ast.Load):
            self._check_decorator_only(node, self.imported.get(name, ""))

    def visit_Assign(self, node: ast.Assign) -> None:
        # ``V = Verdict``: the alias is as imported as the name (attributes stay read-only).
        if isinstance(node.value, ast.Name) and node.value.id in self.imported:
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self.imported[target.id] = self.imported[node.value.id]
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        self._check_declared(node, node.names)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self._check_declared(node, node.names)

    def _check_declared(self, node: ast.AST, names: list[str]) -> None:
        for name in names:
            if _dunder(name) or name in DENIED_BUILTINS:
                self.flag(node, f"the name {name} is not allowed")

    def _check_decorator_only(self, node: ast.AST, qualified: str) -> None:
        if qualified in DECORATOR_ONLY and id(node) not in self.decorator_nodes:
            self.flag(node, f"{qualified} may only be used as a decorator")

    # -- attributes -------------------------------------------------------------------------

    def visit_Attribute(self, node: ast.Attribute) -> None:
        attr = node.attr
        if _dunder(attr):
            if attr not in HARMLESS_DUNDERS or not isinstance(node.ctx, ast.Load):
                self.flag(node, f"access to .{attr} is not allowed")
        elif attr.startswith("_") and not self._is_self(node.value):
            self.flag(node, f"access to the private attribute .{attr} is not allowed")
        elif _FRAME_ATTR.match(attr) or attr in DENIED_ATTRS:
            self.flag(node, f"access to .{attr} is not allowed")
        elif attr in ("format", "format_map") and not _constant_format(node.value):
            self.flag(node, f"str.{attr} with a field that reaches attributes or items "
                            "(or on a text that is not a constant) is not allowed")
        chain = _chain(node)
        if chain and chain[0] in self.modules:
            self._check_module_chain(node, chain)
        root = _root_name(node)
        if not isinstance(node.ctx, ast.Load):
            if root is None:
                self.flag(node, "setting attributes of a computed object is not allowed")
            elif root in self.modules or root in self.imported or root in _BUILTIN_NAMES:
                self.flag(node, f"setting attributes of {root} is not allowed")
        self.generic_visit(node)

    def _check_module_chain(self, node: ast.Attribute, chain: list[str]) -> None:
        if id(node) in self.allowed_parents:
            return  # an inner part of a chain its outermost attribute checked
        inner: ast.expr = node.value
        while isinstance(inner, ast.Attribute):
            self.allowed_parents.add(id(inner))
            inner = inner.value
        self.allowed_parents.add(id(inner))
        value: Any = importlib.import_module(self.modules[chain[0]])
        qualified = value.__name__
        for attr in chain[1:]:
            if not isinstance(value, types.ModuleType):
                return  # past the module: the generic attribute checks apply
            problem = _module_attr_problem(value.__name__, attr)
            if problem:
                self.flag(node, problem)
                return
            qualified = f"{value.__name__}.{attr}"
            value = getattr(value, attr, None)
            if isinstance(value, types.ModuleType) and value.__name__ not in ALLOWED_MODULES:
                self.flag(node, f"{qualified} is the module {value.__name__}, not allowed")
                return
        if isinstance(value, types.ModuleType):
            self.flag(node, f"the module {value.__name__} may only be used as 'module.name'")
        elif isinstance(node.ctx, ast.Load):
            self._check_decorator_only(node, qualified)

    def _is_self(self, node: ast.expr) -> bool:
        return isinstance(node, ast.Name) and node.id in self.self_names[-1]

    # -- definitions ---------------------------------------------------------------------

    def _visit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._mark_decorators(node.decorator_list)
        if _dunder(node.name) and not self._class_body[-1]:
            self.flag(node, f"the name {node.name} is not allowed outside a class")
        for default in [*node.args.defaults, *node.args.kw_defaults]:
            if default is not None:
                self.visit(default)
        for decorator in node.decorator_list:
            self.visit(decorator)
        self._check_annotations(node)
        params = [*node.args.posonlyargs, *node.args.args]
        own = {params[0].arg} if self._class_body[-1] and params else set()
        reassigned = {
            n.id
            for n in ast.walk(node)
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
        }
        self.self_names.append(own - reassigned)
        self._class_body.append(False)
        for arg in [*params, *node.args.kwonlyargs, node.args.vararg, node.args.kwarg]:
            if arg is not None and (_dunder(arg.arg) or arg.arg in DENIED_BUILTINS):
                self.flag(arg, f"the name {arg.arg} is not allowed")
        for stmt in node.body:
            self.visit(stmt)
        self._class_body.pop()
        self.self_names.pop()

    visit_FunctionDef = _visit_function
    visit_AsyncFunctionDef = _visit_function

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.self_names.append(set())
        self._class_body.append(False)
        self.generic_visit(node)
        self._class_body.pop()
        self.self_names.pop()

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._mark_decorators(node.decorator_list)
        if _dunder(node.name):
            self.flag(node, f"the name {node.name} is not allowed")
        for expr in [*node.decorator_list, *node.bases, *node.keywords]:
            self.visit(expr)
        self._class_body.append(True)
        self.self_names.append(set())
        for stmt in node.body:
            self.visit(stmt)
        self.self_names.pop()
        self._class_body.pop()

    def _mark_decorators(self, decorators: list[ast.expr]) -> None:
        for decorator in decorators:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            self.decorator_nodes.add(id(target))

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        for attr in node.kwd_attrs:
            if attr.startswith("_") or _FRAME_ATTR.match(attr) or attr in DENIED_ATTRS:
                self.flag(node, f"matching the attribute {attr} is not allowed")
        self.generic_visit(node)

    # -- annotations: strings in them are evaluated later (inspect, typing) -------------------

    def _check_annotations(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        args = node.args
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
        for annotation in [a.annotation for a in every if a is not None] + [node.returns]:
            if annotation is not None:
                self._annotation(annotation)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._annotation(node.annotation)
        self.visit(node.target)
        if node.value is not None:
            self.visit(node.value)

    def _annotation(self, annotation: ast.expr) -> None:
        self.visit(annotation)
        for inner in ast.walk(annotation):
            if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
                try:
                    tree = parse_expression(inner.value.strip())
                except SyntaxError:
                    self.flag(inner, "an annotation string that is not an expression")
                    continue
                nested = _Scanner(line_offset=inner.lineno - 1 + self.line_offset)
                nested.modules, nested.imported = self.modules, self.imported
                nested.visit(tree)
                self.findings += nested.findings


_BUILTIN_NAMES = frozenset(dir(builtins))


def _module_attr_problem(module: str, attr: str) -> str | None:
    if attr.startswith("_"):
        return f"{module}.{attr} is private and not allowed"
    if attr in DENIED_MODULE_NAMES.get(module, ()):
        return f"{module}.{attr} is not allowed"
    if _FRAME_ATTR.match(attr) or attr in DENIED_ATTRS:
        return f"{module}.{attr} is not allowed"
    return None


def _chain(node: ast.expr) -> list[str]:
    """``a.b.c`` -> ``["a", "b", "c"]``; empty when the chain does not start at a name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return []
    return [node.id, *reversed(parts)]


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _constant_format(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and not _format_reaches_attributes(node.value)
    )


def vet(source: str, filename: str = "<skill>", *, tests: str | None = None) -> list[Finding]:
    """What in ``source`` a skill may not do (empty: it passes).  Syntax errors raise.

    ``tests``: the skill's test code (the ``:test`` blocks of an org skill), which runs
    in a copy of the module's namespace after its code: it is held to the same rules,
    read after the code as it runs, so a name the code imported is known to the scan.
    """
    tree = parse_module(source, filename)
    if tests is not None:
        tree.body += parse_module(tests, filename).body
    scanner = _Scanner()
    scanner.visit(tree)
    return sorted(set(scanner.findings), key=lambda f: (f.line, f.what))
