"""Literate skills: the python source blocks of an org file are its code and its tests.

Blocks with ``:tangle no`` are documentation and are skipped; blocks with ``:test``
(``:test yes``) are the skill's tests, run by the test suite.  The code keeps the org
file's line numbers (other lines become blank), so an error points into the org file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_BEGIN = re.compile(r"^[ \t]*#\+begin_src[ \t]+(\S+)(.*)$", re.IGNORECASE)
_END = re.compile(r"^[ \t]*#\+end_src\b", re.IGNORECASE)


@dataclass(frozen=True)
class SourceBlock:
    language: str
    header: dict[str, str]
    first_line: int  # 1-based line of the block's first code line
    code: str

    @property
    def is_test(self) -> bool:
        return "test" in self.header and self.header["test"] not in ("no", "nil")

    @property
    def is_tangled(self) -> bool:
        return self.header.get("tangle", "yes") not in ("no", "nil")


def parse_header(text: str) -> dict[str, str]:
    """``:tangle no :test`` -> ``{"tangle": "no", "test": "yes"}``."""
    header: dict[str, str] = {}
    tokens = text.split()
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.startswith(":"):
            value = "yes"
            if i + 1 < len(tokens) and not tokens[i + 1].startswith(":"):
                value = tokens[i + 1]
                i += 1
            header[token[1:].lower()] = value
        i += 1
    return header


def source_blocks(text: str) -> list[SourceBlock]:
    """Every source block, in order.  An unterminated block is a ``ValueError``."""
    blocks: list[SourceBlock] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        match = _BEGIN.match(lines[i])
        if not match:
            i += 1
            continue
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and not _END.match(lines[i]):
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise ValueError(f"line {start + 1}: #+begin_src without #+end_src")
        blocks.append(
            SourceBlock(
                language=match.group(1).lower(),
                header=parse_header(match.group(2)),
                first_line=start + 2,
                code=_dedent_org("\n".join(body)),
            )
        )
        i += 1
    return blocks


def _dedent_org(code: str) -> str:
    # Org indents block bodies with the block; org-src strips the common indentation.
    lines = code.splitlines()
    indents = [len(ln) - len(ln.lstrip()) for ln in lines if ln.strip()]
    cut = min(indents, default=0)
    # ",*" and ",#+" are org's escapes for lines that would otherwise read as org syntax.
    return "\n".join(re.sub(r"^,([*#])", r"\1", ln[cut:]) for ln in lines)


def _assemble(text: str, keep: list[SourceBlock]) -> str:
    total = text.count("\n") + 1
    out = [""] * total
    for block in keep:
        for offset, line in enumerate(block.code.splitlines()):
            out[block.first_line - 1 + offset] = line
    return "\n".join(out) + "\n"


def python_code(text: str) -> str:
    """The skill's code: its tangled, non-test python blocks, at their org lines."""
    blocks = source_blocks(text)
    return _assemble(
        text, [b for b in blocks if b.language == "python" and b.is_tangled and not b.is_test]
    )


def python_tests(text: str) -> str:
    """The skill's tests: its python blocks marked ``:test``, at their org lines."""
    blocks = source_blocks(text)
    return _assemble(text, [b for b in blocks if b.language == "python" and b.is_test])
