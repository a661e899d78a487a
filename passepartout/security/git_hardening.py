"""Git run against an untrusted repository: nothing the repository configures may run.

Two halves. :data:`GIT_ENV` goes into every sandboxed command's environment:
``GIT_CONFIG_COUNT``/``KEY``/``VALUE`` act like ``git -c`` and win over the
repository's own ``.git/config`` (no hooks, no fsmonitor, no pager, no editor, no ssh,
no gpg, no credential helper, no implicit bare repository); the system and global
files are not read at all. What cannot be switched off from outside, because the
repository names it (a textconv or external diff driver chosen by ``.gitattributes``, a
clean/smudge filter run by ``git status``), is caught by :func:`repository_risks`:
the shell analysis asks before any git command whose repository's config (its own,
a worktree's and every submodule's) sets a key outside a list known to be harmless.
"""

from __future__ import annotations

import logging
import os
import subprocess
from pathlib import Path

from passepartout.security.shell.rules import names

log = logging.getLogger(__name__)

# Settings that would run a program named by the repository, neutralised. (An empty
# diff.external is not among them: git then fails every diff trying to run "".)
_OVERRIDES: tuple[tuple[str, str], ...] = (
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("core.pager", "cat"),
    ("core.editor", "false"),
    ("sequence.editor", "false"),
    ("core.sshCommand", "false"),
    ("core.askPass", "false"),
    ("credential.helper", ""),
    ("gpg.program", "false"),
    ("gpg.ssh.program", "false"),
    ("gpg.x509.program", "false"),
    ("log.showSignature", "false"),
    ("protocol.ext.allow", "never"),
    ("safe.bareRepository", "explicit"),
)

GIT_ENV: dict[str, str] = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_CONFIG_COUNT": str(len(_OVERRIDES)),
    **{f"GIT_CONFIG_KEY_{i}": key for i, (key, _) in enumerate(_OVERRIDES)},
    **{f"GIT_CONFIG_VALUE_{i}": value for i, (_, value) in enumerate(_OVERRIDES)},
}

# Config keys known to run nothing (section: None for all keys, or the allowed names;
# three-part keys are matched on their section and last part).
_HARMLESS_SECTIONS = names("""
    user author committer color advice init i18n pull push fetch rebase status format gc
    pack index feature extensions commit tag rerere help gui column versionsort branch
    lfs http transfer protocol url checkout clone worktree stash am apply fsck reset
    splitindex notes safe
    """)
_HARMLESS_KEYS: dict[str, frozenset[str]] = {
    "core": names("""
        repositoryformatversion filemode bare logallrefupdates ignorecase precomposeunicode
        symlinks autocrlf eol safecrlf quotepath abbrev compression loosecompression
        bigfilethreshold commentchar commentstring checkstat trustctime untrackedcache
        splitindex sharedrepository whitespace multipackindex commitgraph packedgitlimit
        packedgitwindowsize deltabasecachelimit filesreflockTimeout packedrefstimeout
        notesref preloadindex fscache longpaths protecthfs protectntfs warnambiguousrefs
        sparsecheckout sparsecheckoutcone excludesfile attributesfile fsyncmethod fsync
        """.lower()),
    "remote": names("""
        url pushurl fetch push tagopt prune prunetags mirror promisor partialclonefilter
        skipdefaultupdate skipfetchall
        """),
    "diff": names("""
        renames algorithm noprefix mnemonicprefix relative context interhunkcontext
        indentheuristic colormoved colormovedws wserrorhighlight statgraphwidth
        statnamewidth submodule ignoresubmodules dirstat suppressblankempty orderfile
        renamelimit autorefreshindex srcprefix dstprefix xfuncname funcname binary
        wordregex cachetextconv
        """),
    "merge": names("""
        ff conflictstyle renames renamelimit log summary stat verbosity autostash
        defaulttoupstream directoryrenames branchdesc name recursive
        """),
    "log": names("""
        date decorate follow abbrevcommit mailmap graphcolors excludedecoration
        initialdecorationset showroot diffmerges
        """),
    "blame": names("""
        date coloring showemail blankboundary showroot markunblamablelines
        markignoredlines ignorerevsfile
        """),
    "grep": names("linenumber column patterntype extendedregexp threads fullname"),
    "submodule": names("""
        url active branch ignore shallow fetchrecursesubmodules recurse fetchjobs path
        """),
}
# What GIT_ENV overrides cannot run, whatever the repository sets it to.
_NEUTRALISED = frozenset(key.lower() for key, _ in _OVERRIDES)
_CACHE: dict[tuple[str, int, int, int], list[str]] = {}


def risky_key(key: str) -> bool:
    """True when config key ``key`` (as ``git config --list`` prints it) may run a program."""
    section, _, rest = key.partition(".")
    section = section.lower()
    if section in _HARMLESS_SECTIONS or key.lower() in _NEUTRALISED:
        return False
    allowed = _HARMLESS_KEYS.get(section)
    if allowed is None:
        return True
    name = rest.rsplit(".", 1)[-1].lower()
    return name not in allowed


def _git_dirs(start: Path) -> tuple[list[Path], list[str]]:
    """The git directories git would use from ``start`` (with submodules), and problems."""
    here = start
    for directory in (here, *here.parents):
        dot = directory / ".git"
        if dot.is_dir():
            return _with_common(dot)
        if dot.is_file():
            try:
                text = dot.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError):
                return [], [f"{dot} cannot be read"]
            if not text.startswith("gitdir:"):
                return [], [f"{dot} is not a gitdir file"]
            return _with_common((directory / text[len("gitdir:") :].strip()).resolve())
        if (directory / "HEAD").is_file() and (directory / "objects").is_dir():
            return _with_common(directory)  # a bare repository, or inside a .git
    return [], []


def _with_common(gitdir: Path) -> tuple[list[Path], list[str]]:
    dirs = [gitdir]
    common = gitdir / "commondir"
    if common.is_file():
        try:
            dirs.append((gitdir / common.read_text(encoding="utf-8").strip()).resolve())
        except (OSError, UnicodeDecodeError):
            return dirs, [f"{common} cannot be read"]
    return dirs, []


def _config_files(gitdirs: list[Path]) -> list[Path]:
    files: list[Path] = []
    for gitdir in gitdirs:
        for name in ("config", "config.worktree"):
            if (gitdir / name).exists():
                files.append(gitdir / name)
        modules = gitdir / "modules"
        if modules.is_dir():
            files.extend(p for p in modules.rglob("config") if p.is_file())
        worktrees = gitdir / "worktrees"
        if worktrees.is_dir():
            files.extend(p for p in worktrees.glob("*/config.worktree") if p.is_file())
    return files


def _keys(path: Path) -> list[str]:
    """The keys set in one config file, read by git itself (includes not followed)."""
    st = path.stat()
    cache_key = (str(path), st.st_mtime_ns, st.st_size, st.st_ino)
    if cache_key in _CACHE:
        return _CACHE[cache_key]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent", **GIT_ENV}
    proc = subprocess.run(
        ["git", "config", "--file", str(path), "--list", "--name-only"],
        capture_output=True,
        text=True,
        env=env,
        timeout=10,
        check=False,
    )
    if proc.returncode != 0:
        raise ValueError(proc.stderr.strip().splitlines()[0] if proc.stderr.strip() else "")
    keys = proc.stdout.splitlines()
    if len(_CACHE) > 64:
        _CACHE.clear()
    _CACHE[cache_key] = keys
    return keys


def repository_risks(cwd: str | Path) -> list[str]:
    """Reasons to ask before git runs in ``cwd``: config keys of its repository that
    may run a program (or that the analysis does not know), or a config it cannot read."""
    try:
        gitdirs, problems = _git_dirs(Path(cwd).absolute())
        reasons = [f"git: {p}" for p in problems]
        for path in _config_files(gitdirs):
            try:
                keys = _keys(path)
            except (OSError, ValueError, subprocess.SubprocessError) as exc:
                reasons.append(f"git: the repository's config {path} could not be read ({exc})")
                continue
            for key in keys:
                if risky_key(key):
                    reasons.append(
                        f"the repository's git config ({path.name}) sets {key}, which may run "
                        "a program (textconv, filter, external diff, hook ...) or is not "
                        "known to be harmless"
                    )
    except OSError as exc:
        return [f"git: the repository could not be examined ({exc})"]
    return reasons
