"""Escapes from the bubblewrap sandbox, tried for real, as root and as a normal user.

Four classes: capabilities kept by root, host Unix sockets (the person's Emacs server
among them), a workspace that re-exposes the masked places (the home directory as
workspace), and writes to protected places from inside. Each runs with the workspace a
project folder and with it the (fake) home directory.
"""

from __future__ import annotations

import errno
import os
import platform
import shlex
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from passepartout.security.sandbox import RunResult, build_argv, run_sandboxed, support
from passepartout.security.sandbox import find as sandbox_find
from passepartout.security.sandbox.scope import SCOPE_ABI, landlock_abi
from passepartout.security.sandbox.seccomp import ARCHES
from passepartout.security.shell import ShellPolicy
from passepartout.security.shell.tool import execute_shell

pytestmark = pytest.mark.attack

ROOT = os.geteuid() == 0
SECRETS = {
    ".ssh/id_rsa": "SSH-PRIVATE-KEY",
    ".aws/credentials": "AWS-SECRET-KEY",
    ".npmrc": "NPM-TOKEN",
    ".config/passepartout/.env": "OPENAI_API_KEY=sk-AGENT",
    ".local/state/passepartout/seal.key": "SEAL-KEY",
}


@dataclass
class Home:
    """A fake home with credentials, the agent's places, a memex and a repository."""

    home: Path
    config: Path
    state: Path
    skills: Path
    approvals: Path
    policy: Path
    repo: Path

    @property
    def hidden(self) -> list[Path]:
        return [self.config, self.state]

    @property
    def protected(self) -> list[Path]:
        return [self.config, self.state, self.skills, self.approvals, self.policy]


@pytest.fixture
def fake_home(tmp_path_factory: pytest.TempPathFactory,
              monkeypatch: pytest.MonkeyPatch) -> Home:
    # A short path, as a person's home is: a socket in it (~/.emacs.d/server/server)
    # must fit in AF_UNIX's 108 bytes however long the user's name and the worker's
    # temporary directory are.
    home = Path(tempfile.mkdtemp(prefix="h", dir=tmp_path_factory.getbasetemp()))
    for rel, text in SECRETS.items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(text + "\n")
    (home / ".bashrc").write_text("# rc\n")
    (home / "dotfiles").mkdir()
    (home / "dotfiles" / "profile").write_text("# profile\n")
    (home / ".profile").symlink_to(home / "dotfiles" / "profile")
    config = home / ".config" / "passepartout"
    (config / "policy.toml").write_text("# rules\n")
    skills = home / ".local" / "share" / "passepartout" / "skills"
    skills.mkdir(parents=True)
    (skills / "mine.py").write_text("# skill\n")
    approvals = home / "memex" / "system" / "approvals.org"
    approvals.parent.mkdir(parents=True)
    approvals.write_text("* Grants\n")
    repo = home / "proj"
    (repo / ".git" / "hooks").mkdir(parents=True)
    (repo / ".git" / "config").write_text("[core]\n")
    (repo / "notes.txt").write_text("notes\n")
    bare = home / "proj" / "vendor"  # a repository whose .git lost its hooks directory
    (bare / ".git").mkdir(parents=True)
    (bare / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    # start-up files beyond the usual rc files, one only a pattern (~/.bash*) names
    for rel in (".bash_aliases", ".xsession", ".bashrc.d/x.sh", ".bash_custom"):
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text("# start-up\n")
    # a submodule's and a worktree's git directories, and a bare repository with
    # neither hooks nor config (git takes HEAD, objects and refs for a repository)
    sub = repo / ".git" / "modules" / "libs" / "sub"
    (sub / "hooks").mkdir(parents=True)
    (sub / "HEAD").write_text("ref: refs/heads/main\n")
    (sub / "config").write_text("[core]\n")
    tree = repo / ".git" / "worktrees" / "wip"
    tree.mkdir(parents=True)
    (tree / "HEAD").write_text("ref: refs/heads/wip\n")
    (tree / "commondir").write_text("../..\n")
    (tree / "config.worktree").write_text("[core]\n")
    mirror = repo / "mirror.git"
    for name in ("objects", "refs"):
        (mirror / name).mkdir(parents=True)
    (mirror / "HEAD").write_text("ref: refs/heads/main\n")
    monkeypatch.setenv("HOME", str(home))
    return Home(
        home, config, home / ".local/state/passepartout", skills, approvals,
        config / "policy.toml", repo,
    )


def run(cmd: str, ws: Path, places: Home | None = None, **kw: object) -> RunResult:
    hidden = places.hidden if places else []
    protected = places.protected if places else []
    return run_sandboxed(cmd, ws, timeout=20, hidden=hidden, protected=protected, **kw)  # type: ignore[arg-type]


@pytest.fixture(params=["project", "home"])
def workspace(request: pytest.FixtureRequest, fake_home: Home) -> Path:
    return fake_home.repo if request.param == "project" else fake_home.home


# -- root's capabilities --------------------------------------------------------------


def test_no_capability_inside_for_any_user(tmp_path: Path) -> None:
    result = run("grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' /proc/self/status", tmp_path)
    caps = dict(line.split(":\t") for line in result.stdout.splitlines())
    assert len(caps) == 5, result.stderr
    assert {int(v, 16) for v in caps.values()} == {0}


def test_root_cannot_remount_or_write_outside(tmp_path: Path) -> None:
    outside = Path(tempfile.mkdtemp(prefix="pp-escape-", dir="/var/tmp"))
    try:
        result = run(
            "mount -o remount,rw / && echo REMOUNTED;"
            f" echo pwned > {outside}/x && echo WROTE;"
            " mount -t tmpfs none /mnt && echo MOUNTED;"
            " cat /proc/sys/kernel/core_pattern > /proc/sys/kernel/core_pattern && echo SYSCTL;"
            " echo x > /sys/kernel/uevent_helper && echo SYSFS; true",
            tmp_path,
        )
        assert result.stdout == "", result.stdout
        assert not (outside / "x").exists()
    finally:
        shutil.rmtree(outside)


def test_no_new_user_namespace_inside(tmp_path: Path) -> None:
    if not support(shutil.which("bwrap") or "bwrap").no_nested_userns:
        pytest.skip("this bubblewrap cannot forbid nested user namespaces (before 0.8)")
    result = run("unshare -Ur id -u && echo NESTED; true", tmp_path)
    assert "NESTED" not in result.stdout


@pytest.mark.skipif(platform.machine() not in ARCHES, reason="no seccomp filter for this arch")
def test_kernel_keyrings_and_bpf_are_refused(tmp_path: Path) -> None:
    calls = ARCHES[platform.machine()].refused
    probe = (
        "import ctypes; l = ctypes.CDLL(None, use_errno=True)\n"
        "for name, nr in {calls}:\n"
        "    r = l.syscall(nr, 0, -3, 0, 0, 0); print(name, r, ctypes.get_errno())\n"
        "print('getpid', l.syscall({getpid}), 0)"
    )
    getpid = 39 if platform.machine() == "x86_64" else 172
    with tempfile.TemporaryDirectory() as scratch:  # control: the host answers
        outside = subprocess.run(
            ["python3", "-c", probe.format(calls=[("keyctl", calls["keyctl"])], getpid=getpid)],
            capture_output=True, text=True, cwd=scratch, check=True,
        )
    assert not outside.stdout.startswith("keyctl -1 ")
    script = probe.format(calls=sorted(calls.items()), getpid=getpid)
    result = run(f"python3 -c {shlex.quote(script)}", tmp_path)
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert set(lines) == {*calls, "getpid"}, result.stderr
    assert all(lines[name] == f"-1 {errno.EPERM}" for name in calls), lines
    assert int(lines["getpid"].split()[0]) > 0


# -- host Unix sockets ----------------------------------------------------------------


def _listen(path: Path) -> socket.socket:
    path.parent.mkdir(parents=True, exist_ok=True)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    sock.listen(4)
    sock.setblocking(False)
    return sock


def _accepted(sock: socket.socket) -> bool:
    try:
        sock.accept()[0].close()
    except BlockingIOError:
        return False
    return True


CONNECT = (
    "for s in {paths}; do python3 -c 'import socket,sys; "
    "c=socket.socket(socket.AF_UNIX); c.settimeout(2); c.connect(sys.argv[1]); "
    "print(\"CONNECTED\", sys.argv[1])' \"$s\" 2>/dev/null; "
    "[ -S \"$s\" ] && echo \"VISIBLE $s\"; done; true"
)


@pytest.fixture
def host_sockets(
    fake_home: Home, monkeypatch: pytest.MonkeyPatch
) -> Iterator[list[tuple[Path, socket.socket]]]:
    """Emacs-server-like listeners where the person's would be, and a few other places."""
    uid = os.geteuid()
    runtime = Path(tempfile.mkdtemp(prefix="pp-xdg-", dir="/var/tmp"))  # not under /tmp
    odd = Path(tempfile.mkdtemp(prefix="pp-sock-", dir="/var/tmp"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    paths = [
        runtime / "emacs" / "server",  # Emacs 27+: $XDG_RUNTIME_DIR/emacs/server
        Path(f"/tmp/emacs{uid}-pp-{os.getpid()}/server"),  # older Emacs: /tmp/emacs$UID
        odd / "server",  # a socket directory of its own (server-socket-dir)
        fake_home.home / ".emacs.d" / "server" / "server",  # in the home directory
        fake_home.repo / "tool.sock",  # in the workspace itself
    ]
    run_dir = Path(f"/run/pp-test-{os.getpid()}")
    if ROOT:
        paths.append(run_dir / "emacs" / "server")
    listeners: list[tuple[Path, socket.socket]] = []
    try:  # what was made is taken down even when a later listener cannot be made
        for path in paths:
            listeners.append((path, _listen(path)))
        yield listeners
    finally:
        for path, sock in listeners:
            sock.close()
            path.unlink(missing_ok=True)
        for top in (runtime, odd, run_dir, paths[1].parent):
            shutil.rmtree(top, ignore_errors=True)


@pytest.mark.parametrize("network", [False, True])
def test_host_unix_sockets_are_unreachable(
    workspace: Path,
    fake_home: Home,
    host_sockets: list[tuple[Path, socket.socket]],
    network: bool,
) -> None:
    paths = " ".join(f"'{p}'" for p, _ in host_sockets)
    # Control: from outside the sandbox every listener answers.
    with socket.socket(socket.AF_UNIX) as probe:
        probe.connect(str(host_sockets[0][0]))
    assert _accepted(host_sockets[0][1])
    result = run(CONNECT.format(paths=paths), workspace, fake_home, allow_network=network)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "", result.stdout
    assert not any(_accepted(sock) for _, sock in host_sockets)


def test_host_socket_directories_are_empty(tmp_path: Path) -> None:
    result = run("ls -A /run /var/run/; find /run /var/run/ /tmp -type s", tmp_path)
    assert result.stdout.split() == ["/run:", "/var/run/:"], result.stdout


@pytest.mark.parametrize("network", [False, True])
def test_abstract_sockets_are_unreachable(tmp_path: Path, network: bool) -> None:
    if network and landlock_abi() < SCOPE_ABI:
        pytest.skip("this kernel cannot scope abstract sockets (Landlock ABI 6, Linux 6.12+)")
    name = f"\0passepartout-test-{os.getpid()}"
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(name)
        listener.listen(1)
        listener.setblocking(False)
        with socket.socket(socket.AF_UNIX) as probe:  # control: reachable from outside
            probe.connect(name)
        assert _accepted(listener)
        cmd = (
            "python3 -c 'import socket; c=socket.socket(socket.AF_UNIX); "
            f"c.connect(\"\\0{name[1:]}\"); print(\"CONNECTED\")'"
        )
        result = run(cmd, tmp_path, allow_network=network)
        assert result.exit_code != 0 and "CONNECTED" not in result.stdout
        assert not _accepted(listener)


# -- the workspace re-exposing what is masked -------------------------------------------


def test_no_secret_is_readable(workspace: Path, fake_home: Home) -> None:
    home = fake_home.home
    cmd = "; ".join(f"cat {home / rel}" for rel in SECRETS) + "; ls -A ~/.ssh ~/.aws; true"
    result = run(cmd, workspace, fake_home)
    for text in SECRETS.values():
        assert text not in result.stdout
    assert "id_rsa" not in result.stdout and "credentials" not in result.stdout


def test_secret_files_do_not_come_back_through_another_path(
    workspace: Path, fake_home: Home
) -> None:
    home = fake_home.home
    result = run(
        f"cat {home}/./.ssh/id_rsa {home}/proj/../.aws/credentials; "
        f"find {home} -name id_rsa -o -name seal.key; grep -r AGENT {home} 2>/dev/null; true",
        workspace,
        fake_home,
    )
    assert "PRIVATE" not in result.stdout and "SECRET" not in result.stdout
    assert "sk-AGENT" not in result.stdout and "seal.key" not in result.stdout


# -- writes to protected places from inside ---------------------------------------------

WRITES = {
    "rc file": "echo evil >> ~/.bashrc",
    "rc file replaced": "rm -f ~/.bashrc; echo evil > ~/.bashrc",
    "rc file renamed away": "mv ~/.bashrc ~/old-rc; echo evil > ~/.bashrc",
    "missing rc file": "echo evil > ~/.bash_profile",
    "symlinked rc file": "echo evil >> ~/.profile",
    "symlinked rc file replaced": "rm -f ~/.profile; echo evil > ~/.profile",
    "authorized_keys": "mkdir -p ~/.ssh; echo evil >> ~/.ssh/authorized_keys",
    "missing credential file": "echo '[pypi]' > ~/.pypirc",
    "new dotfile in home": "echo evil > ~/.pam_environment",
    "config dir": "echo evil > ~/.config/autostart.desktop",
    "agent config": "echo evil >> ~/.config/passepartout/.env",
    "policy": "echo 'allow = true' >> ~/.config/passepartout/policy.toml",
    "skills": "echo evil > ~/.local/share/passepartout/skills/evil.py",
    "approvals": "echo '* APPROVED evil' >> ~/memex/system/approvals.org",
    "approvals replaced": "rm -rf ~/memex/system; mkdir -p ~/memex/system; "
    "echo evil > ~/memex/system/approvals.org",
    "state": "echo evil > ~/.local/state/passepartout/seal.key",
    "git hook": "echo evil > ~/proj/.git/hooks/pre-commit; chmod +x ~/proj/.git/hooks/pre-commit",
    "git hooks dir replaced": "rm -rf ~/proj/.git/hooks; mkdir ~/proj/.git/hooks; "
    "echo evil > ~/proj/.git/hooks/post-checkout",
    "git config": "echo '[core] fsmonitor = evil' >> ~/proj/.git/config",
    "git config replaced": "mv ~/proj/.git/config ~/proj/.git/c; echo evil > ~/proj/.git/config",
    "missing git hooks": "mkdir -p ~/proj/vendor/.git/hooks; echo x > ~/proj/vendor/.git/hooks/x",
    "missing git config": "echo evil > ~/proj/vendor/.git/config",
    "bash_aliases": "echo evil >> ~/.bash_aliases",
    "xsession": "echo evil >> ~/.xsession",
    "bashrc.d": "echo evil >> ~/.bashrc.d/x.sh; echo evil > ~/.bashrc.d/y.sh",
    "start-up file by pattern": "echo evil >> ~/.bash_custom",
    "submodule hook": "echo evil > ~/proj/.git/modules/libs/sub/hooks/post-checkout",
    "submodule config": "echo '[core] fsmonitor = evil' >> ~/proj/.git/modules/libs/sub/config",
    "worktree config": "echo evil >> ~/proj/.git/worktrees/wip/config.worktree",
    "bare repository hook": "mkdir -p ~/proj/mirror.git/hooks; "
    "echo evil > ~/proj/mirror.git/hooks/post-receive",
    "bare repository config": "echo evil > ~/proj/mirror.git/config",
    # Moving an ancestor away would carry the masks with it.
    "git dir moved away": "mv ~/proj/.git ~/proj/.git-old; mkdir -p ~/proj/.git/hooks; "
    "echo evil > ~/proj/.git/config",
    "repository moved away": "mv ~/proj ~/proj-old; mkdir -p ~/proj/.git; "
    "echo evil > ~/proj/.git/config",
    "approvals dir moved away": "mv ~/memex/system ~/memex/old; mkdir ~/memex/system; "
    "echo evil > ~/memex/system/approvals.org",
    "memex moved away": "mv ~/memex ~/memex-old; mkdir -p ~/memex/system; "
    "echo evil > ~/memex/system/approvals.org",
    "skills moved away": "mv ~/.local ~/.local-old; mkdir -p ~/.local/share/passepartout/skills;"
    " echo evil > ~/.local/share/passepartout/skills/evil.py",
}


def _snapshot(home: Path) -> dict[str, str]:
    files = {}
    for path in sorted(home.rglob("*")):
        if path.is_symlink():
            files[str(path)] = "-> " + os.readlink(path)
        elif path.is_file():
            files[str(path)] = path.read_text(errors="replace")
        elif path.is_dir():
            files[str(path)] = "/"
    return files


@pytest.mark.parametrize("name", sorted(WRITES))
def test_protected_places_cannot_be_written(workspace: Path, fake_home: Home, name: str) -> None:
    # Planning the mounts makes a git directory's missing hooks, info or config empty
    # (the same to git), so that they can be mounted read-only.
    build_argv("bwrap", "true", workspace, timeout=1, allow_network=False,
               hidden=fake_home.hidden, protected=fake_home.protected)
    assert (fake_home.repo / "vendor" / ".git" / "config").read_text() == ""
    before = _snapshot(fake_home.home)
    result = run(WRITES[name], workspace, fake_home)
    after = _snapshot(fake_home.home)
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    assert not changed, f"{name}: {sorted(changed)}\n{result.stderr}"
    assert "evil" not in "".join(after.values())


def test_ordinary_workspace_files_stay_writable(workspace: Path, fake_home: Home) -> None:
    repo = fake_home.repo
    result = run(
        f"cd {repo} && echo more >> notes.txt && mkdir -p src/deep && echo code > src/deep/a.py"
        " && mv src/deep/a.py src/deep/b.py && echo new > made.txt && rm made.txt"
        " && echo kept > kept.txt",
        workspace,
        fake_home,
    )
    assert result.exit_code == 0, result.stderr
    assert (repo / "notes.txt").read_text() == "notes\nmore\n"
    assert (repo / "src" / "deep" / "b.py").read_text() == "code\n"
    assert (repo / "kept.txt").read_text() == "kept\n"
    assert not (repo / "made.txt").exists()


def test_git_still_commits_inside_a_protected_repository(fake_home: Home) -> None:
    repo = fake_home.home / "real"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.txt").write_text("a\n")
    git = "git -c user.name=t -c user.email=t@t"
    result = run(f"{git} add a.txt && {git} commit -qm one && git log --oneline", repo, fake_home)
    assert result.exit_code == 0, result.stderr
    assert "one" in result.stdout


def test_too_large_a_workspace_is_read_only_not_unprotected(
    fake_home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox_find, "MAX_DIRS", 3)
    result = run(
        "cat proj/notes.txt; echo evil > proj/.git/hooks/pre-commit; echo x > proj/new.txt",
        fake_home.home,
        fake_home,
    )
    assert result.stdout == "notes\n"
    assert "Read-only file system" in result.stderr
    assert not (fake_home.repo / ".git" / "hooks" / "pre-commit").exists()
    assert not (fake_home.repo / "new.txt").exists()


def test_the_shell_tool_passes_the_agents_places(fake_home: Home) -> None:
    # The agent's places where no default list knows them: only the caller names them.
    state, skills = fake_home.home / "agent-state", fake_home.home / "my-skills"
    state.mkdir()
    (state / "seal.key").write_text("CUSTOM-SEAL\n")
    skills.mkdir()
    (skills / "mine.py").write_text("# skill\n")
    cmd = (
        "python3 -c \"print(open('agent-state/seal.key').read())\"; "
        "python3 -c \"open('my-skills/mine.py', 'a').write('evil')\"; echo done"
    )
    bare = execute_shell(
        cmd, policy=ShellPolicy(), workspace=fake_home.home, approve=lambda request: True
    )
    assert bare.result is not None and "CUSTOM-SEAL" in bare.result.stdout  # control
    (skills / "mine.py").write_text("# skill\n")
    outcome = execute_shell(
        cmd,
        policy=ShellPolicy(),
        workspace=fake_home.home,
        approve=lambda request: True,
        hidden=[state],
        protected=[skills],
    )
    assert outcome.status == "ran" and outcome.result is not None, outcome.message
    assert outcome.result.stdout.endswith("done\n")
    assert "CUSTOM-SEAL" not in outcome.result.stdout
    assert (skills / "mine.py").read_text() == "# skill\n"


def test_workspace_inside_a_hidden_place_is_refused(fake_home: Home) -> None:
    with pytest.raises(ValueError, match="inside the hidden place"):
        run("touch ran", fake_home.home / ".ssh", fake_home)
    assert not (fake_home.home / ".ssh" / "ran").exists()


def test_root_directory_as_workspace_is_refused() -> None:
    with pytest.raises(ValueError, match="root directory"):
        run_sandboxed("true", Path("/"), timeout=10)
