"""What a sandboxed command sees: bubblewrap's mounts, in the order that makes them hold.

bubblewrap applies its mounts in argument order, each over the ones before, so the
layers are, in order:

1. the host read-only, a fresh ``/dev``, ``/proc`` (its ``sys`` read-only: root owns
   those files and would write them even with no capability), ``/tmp`` empty, and a
   socket directory that holds the workspace (``/run`` when the workspace is there);
2. the workspace, writable;
3. *splits*: a directory inside the workspace where a protected or credential place
   does not exist yet (or is a symlink, which could be replaced) is made read-only and
   its existing entries bound back writable, so the place cannot be made (the home
   directory as workspace: no new top-level entry, everything below stays writable);
4. protected places read-only (shell start-up files, also those a pattern such as
   ``~/.bash*`` names, every git directory's hooks, config and info, the agent's own
   places), even inside the workspace;
   then each private org file covered, read-only, by its redacted copy;
5. credential places hidden: an empty read-only tmpfs over a directory, ``/dev/null``
   over a file;
6. the host's socket directories (``/run``, ``/var/run``, ``$XDG_RUNTIME_DIR``) empty,
   ``/etc/resolv.conf`` bound back when it lives there;
7. every listening host Unix socket still visible covered by ``/dev/null`` (a socket
   stays connectable on a read-only mount).

A place the command could not get to anyway (behind another account's directory) is
left out of every layer: it needs no mask, and bubblewrap could not set one up there.
A workspace too large to search for git directories is read-only as a whole.
Nothing the workspace bind exposes can uncover a later layer.
"""

from __future__ import annotations

import fnmatch
import logging
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from passepartout.security.sandbox.find import GIT_PROTECTED, WorkspaceTooLarge, find_in_workspace
from passepartout.security.sandbox.reach import reachable_only

log = logging.getLogger(__name__)

# Where host services put their sockets; hidden whole (``/tmp`` is a fresh tmpfs).
SOCKET_DIRS = ("/run", "/var/run")
# /proc entries root could write with no capability (sysctls, the SysRq trigger).
_PROC_READ_ONLY = ("/proc/sys", "/proc/sysrq-trigger")
_MAX_SPLIT_ENTRIES = 1_000
# Created empty inside a git directory when missing (an empty one changes nothing).
_GIT_PLACEHOLDER_DIRS = frozenset({"hooks", "info"})
_GIT_PLACEHOLDER_FILES = frozenset({"config"})
_GIT_PLACEHOLDERS = _GIT_PLACEHOLDER_DIRS | _GIT_PLACEHOLDER_FILES


class WorkspaceRefused(ValueError):
    """The workspace cannot be confined (the root directory, or inside a hidden place)."""


@dataclass(frozen=True)
class Layers:
    """The places of each layer, absolute, as the host names them."""

    splits: tuple[str, ...]
    anchors: tuple[str, ...]
    protected: tuple[str, ...]
    hidden: tuple[str, ...]
    socket_dirs: tuple[str, ...]
    sockets: tuple[str, ...]


def mount_args(
    workspace: Path,
    *,
    home: Path,
    hidden: Sequence[Path | str] = (),
    protected: Sequence[Path | str] = (),
    sockets: Sequence[Path | str] = (),
    runtime_dir: str | None = None,
    other_homes: Sequence[Path | str] = (),
    views: Sequence[tuple[str, str]] = (),
    readable: Sequence[Path | str] = (),
) -> list[str]:
    """bubblewrap's mount arguments for ``workspace`` (resolved), in layer order.

    ``~/`` entries of ``hidden`` are hidden in ``other_homes`` too.  ``views``:
    ``(copy, original)`` pairs, each copy bound read-only over its original (a private
    org file seen redacted, see :mod:`passepartout.security.sandbox.views`).
    ``readable``: directories seen read-only even where the sandbox masks their place
    (the agent's own code in a checkout under ``/tmp``); the hidden ones stay hidden.
    """
    ws = str(workspace)
    socket_dirs = _socket_dirs(runtime_dir)
    around_ws = [d for d in socket_dirs if _inside(ws, d)]
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for entry in _PROC_READ_ONLY:
        args += ["--ro-bind-try", entry, entry]
    args += ["--tmpfs", "/tmp"]
    for directory in readable:
        args += ["--ro-bind-try", str(directory), str(directory)]
    for directory in around_ws:
        args += ["--tmpfs", directory]
    args += _resolver_args(around_ws)
    args += ["--bind", ws, ws]
    homes = [str(home), *(str(h) for h in other_homes)]
    layers = plan_layers(
        ws,
        hidden=[e for h in homes for e in _in_home(hidden, h, ws, all_homes=h == homes[0])],
        protected=_in_home(protected, homes[0], ws, all_homes=True),
        socket_dirs=[d for d in socket_dirs if d not in around_ws],
        sockets=sockets,
        masked=["/tmp", *around_ws],
    )
    skip = {*layers.protected, *layers.hidden}
    splits = set(layers.splits)
    for place in _outermost_first({*layers.splits, *layers.anchors}):
        if place in splits:
            args += _split_args(place, skip)
        elif os.path.dirname(place) not in splits:  # a split binds its entries already
            args += ["--bind", place, place]
    for path in layers.protected:
        args += ["--ro-bind", path, path]
    for copy, original in views:
        if (
            os.path.isfile(original)
            and not any(_inside(original, h) for h in layers.hidden)
            and reachable_only([Path(original)])
        ):
            args += ["--ro-bind", copy, original]
    for path in layers.hidden:
        if os.path.isdir(path):
            args += ["--tmpfs", path, "--remount-ro", path]
        else:
            args += ["--ro-bind", "/dev/null", path]
    for directory in layers.socket_dirs:
        args += ["--tmpfs", directory]
    args += _resolver_args(layers.socket_dirs)
    for path in layers.sockets:
        args += ["--ro-bind", "/dev/null", path]
    return args


def plan_layers(
    ws: str,
    *,
    hidden: Iterable[Path | str],
    protected: Iterable[Path | str],
    socket_dirs: Sequence[str] = (),
    sockets: Iterable[Path | str] = (),
    masked: Sequence[str] = (),
) -> Layers:
    """Which places each layer covers; see the module's docstring for the order."""
    if ws == "/":
        raise WorkspaceRefused("the root directory cannot be the workspace")
    hidden_places = _places(hidden)
    protected_places = _places(protected)
    for place in hidden_places:
        if _inside(ws, place) and os.path.exists(place):
            raise WorkspaceRefused(f"the workspace {ws} lies inside the hidden place {place}")
    try:
        protected_places += _relative_places(
            ws, protected, skip=[*hidden_places, *protected_places]
        )
    except WorkspaceTooLarge as exc:
        log.debug("%s: the whole workspace is read-only", exc)
        protected_places.append(ws)

    def seen(path: str) -> bool:  # visible in the sandbox before the masks
        return _inside(path, ws) or not any(_inside(path, m) for m in masked)

    hide = _outermost(
        os.path.realpath(p) for p in hidden_places if os.path.lexists(p) and seen(p)
    )
    keep = [
        p
        for p in _outermost(
            os.path.realpath(p)
            for p in protected_places
            if (_inside(p, ws) or _inside(ws, p)) and os.path.lexists(p)
        )
        if not any(_inside(p, h) for h in hide)
    ]
    covered = [*keep, *hide]
    splits = _outermost_first(
        {
            parent
            for place in (*hidden_places, *protected_places)
            if (parent := _needs_split(place, ws, covered)) is not None
        }
    )
    dirs = [d for d in socket_dirs if seen(d) and not any(_inside(d, h) for h in hide)]
    open_sockets = [
        str(s)
        for s in sockets
        if seen(str(s)) and not any(_inside(str(s), c) for c in (*hide, *dirs))
        and os.path.exists(s)
    ]
    anchors = _anchors(ws, [*keep, *hide, *splits, *dirs], covered=covered)
    return Layers(
        *(
            _within_reach(places)
            for places in (splits, anchors, keep, hide, dirs, open_sockets)
        )
    )


def _within_reach(places: Iterable[str]) -> tuple[str, ...]:
    """The places a sandboxed command could get to; see :mod:`.sandbox_reach`.

    A place behind a directory that refuses the command (another account's) needs no
    mask: the command cannot get there. bubblewrap, setting the mounts up with the same
    credentials, could not get there either, and every command would fail.
    """
    return tuple(str(p) for p in reachable_only(Path(p) for p in places))


def _anchors(ws: str, places: Iterable[str], covered: Sequence[str]) -> list[str]:
    """The directories between the workspace and each masked place, bound onto themselves.

    A mount point cannot be renamed: without this, moving an ancestor away (``mv .git
    .git2``) would carry the masks with it and leave the place free to be made again.
    """
    found: set[str] = set()
    prefix = ws.rstrip("/") + "/"
    for place in places:
        if not place.startswith(prefix):
            continue
        parent = os.path.dirname(place)
        while parent.startswith(prefix) and parent not in found:
            found.add(parent)
            parent = os.path.dirname(parent)
    return [a for a in found if not any(_inside(a, c) for c in covered) and os.path.isdir(a)]


def _needs_split(place: str, ws: str, covered: Sequence[str]) -> str | None:
    """The directory to split so ``place`` cannot be made, or None when nothing can.

    A missing place, or a symlink (its link is replaced, not its target), inside the
    writable workspace: its nearest existing directory becomes read-only at its level.
    """
    if place == ws or not _inside(place, ws):
        return None
    if os.path.lexists(place) and not os.path.islink(place):
        return None
    parent = os.path.dirname(place)
    while not os.path.isdir(parent) and _inside(parent, ws):
        parent = os.path.dirname(parent)
    if not _inside(parent, ws) or any(_inside(parent, c) for c in covered):
        return None
    return parent


def _split_args(directory: str, skip: set[str]) -> list[str]:
    """``directory`` read-only, its existing entries (but links) bound back writable."""
    try:
        entries = [e for e in os.scandir(directory) if not e.is_symlink()]
    except OSError as exc:
        log.warning("cannot list %s (%s); it stays read-only", directory, exc)
        entries = []
    args = ["--ro-bind", directory, directory]
    if len(entries) > _MAX_SPLIT_ENTRIES:
        log.warning("%s has %d entries; it stays read-only", directory, len(entries))
        return args
    for entry in entries:
        if entry.path not in skip and (entry.is_dir() or entry.is_file()):
            args += ["--bind", entry.path, entry.path]
    return args


def _relative_places(ws: str, entries: Iterable[Path | str], skip: Sequence[str]) -> list[str]:
    """Relative entries (``.git/hooks``, ``.gitmodules``) wherever they are in ``ws``.

    Missing hooks, info or config of a git directory are made empty (the same to git as
    missing), so they can be mounted read-only and not be created from inside. Raises
    :class:`WorkspaceTooLarge` when the workspace is too large to search.
    """
    relative = [Path(str(e)).parts for e in entries if _relative(e)]
    if not relative:
        return []
    firsts = {r[0] for r in relative if r[0] != ".git"}
    found = find_in_workspace(Path(ws), firsts, skip=skip)
    inside_git = {r[1] for r in relative if r[0] == ".git" and len(r) > 1}
    places: list[str] = []
    for git_dir in found.git_dirs:
        for name in sorted({*GIT_PROTECTED, *inside_git}):
            place = git_dir / name
            _placeholder(place)
            # A missing config.worktree is read only if the (protected) config says so.
            if os.path.lexists(place) or name in _GIT_PLACEHOLDERS:
                places.append(str(place))
    for match in found.named:
        places += [os.path.join(match.parent, *r) for r in relative if r[0] == match.name]
    return places


def _placeholder(path: Path) -> None:
    if os.path.lexists(path):
        return
    try:
        if path.name in _GIT_PLACEHOLDER_DIRS:
            path.mkdir()
        elif path.name in _GIT_PLACEHOLDER_FILES:
            path.touch()
    except OSError as exc:  # then the git directory is split instead
        log.warning("cannot create %s (%s)", path, exc)


def _socket_dirs(runtime_dir: str | None) -> list[str]:
    dirs = [d for d in SOCKET_DIRS if os.path.isdir(d) and not os.path.islink(d)]
    if runtime_dir and os.path.isabs(runtime_dir) and os.path.isdir(runtime_dir):
        real = os.path.realpath(runtime_dir)
        if not any(_inside(real, d) for d in ("/tmp", *dirs)):
            dirs.append(real)
    return dirs


def _resolver_args(socket_dirs: Sequence[str]) -> list[str]:
    """``/etc/resolv.conf`` often lives under ``/run``: bound back so DNS still works."""
    resolv = os.path.realpath("/etc/resolv.conf")
    if any(_inside(resolv, d) for d in socket_dirs) and os.path.isfile(resolv):
        return ["--ro-bind", resolv, resolv]
    return []


def _relative(entry: Path | str) -> bool:
    return not str(entry).startswith(("/", "~"))


def _in_home(entries: Iterable[Path | str], home: str, ws: str, *, all_homes: bool) -> list[str]:
    """``~`` expanded to ``home``; entries of other homes only when they exist there.

    An entry whose first directory is missing matters only when the workspace holds
    the home (it could be made there): else it is left out without a look at it.
    """
    if not os.path.isdir(home):
        return [str(e) for e in entries if not str(e).startswith("~")] if all_homes else []
    names: set[str] | None = None
    if not _inside(home, ws):
        try:
            names = set(os.listdir(home))
        except OSError:
            names = set()
    out = []
    for entry in entries:
        text = str(entry)
        if text.startswith("~/") and "*" in text:  # a pattern on the home's entries
            out += [f"{home.rstrip('/')}/{name}" for name in sorted(_home_names(home, names))
                    if fnmatch.fnmatchcase(name, text[2:])]
        elif text == "~" or text.startswith("~/"):
            rest = text[2:]
            if names is None or rest.split("/", 1)[0] in names:
                out.append(f"{home.rstrip('/')}/{rest}" if rest else home)
        elif all_homes:
            out.append(text)
    return out


def _home_names(home: str, names: set[str] | None) -> set[str]:
    if names is not None:
        return names
    try:
        return set(os.listdir(home))
    except OSError:
        return set()


def _places(entries: Iterable[Path | str]) -> list[str]:
    """Absolute, parents resolved, the last component kept as named (a link is a link)."""
    places = []
    parents: dict[str, str] = {}
    for entry in entries:
        text = str(entry)
        if _relative(text):
            continue
        parent, name = os.path.split(text.rstrip("/") or "/")
        if name in (".", ".."):  # the parent's realpath resolves the others
            parent, name = os.path.split(os.path.normpath(text))
        real = parents.get(parent)
        if real is None:
            real = parents[parent] = os.path.realpath(parent)
        places.append(f"{real.rstrip('/')}/{name}" if name else real)
    return places


def _inside(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def _outermost(paths: Iterable[str]) -> list[str]:
    """Sorted shallow first, without the paths that lie inside another."""
    kept: list[str] = []
    for path in _outermost_first(set(paths)):
        if not any(_inside(path, k) for k in kept):
            kept.append(path)
    return kept


def _outermost_first(paths: Iterable[str]) -> list[str]:
    return sorted(paths, key=lambda p: (p.count("/"), p))
