"""The vetting scan: a skill is read before it is trusted (seed 003's sandbox check).

Restricted: process creation and raw system access (``subprocess``, ``os.system``,
``os.exec*``/``spawn*``/``popen``/``fork``, ``pty``, ``multiprocessing``), dynamic code
(``eval``, ``exec``, ``compile``, ``__import__``, ``importlib``, ``runpy``), foreign code and
sockets (``ctypes``, ``cffi``, ``socket``, ``ssl``), and the reflective escapes that would
reach them anyway (``__builtins__``, ``__subclasses__``, ``__globals__``, ``getattr`` with a
computed name, ``sys.modules``).  A capability that needs one of these lives in the
``passepartout`` package, where it is typed and tested, and the skill imports it from there.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

RESTRICTED_MODULES = frozenset(
    {
        "subprocess",
        "pty",
        "multiprocessing",
        "importlib",
        "runpy",
        "ctypes",
        "cffi",
        "socket",
        "ssl",
        "asyncio.subprocess",
        "code",
        "codeop",
        "pickle",
        "marshal",
        "shelve",
        "webbrowser",
        "signal",
        "resource",
        "builtins",
    }
)
RESTRICTED_CALLS = frozenset({"eval", "exec", "compile", "__import__", "breakpoint", "globals"})
RESTRICTED_OS = frozenset(
    {
        "system",
        "popen",
        "fork",
        "forkpty",
        "kill",
        "killpg",
        "execl",
        "execle",
        "execlp",
        "execlpe",
        "execv",
        "execve",
        "execvp",
        "execvpe",
        "spawnl",
        "spawnle",
        "spawnlp",
        "spawnlpe",
        "spawnv",
        "spawnve",
        "spawnvp",
        "spawnvpe",
        "posix_spawn",
        "posix_spawnp",
        "putenv",
        "unsetenv",
    }
)
RESTRICTED_ATTRS = frozenset(
    {"__builtins__", "__subclasses__", "__globals__", "__code__", "__loader__", "modules"}
)


@dataclass(frozen=True)
class Finding:
    line: int
    what: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.what}"


class _Scanner(ast.NodeVisitor):
    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self.os_aliases = {"os", "posix"}

    def _flag(self, node: ast.AST, what: str) -> None:
        self.findings.append(Finding(getattr(node, "lineno", 0), what))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_module(node, alias.name)
            if alias.name in ("os", "posix"):
                self.os_aliases.add(alias.asname or alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        self._check_module(node, module)
        if module in ("os", "posix"):
            for alias in node.names:
                if alias.name in RESTRICTED_OS or alias.name == "*":
                    self._flag(node, f"imports os.{alias.name}")

    def _check_module(self, node: ast.AST, module: str) -> None:
        root = module.split(".")[0]
        if module in RESTRICTED_MODULES or root in RESTRICTED_MODULES:
            self._flag(node, f"imports restricted module {module!r}")

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id in RESTRICTED_CALLS:
            self._flag(node, f"calls {func.id}()")
        if isinstance(func, ast.Name) and func.id in ("getattr", "setattr", "delattr"):
            if len(node.args) >= 2 and not isinstance(node.args[1], ast.Constant):
                self._flag(node, f"{func.id}() with a computed attribute name")
            elif len(node.args) >= 2 and isinstance(node.args[1], ast.Constant):
                name = str(node.args[1].value)
                if name in RESTRICTED_OS or name in RESTRICTED_ATTRS:
                    self._flag(node, f"{func.id}(..., {name!r})")
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if (
            isinstance(node.value, ast.Name)
            and node.value.id in self.os_aliases
            and node.attr in RESTRICTED_OS
        ):
            self._flag(node, f"uses {node.value.id}.{node.attr}")
        elif node.attr in RESTRICTED_ATTRS:
            self._flag(node, f"uses .{node.attr}")
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id == "__builtins__":
            self._flag(node, "uses __builtins__")


def vet(source: str, filename: str = "<skill>") -> list[Finding]:
    """What in ``source`` a skill may not do (empty: trusted).  Syntax errors raise."""
    tree = ast.parse(source, filename=filename)
    scanner = _Scanner()
    scanner.visit(tree)
    return scanner.findings
