"""Protected places by rule, not by a list of names: the file tools refuse the hooks,
config and info of every git directory (a submodule's under ``.git/modules``, a
worktree's, a bare repository), a ``.git`` file, and shell and session start-up files
by pattern (``~/.bash_aliases``, ``~/.xsession``, ``~/.bashrc.d/``), in any home.  The
sandboxed shell keeps the same places read-only (``test_sandbox_escape.py::WRITES``)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from passepartout.security.files.paths import PathRules, denial

from passepartout.security.files import FileToolError, write_text

pytestmark = pytest.mark.attack


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    proj = home / "proj"
    proj.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    sub = proj / ".git" / "modules" / "libs" / "sub"
    (sub / "hooks").mkdir(parents=True)
    (sub / "HEAD").write_text("ref: refs/heads/main\n")
    subprocess.run(["git", "init", "-q", "--bare", str(home / "mirror.git")], check=True)
    bare = proj / "vendored"  # a bare repository git made with neither hooks nor config
    for name in ("objects", "refs"):
        (bare / name).mkdir(parents=True)
    (bare / "HEAD").write_text("ref: refs/heads/main\n")
    tree = proj / ".git" / "worktrees" / "wip"
    tree.mkdir(parents=True)
    (tree / "HEAD").write_text("ref: refs/heads/wip\n")
    (tree / "commondir").write_text("../..\n")
    monkeypatch.setenv("HOME", str(home))
    return home


def rules(home: Path) -> PathRules:
    return PathRules.build(workspace=home / "proj")


REFUSED = [
    (".git/modules/libs/sub/hooks/post-checkout", "hooks of the git directory"),
    (".git/modules/libs/sub/config", "config of the git directory"),
    (".git/modules/new/hooks/post-checkout", "hooks of the git directory"),
    (".git/worktrees/wip/config.worktree", "config.worktree of the git directory"),
    (".git/info/attributes", "info"),
    ("vendored/hooks/post-update", "hooks of the git directory"),
    ("vendored/config", "config of the git directory"),
    ("~/mirror.git/hooks/post-receive", "hooks of the git directory"),
    ("~/mirror.git/config", "config of the git directory"),
    ("other/.git", "point git at another git directory"),
    ("~/.bash_aliases", "start-up"),
    ("~/.xsession", "start-up"),
    ("~/.xsession-custom", "start-up"),
    ("~/.bashrc.d/x.sh", "start-up"),
    ("~/.zshrc.d/x.zsh", "start-up"),
    ("~/.pam_environment", "start-up"),
    ("~/.config/autostart/evil.desktop", ".config/autostart"),
    ("~/.config/fish/conf.d/evil.fish", ".config/fish"),
    ("~/.config/systemd/user/evil.service", ".config/systemd"),
    ("~/.config/environment.d/evil.conf", ".config/environment.d"),
    ("~/.local/share/systemd/user/evil.service", ".local/share/systemd"),
    ("/home/someone/.bashrc.d/x.sh", "start-up"),
    ("/home/someone/.config/autostart/x.desktop", ".config/autostart"),
]


@pytest.mark.parametrize("raw, says", REFUSED)
def test_write_file_refuses_protected_places_by_rule(home: Path, raw: str, says: str) -> None:
    before = sorted(str(p) for p in home.rglob("*"))
    with pytest.raises(FileToolError) as err:
        write_text(raw, "evil\n", rules(home))
    assert says in err.value.message
    assert sorted(str(p) for p in home.rglob("*")) == before


@pytest.mark.parametrize("raw", [
    "notes/config", "src/hooks/useThing.ts", "docs/info/index.md", "HEAD.txt",
    "vendored/README", "vendored/objects-list.txt",
])
def test_ordinary_files_named_like_git_parts_stay_writable(home: Path, raw: str) -> None:
    assert denial(raw, rules(home), writing=True)[1] is None
    write_text(raw, "fine\n", rules(home))
    assert (home / "proj" / raw).read_text() == "fine\n"


def test_the_agents_write_file_tool_refuses_them(tmp_path: Path) -> None:
    """The same rule through the agent's gates: the policy gate refuses the call."""
    from llm_agent import make_agent, make_config, user_signal

    from passepartout.loop.actions import Action

    agent, _ = make_agent(make_config(tmp_path))
    try:
        security = agent.services["security"]
        memex = tmp_path / "memex"
        subprocess.run(["git", "init", "-q", "--bare", str(memex / "backup.git")], check=True)
        for path in (memex / "backup.git" / "hooks" / "post-update",
                     memex / ".git" / "modules" / "m" / "hooks" / "post-checkout",
                     Path("~/.bash_aliases").expanduser(), Path("~/.bashrc.d/x").expanduser()):
            action = Action("tool", name="write-file", args={"path": str(path),
                                                             "content": "id\n"})
            verdict = security.policy_verdict(action, user_signal("go"))
            assert verdict.decision == "deny", (path, verdict)
            assert not path.exists()
    finally:
        agent.shutdown()
