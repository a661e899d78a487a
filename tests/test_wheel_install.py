"""The wheel is the product: built from the repository and installed into a fresh venv
outside the checkout, it runs every command, with every shipped skill.

The venv is made with ``python -m venv --without-pip``; a ``.pth`` line puts the project
venv's site-packages after its own, so the dependencies are found without a download
(no network in the tests) while ``passepartout`` itself can only come from the wheel:
a plain path line in a ``.pth`` file does not run that directory's own ``.pth`` files,
so the project's editable install is not seen.  The wheel is built from a copy of the
repository's files, offline (``--no-build-isolation``, the dev extra's setuptools), and
every command runs from a scratch directory, without PYTHONPATH.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fakellm import FakeLLM
from wire_client import ROOT

from passepartout.cli import COMMANDS
from passepartout.engine.shipped_skills import SHIPPED
from passepartout.llm.models import PROVIDER_DEFAULTS


@dataclass
class Installed:
    venv: Path
    place: Path  # the scratch directory every command runs from

    @property
    def command(self) -> Path:
        return self.venv / "bin" / "passepartout"

    def env(self, **extra: str) -> dict[str, str]:
        keep = {k: v for k, v in os.environ.items()
                if k not in {var for var, _ in PROVIDER_DEFAULTS}
                and not k.startswith(("PASSEPARTOUT", "PYTHON", "OPENAI"))}
        return {**keep,
                "HOME": str(self.place / "person"),
                "PASSEPARTOUT_HOME": str(self.place / "state"),
                "PASSEPARTOUT_CONFIG_DIR": str(self.place / "config"),
                "MEMEX_DIR": str(self.place / "memex"),
                "XDG_RUNTIME_DIR": str(self.place / "run"),
                "PASSEPARTOUT_EMBEDDINGS": "off", "PASSEPARTOUT_MEMORY_IMPORT": "off",
                **extra}

    def run(self, *args: str, stdin: str = "", timeout: float = 120.0,
            **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.command), *args], cwd=self.place,
                              env=self.env(**extra), input=stdin, capture_output=True,
                              text=True, timeout=timeout)


def _repository_copy(dest: Path) -> Path:
    """The repository's files (tracked or not ignored), copied to ``dest``."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], cwd=ROOT, capture_output=True,
                            check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    tmp = tmp_path_factory.mktemp("wheel")
    source = _repository_copy(tmp / "source")
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--no-index", "-q", "-w", str(tmp / "dist"), str(source)],
        capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp / "dist").glob("passepartout-*.whl")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; "
                              "print(sysconfig.get_path('purelib'))"],
                             capture_output=True, text=True, check=True).stdout.strip()
    Path(purelib, "project-deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    place = tmp / "elsewhere"
    for name in ("person", "state", "config", "memex", "run"):
        (place / name).mkdir(parents=True)
    os.chmod(place / "run", 0o700)
    env = Installed(venv, place).env()
    pip = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps",
                          "--no-index", str(wheel)],
                         cwd=place, env=env, capture_output=True, text=True, timeout=300)
    assert pip.returncode == 0, pip.stderr
    yield Installed(venv, place)
    Installed(venv, place).run("stop", timeout=60)


def test_the_installed_package_is_the_wheel_and_its_requirements_are_met(
    installed: Installed,
) -> None:
    probe = subprocess.run(
        [str(installed.venv / "bin" / "python"), "-c",
         "import importlib.metadata as m, passepartout, re\n"
         "from passepartout.engine.pinned import SHIPPED_SKILLS_DIR\n"
         "print(passepartout.__file__)\nprint(SHIPPED_SKILLS_DIR)\n"
         "for req in m.requires('passepartout'):\n"
         "    if 'extra ==' not in req:\n"
         "        m.version(re.split(r'[<>=!~\\[; ]', req)[0])\n"],
        cwd=installed.place, env=installed.env(), capture_output=True, text=True)
    assert probe.returncode == 0, probe.stderr
    package, skills = probe.stdout.split()
    assert Path(package).is_relative_to(installed.venv)
    assert Path(skills).is_relative_to(installed.venv)
    assert sorted(p.name for p in Path(skills).iterdir() if p.suffix in (".py", ".org")) \
        == sorted(SHIPPED)


def test_every_command_starts(installed: Installed) -> None:
    for command in COMMANDS:
        result = installed.run(command, "--help")
        assert result.returncode == 0, (command, result.stderr)
        assert f"passepartout {command}" in result.stdout


def test_doctor_finds_every_shipped_skill(installed: Installed, fake_llm: FakeLLM) -> None:
    result = installed.run("doctor", OPENAI_API_KEY="sk-test",
                           OPENAI_BASE_URL=fake_llm.base_url,
                           PASSEPARTOUT_MODEL="openai/gpt-4o-mini")
    names = {Path(name).stem for name in SHIPPED}
    for name in names:
        assert f"[ok  ] skill {name}: ready" in result.stdout, result.stdout
    assert "not found" not in result.stdout


def test_a_chat_turn_in_process_and_through_the_daemon(
    installed: Installed, fake_llm: FakeLLM
) -> None:
    model = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": fake_llm.base_url,
             "PASSEPARTOUT_MODEL": "openai/gpt-4o-mini"}
    fake_llm.reply("Paris, from the wheel.")
    alone = installed.run("chat", "--standalone", stdin="The capital of France?\n", **model)
    assert alone.returncode == 0, alone.stderr
    assert "Paris, from the wheel." in alone.stdout
    fake_llm.reply("Lyon, through the daemon.")
    started = installed.run("daemon", "--detach", **model)
    assert started.returncode == 0, started.stderr
    through = installed.run("chat", stdin="A second city?\n", **model)
    assert through.returncode == 0, through.stderr
    assert "Lyon, through the daemon." in through.stdout
    stopped = installed.run("stop", **model)
    assert stopped.returncode == 0, stopped.stderr


def _tool_output(fake: FakeLLM) -> str:
    messages = fake.last_request.body["messages"]
    return "\n".join(str(m.get("content")) for m in messages if m.get("role") == "tool")


def _emacs_29() -> str | None:
    """An Emacs 29 or newer: PASSEPARTOUT_TEST_EMACS29, the one `make test` unpacks from
    Debian's backports into the venv, or the system's if it is new enough."""
    for candidate in (os.environ.get("PASSEPARTOUT_TEST_EMACS29"),
                      str(ROOT / ".venv" / "emacs-backports" / "emacs"), shutil.which("emacs")):
        if candidate and Path(candidate).is_file():
            newer = subprocess.run([candidate, "--batch", "--eval",
                                    "(kill-emacs (if (>= emacs-major-version 29) 0 1))"],
                                   capture_output=True, timeout=60)
            if newer.returncode == 0:
                return candidate
    return None


def _chat_from_a_fresh_emacs(installed: Installed, fake_llm: FakeLLM, tmp_path: Path,
                             emacs_binary: str, install: str, **source: str) -> None:
    """Install with the Elisp function ``install`` in a fresh ``user-emacs-directory``,
    then, in a new Emacs, open the chat from a project's file through the autoloads: the
    server is the wheel's ``passepartout`` on ``exec-path``, the turn's shell runs in
    that project."""
    installed.run("stop", timeout=60)  # a daemon of an earlier test knows another model
    project = installed.place / "person" / "garden"
    project.mkdir(parents=True, exist_ok=True)
    (project / "notes.txt").write_text("beds\n")
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    script = ROOT / "tests" / "emacs_package_install.el"
    env = installed.env(OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=fake_llm.base_url,
                        PASSEPARTOUT_MODEL="openai/gpt-4o-mini",
                        PATH=f"{installed.venv / 'bin'}:{os.environ['PATH']}",
                        PASSEPARTOUT_TEST_EMACS_DIR=str(tmp_path / "emacs.d"),
                        PASSEPARTOUT_TEST_PROJECT=str(project), **source)

    def emacs(function: str) -> str:
        result = subprocess.run([emacs_binary, "-Q", "--batch", "-l", str(script),
                                 "-f", function],
                                cwd=installed.place, env=env, capture_output=True,
                                text=True, timeout=240)
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout

    done = emacs(install)
    assert "installed: t" in done, done
    assert "Error" not in done.partition("compile log:")[2], done  # compiled cleanly
    fake_llm.tool_call("shell", {"cmd": "pwd; ls"})
    fake_llm.reply("We work in the garden.")
    out = emacs("passepartout-test-chat")
    assert "autoload: t" in out
    assert 'cli: ("passepartout" "daemon" "--detach")' in out, out  # on exec-path
    assert "ended: done" in out, out
    assert "We work in the garden." in out
    assert "header:  In ~/garden |" in out, out  # the header line names the workspace
    assert "header-line-format: (:eval (passepartout-chat--header-line))" in out
    tool = _tool_output(fake_llm)
    assert str(project) in tool and "notes.txt" in tool, tool
    status = installed.run("status")
    pid = re.search(r"pid\s+(\d+)", status.stdout)
    assert pid, status.stdout + status.stderr
    command = Path(f"/proc/{pid.group(1)}/cmdline").read_bytes().split(b"\0")[0].decode()
    assert Path(command).is_relative_to(installed.venv)  # the wheel's, not the checkout's
    installed.run("stop", timeout=60)


@pytest.mark.emacs
def test_a_fresh_emacs_installs_the_package_file_and_chats_through_the_executable(
    installed: Installed, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    """The package file the build makes, installed by ``package-install-file``."""
    made = subprocess.run(["emacs", "-Q", "--batch", "-l", "elisp/scripts/package-tar.el",
                           "-f", "passepartout-package-tar", str(tmp_path / "dist")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    package = made.stdout.strip().splitlines()[-1]
    _chat_from_a_fresh_emacs(installed, fake_llm, tmp_path, "emacs",
                             "passepartout-test-install", PASSEPARTOUT_TEST_PACKAGE=package)


@pytest.mark.emacs
@pytest.mark.skipif(_emacs_29() is None, reason="no Emacs 29 or newer: `make test` unpacks "
                    "Debian backports' Emacs into .venv/emacs-backports (see its output)")
def test_package_vc_install_from_the_repository_and_chat(
    installed: Installed, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    """The repository installed by ``package-vc-install`` (Emacs 29+), as a person
    would from its URL: only ``elisp/`` is compiled (``.elpaignore``), cleanly."""
    repository = _repository_copy(tmp_path / "repository")
    for step in (["init", "-q", "-b", "main"], ["add", "-A"],
                 ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "snapshot"]):
        subprocess.run(["git", *step], cwd=repository, check=True)
    emacs_binary = _emacs_29()
    assert emacs_binary is not None
    _chat_from_a_fresh_emacs(installed, fake_llm, tmp_path, emacs_binary,
                             "passepartout-test-vc-install",
                             PASSEPARTOUT_TEST_REPO=str(repository))
