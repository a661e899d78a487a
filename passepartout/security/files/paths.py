"""Where a file tool may read and write: resolution that cannot be fooled, and the
protected places.

A proposed path is made absolute (``~`` and the workspace), then resolved with
``realpath``: ``..``, symlinks anywhere on the way (also one planted at the target or
its parent) and ``/proc/self/root`` or ``/proc/<pid>/cwd`` all collapse to the real
place, and the rules are applied to that.  The protected places hold for a file that
does not exist yet: creating ``~/.bashrc`` or a hook in ``.git/hooks`` is refused like
changing one.

A credential place is refused to reading too, and so is its home-relative part
wherever it appears (``/home/other/.npmrc``, a second ``~`` when ``HOME`` was changed):
the person's credentials do not move when ``HOME`` does.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from passepartout.errors import PassepartoutError
from passepartout.security.sensitive import (
    CREDENTIALS,
    GIT_PROTECTED,
    SHELL_RC,
    STARTUP_PATTERNS,
    STARTUP_PLACES,
)
from passepartout.security.shell import DEFAULT_PROTECTED, DEFAULT_SECRETS

# Kernel views of processes and devices: no file tool reads or writes there.
SYSTEM_ROOTS = (Path("/proc"), Path("/sys"), Path("/dev"))


class PathDenied(PassepartoutError):
    """A path a file tool may not touch, with the reason."""


@dataclass(frozen=True)
class PathRules:
    """Absolute roots no tool writes (``protected``) or reads (``secret``) under, and
    relative parts (``.git/hooks``) that are protected wherever they appear."""

    protected: tuple[Path, ...] = ()
    secret: tuple[Path, ...] = ()
    protected_parts: tuple[tuple[str, ...], ...] = ()
    secret_parts: tuple[tuple[str, ...], ...] = ()
    protected_names: frozenset[str] = SHELL_RC
    workspace: Path | None = None
    # Look-up forms of ``secret`` and ``secret_parts``, made once (a tree walk asks a lot).
    _secret_roots: frozenset[str] = field(init=False, repr=False, compare=False)
    _secret_index: dict[str, tuple[tuple[str, ...], ...]] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "_secret_roots", frozenset(str(r) for r in self.secret))
        object.__setattr__(self, "_secret_index", _parts_index(self.secret_parts))

    @classmethod
    def build(
        cls,
        *,
        protected: Iterable[Path | str] = (),
        secret: Iterable[Path | str] = (),
        workspace: Path | None = None,
        defaults: bool = True,
    ) -> PathRules:
        """Rules for these roots, plus (``defaults``) the shell policy's protected and
        secret places, so that a file tool and a shell command agree."""
        prot = [*protected, *(DEFAULT_PROTECTED if defaults else ())]
        sec = [*secret, *(DEFAULT_SECRETS if defaults else ())]
        prot = [p for p in prot if "*" not in str(p)]  # patterns: STARTUP_PATTERNS
        absolute = [p for p in prot if _is_absolute_entry(p)]
        parts = tuple(tuple(Path(str(p)).parts) for p in prot if not _is_absolute_entry(p))
        return cls(
            protected=_real_roots(absolute),
            secret=_real_roots([p for p in sec if _is_absolute_entry(p)]),
            protected_parts=parts,
            secret_parts=CREDENTIAL_PARTS if defaults else (),
            workspace=Path(os.path.realpath(workspace)) if workspace else None,
        )


# Start-up places by their home-relative part (``.config/autostart``), wherever they
# appear in a path: the person's start-up files do not move when ``HOME`` does.
STARTUP_PARTS: tuple[tuple[str, ...], ...] = tuple(Path(p).parts for p in STARTUP_PLACES)


# The home-relative part of each credential place (``.config/gcloud``), refused wherever
# it appears in a path.
CREDENTIAL_PARTS: tuple[tuple[str, ...], ...] = tuple(
    dict.fromkeys(tuple(Path(e[2:]).parts) for e in CREDENTIALS if e.startswith("~/"))
)


@dataclass(frozen=True)
class Resolved:
    """A proposed path, where it really is, and how it was spelled (made absolute)."""

    raw: str
    path: Path
    spelled: Path


def _is_absolute_entry(entry: Path | str) -> bool:
    text = str(entry)
    return text.startswith(("/", "~"))


def _real_roots(entries: Iterable[Path | str]) -> tuple[Path, ...]:
    roots: list[Path] = []
    for entry in entries:
        expanded = os.path.expanduser(str(entry))
        for candidate in {os.path.abspath(expanded), os.path.realpath(expanded)}:
            root = Path(candidate)
            if root not in roots:
                roots.append(root)
    return tuple(roots)


def resolve(raw: str, workspace: Path | None = None) -> Resolved:
    """``raw`` made absolute and resolved to its real place (it need not exist)."""
    if not isinstance(raw, str) or not raw.strip():
        raise PathDenied("an empty path", path=str(raw))
    if "\x00" in raw:
        raise PathDenied("a path with a NUL byte", path=raw.replace("\x00", "\\0"))
    expanded = os.path.expanduser(raw)
    if not os.path.isabs(expanded):
        if workspace is None:
            raise PathDenied(f"{raw!r} is relative and there is no workspace", path=raw)
        expanded = os.path.join(workspace, expanded)
    return Resolved(raw, Path(os.path.realpath(expanded)), Path(os.path.abspath(expanded)))


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _has_parts(path: Path, parts: tuple[str, ...]) -> bool:
    segs = path.parts
    return any(segs[i : i + len(parts)] == parts for i in range(len(segs) - len(parts) + 1))


def denial(raw: str, rules: PathRules, *, writing: bool) -> tuple[Resolved | None, str | None]:
    """Resolve ``raw``; return it and the reason it is refused (``None``: permitted).

    Both the real place and the spelled one are judged: a rule on either applies.
    """
    try:
        resolved = resolve(raw, rules.workspace)
    except PathDenied as err:
        return None, err.message
    for place in dict.fromkeys((resolved.path, resolved.spelled)):
        reason = _judge(place, rules, writing=writing)
        if reason is not None:
            if resolved.path != resolved.spelled:
                reason += f" ({raw} resolves to {resolved.path})"
            return resolved, reason
    return resolved, None


def _judge(path: Path, rules: PathRules, *, writing: bool) -> str | None:
    for root in SYSTEM_ROOTS:
        if _inside(path, root):
            return f"{path} is inside {root}, which file tools do not touch"
    reason = secret_place(path, rules)
    if reason is not None:
        return reason
    if not writing:
        return None
    if path.name in rules.protected_names:
        return f"{path} is a shell start-up file"
    for seg in path.parts[1:]:
        if any(fnmatch.fnmatchcase(seg, p) for p in STARTUP_PATTERNS):
            return f"{path} is a shell or session start-up place ({seg})"
    for parts in STARTUP_PARTS:
        if _has_parts(path, parts):
            return f"{path} starts programs at login or with the session ({'/'.join(parts)})"
    reason = git_place(path)
    if reason is not None:
        return reason
    for parts in rules.protected_parts:
        if _has_parts(path, parts):
            return f"{path} is inside a protected place ({'/'.join(parts)})"
    for root in rules.protected:
        if _inside(path, root):
            return f"{path} is inside a protected place ({root})"
    return None


def git_place(path: Path) -> str | None:
    """Why ``path`` is the hooks, config or info of a git directory (``None``: it is not).

    A git directory by rule, not by name: a ``.git`` directory and anything inside one
    (its submodules under ``modules/``, its worktrees' directories), a directory git
    would take for a repository (``HEAD`` with ``objects`` and ``refs``: a bare one; or
    ``HEAD`` with ``commondir``: a worktree's), and a ``.git`` file itself (it points
    git at another directory).
    """
    if path.name == ".git" and not path.is_dir():
        return f"{path} would point git at another git directory"
    parts = path.parts
    for i in range(len(parts) - 1, 0, -1):
        below = parts[i:]
        if below[0] not in GIT_PROTECTED or (below[0] in ("config", "config.worktree")
                                              and len(below) > 1):
            continue
        top = Path(*parts[:i])
        if ".git" in parts[1:i] or _looks_like_git_dir(top):
            return f"{path} is the {below[0]} of the git directory {top}"
    return None


def _looks_like_git_dir(top: Path) -> bool:
    try:
        if not (top / "HEAD").is_file():
            return False
        return ((top / "objects").is_dir() and (top / "refs").is_dir()) or (
            top / "commondir").is_file()
    except OSError:
        return False


def unreadable(path: Path, rules: PathRules) -> str | None:
    """Why a tree walk (that does not follow symlinks) must not open the real path
    ``path``: a kernel view (``/proc``, ``/sys``, ``/dev``) or a secret place."""
    for root in SYSTEM_ROOTS:
        if _inside(path, root):
            return f"{path} is inside {root}, which file tools do not touch"
    return secret_place(path, rules)


def secret_place(path: Path, rules: PathRules) -> str | None:
    """Why the real path ``path`` holds secrets no tool reads (``None``: it does not).

    No file system access and a few set look-ups per path component: a tree walk that
    does not follow symlinks asks it for each entry it meets.
    """
    roots = rules._secret_roots
    text = str(path)
    while True:
        if text in roots:
            return f"{path} holds secrets ({text})"
        parent = text.rpartition("/")[0] or "/"
        if parent == text:
            break
        text = parent
    segs = path.parts
    index = rules._secret_index
    for i, seg in enumerate(segs):
        for parts in index.get(seg, ()):
            if segs[i : i + len(parts)] == parts:
                return f"{path} holds secrets ({'/'.join(parts)})"
    return None


def _parts_index(
    entries: tuple[tuple[str, ...], ...],
) -> dict[str, tuple[tuple[str, ...], ...]]:
    index: dict[str, list[tuple[str, ...]]] = {}
    for parts in entries:
        if parts:
            index.setdefault(parts[0], []).append(parts)
    return {first: tuple(found) for first, found in index.items()}
