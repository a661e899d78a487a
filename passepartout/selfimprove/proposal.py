"""A proposed skill file: where it would go, what it replaces, and whether it may.

Only the person's own skills directory is written.  A name that a shipped skill has is
refused (a later directory's skill overrides an earlier one, so a person's ``policy.py``
would replace the gates themselves), as is a file the vetting refuses, its ``:test``
blocks included (they run in the trial): what the person is asked about is always a
file the engine would load, with tests held to the same rules.
"""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass
from pathlib import Path

from passepartout.engine import vetting
from passepartout.engine.discovery import _NAME, skill_name
from passepartout.engine.literate import python_code, python_tests
from passepartout.errors import PassepartoutError

MAX_BYTES = 256 * 1024
DIFF_LINES = 400


class ProposalError(PassepartoutError):
    """The proposal cannot be made (the message says why, for the model to fix)."""

    kind = "proposal-error"


@dataclass(frozen=True)
class Proposal:
    name: str
    path: Path
    content: str
    previous: str | None

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.content.encode("utf-8")).hexdigest()

    def diff(self) -> str:
        """The change as a unified diff (a new file: every line added)."""
        lines = list(difflib.unified_diff(
            (self.previous or "").splitlines(keepends=True),
            self.content.splitlines(keepends=True),
            fromfile="/dev/null" if self.previous is None else f"a/{self.path.name}",
            tofile=f"b/{self.path.name}"))
        if len(lines) > DIFF_LINES:
            lines = [*lines[:DIFF_LINES], f"... ({len(lines) - DIFF_LINES} more lines)\n"]
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)

    def describe(self) -> str:
        if self.previous is None:
            return f"a new skill {self.name} ({self.path}, {self.content.count(chr(10)) + 1} lines)"
        added = removed = 0
        for line in self.diff().splitlines():
            if line.startswith("+") and not line.startswith("+++"):
                added += 1
            elif line.startswith("-") and not line.startswith("---"):
                removed += 1
        return f"a change to your skill {self.name} ({self.path}: +{added} -{removed} lines)"


def plan(file_name: str, content: str, *, skills_dir: Path | None,
         shipped_dir: Path) -> Proposal:
    """The proposal of ``content`` as ``file_name`` in ``skills_dir``, or ProposalError."""
    if skills_dir is None:
        raise ProposalError("no skills directory is set (SKILLS_DIR): the person's skills "
                            "have no place to be written")
    path = Path(file_name)
    if path.name != file_name or path.suffix not in (".py", ".org"):
        raise ProposalError("file_name must be a plain file name ending in .py or .org, "
                            f"not {file_name!r}")
    name = skill_name(path)
    if not _NAME.match(name):
        raise ProposalError(f"{file_name}: a skill name must be lowercase letters, digits "
                            "and _ (a dash reads as _)")
    if any(skill_name(p) == name for p in _skill_files(shipped_dir)):
        raise ProposalError(f"{name} is a shipped skill: shipped skills are never rewritten; "
                            "propose a skill of another name")
    if "\x00" in content or len(content.encode("utf-8")) > MAX_BYTES:
        raise ProposalError(f"the content must be text of at most {MAX_BYTES} bytes")
    target = Path(skills_dir) / file_name
    others = [p for p in _skill_files(Path(skills_dir))
              if skill_name(p) == name and p.name != file_name]
    if others:
        raise ProposalError(f"your skill {name} is {others[0].name}: propose that file")
    try:
        source = python_code(content) if path.suffix == ".org" else content
        tests = python_tests(content) if path.suffix == ".org" else None
    except ValueError as err:  # an unterminated block
        raise ProposalError(f"malformed org file: {err}") from None
    try:
        compile(source, str(target), "exec", dont_inherit=True)
        if tests is not None:
            compile(tests, str(target), "exec", dont_inherit=True)
        # Its tests run too (in the trial): they are held to the skill's own rules.
        findings = vetting.vet(source, str(target), tests=tests)
    except SyntaxError as err:
        raise ProposalError(f"syntax error at line {err.lineno}: {err.msg}") from None
    if findings:
        raise ProposalError("the vetting refuses it: " + "; ".join(map(str, findings)))
    try:
        previous: str | None = target.read_text(encoding="utf-8")
    except FileNotFoundError:
        previous = None
    except (OSError, UnicodeDecodeError) as err:
        raise ProposalError(f"cannot read the current {target}: {err}") from None
    if previous == content:
        raise ProposalError(f"{target} already has exactly this content")
    return Proposal(name, target, content, previous)


def _skill_files(directory: Path) -> list[Path]:
    if not directory.is_dir():
        return []
    return [p for p in directory.iterdir() if p.suffix in (".py", ".org")]
