"""One daemon per state directory, found from any environment, and "ready" only once it
can answer.

- A daemon started with XDG_RUNTIME_DIR set is found by clients whose environment has
  only HOME, PATH and USER (as MCP clients and most SDK-built clients pass): ``status``,
  ``daemon --detach``, a chat through ``Face.attach``, ``passepartout mcp`` and Emacs
  attach to it, and none starts a second daemon.
- Two starts at once from two environments end with one daemon.
- ``daemon --detach`` returns, and ``status`` says ready, only once the model layer has
  loaded (its priming is held at a gate here: the check waits on conditions, not time).
- The first MCP search on a cold daemon, while the memex import is still running, waits
  for it and returns the notes.

The gates are a ``sitecustomize`` put ahead on the daemon's PYTHONPATH (as
daemon_proc's sleep shim is): it holds litellm's priming, or the memex import, until a
file exists, and marks when it got there.
"""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

import pytest
from agents import wait_for
from daemon_proc import Daemons, daemons_under
from fakellm import FakeLLM
from test_daemon_emacs import EMACS, emacs
from test_mcp_server import call
from wire_client import ROOT

from passepartout.config import Config
from passepartout.faces.face import Face
from passepartout.protocol import Chunk, Done
from passepartout.wire.start import StartError, ensure_daemon

SHIM = '''
import os
import select
from pathlib import Path


def _wait(gate):
    Path(gate + ".reached").touch()
    while not os.path.exists(gate):
        select.select([], [], [], 0.05)


_prime_gate = os.environ.get("TEST_PRIME_GATE")
if _prime_gate:
    import passepartout.llm.provider as _provider

    _prime = _provider._prime

    def _held_prime(lit):
        _wait(_prime_gate)
        _prime(lit)

    _provider._prime = _held_prime

_import_gate = os.environ.get("TEST_IMPORT_GATE")
if _import_gate:
    import passepartout.mcp.memex as _memex
    import passepartout.memory.store as _store

    _import = _store.MemoryStore.import_memex
    _search = _memex.MemexFace.search

    def _held_import(self, directory):
        _wait(_import_gate)
        return _import(self, directory)

    def _marked_search(self, query, limit):
        Path(_import_gate + ".searched").touch()
        return _search(self, query, limit)

    _store.MemoryStore.import_memex = _held_import
    _memex.MemexFace.search = _marked_search
'''


@pytest.fixture
def daemons(daemons: Daemons) -> Daemons:
    # The state directory is the default one for HOME, so that an environment with
    # nothing but HOME names it too.
    daemons.env["PASSEPARTOUT_HOME"] = str(daemons.tmp / ".local" / "state" / "passepartout")
    return daemons


def minimal(daemons: Daemons, **extra: str) -> dict[str, str]:
    """What an MCP client passes: HOME, PATH, USER (and this checkout's code)."""
    return {"HOME": daemons.env["HOME"], "PATH": os.environ["PATH"],
            "USER": os.environ.get("USER", "person"), "PYTHONPATH": str(ROOT), **extra}


def gated(daemons: Daemons, **gates: Path) -> dict[str, str]:
    shim = daemons.tmp / "gate-shim"
    shim.mkdir(exist_ok=True)
    (shim / "sitecustomize.py").write_text(SHIM)
    return {"PYTHONPATH": f"{shim}:{daemons.env['PYTHONPATH']}",
            **{name: str(path) for name, path in gates.items()}}


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-m", "passepartout", *args],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_clients_with_a_minimal_environment_find_the_daemon_and_start_no_second(
        daemons: Daemons, fake_llm: FakeLLM) -> None:
    (daemons.memex / "notes.org").write_text("* Kumquat jam recipe\nBoil the kumquat.\n")
    config = Path(daemons.env["HOME"]) / ".config" / "passepartout"
    config.mkdir(parents=True)
    # The person's settings, where a client with no PASSEPARTOUT_* variable reads them.
    (config / ".env").write_text(
        f"MEMEX_DIR={daemons.memex}\nPASSEPARTOUT_EMBEDDINGS=off\n"
        f"OPENAI_API_KEY=sk-test\nOPENAI_BASE_URL={fake_llm.base_url}\n")
    fake_llm.reply("Found you.")
    proc = daemons.start()
    bare = minimal(daemons)
    status = cli(bare, "status")
    assert status.returncode == 0, status.stdout + status.stderr
    assert f"pid        {proc.pid}" in status.stdout
    assert f"socket     {daemons.rundir}/daemon.sock" in status.stdout
    again = cli(bare, "daemon", "--detach")
    assert again.returncode == 0, again.stderr
    assert f"already runs: pid {proc.pid}" in again.stdout

    face = Face.attach(daemons.home, environ=bare)
    assert face is not None
    with face:
        assert face.client.peer_pid == proc.pid
        seen = list(face.send("chat-min", "Are you there?").events(timeout=60))
    assert "".join(e.text for e in seen if isinstance(e, Chunk)) == "Found you."
    assert isinstance(seen[-1], Done)

    [(error, text)] = call(Daemons(daemons.tmp, bare), ("search", {"query": "kumquat"}))
    assert not error and "Kumquat jam recipe" in text, text

    if EMACS is not None:
        release = daemons.tmp / "release"
        release.touch()
        ert = subprocess.run(
            emacs("-l", "passepartout-daemon-client.el", env=bare), cwd=ROOT,
            env={**bare, "CLIENT_NAME": "min", "CLIENT_MODEL": "openai/gpt-4o",
                 "CLIENT_PROMPT": "Hello", "CLIENT_ANSWER": "no",
                 "CLIENT_RELEASE": str(release),
                 "CLIENT_DONE": str(daemons.tmp / "min.replied")},
            capture_output=True, text=True, timeout=120)
        assert f"DAEMON {proc.pid}" in ert.stdout.splitlines(), ert.stdout + ert.stderr[-3000:]

    # No second daemon was started in the minimal environment's own place.
    assert not (daemons.home / "run" / "daemon.json").exists()
    assert proc.poll() is None
    stopped = cli(bare, "stop")
    assert stopped.returncode == 0 and f"pid {proc.pid}" in stopped.stdout, stopped.stderr
    assert proc.wait(30) == 0


def test_two_starts_from_two_environments_end_with_one_daemon(daemons: Daemons) -> None:
    envs = [daemons.env, minimal(daemons)]
    done: list[subprocess.CompletedProcess[str]] = []
    threads = [threading.Thread(target=lambda e=env: done.append(cli(e, "daemon", "--detach")))
               for env in envs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(180)
    try:
        assert len(done) == 2 and all(r.returncode == 0 for r in done), \
            [(r.stdout, r.stderr) for r in done]
        pids = {r.stdout.split("pid ", 1)[1].split(",", 1)[0] for r in done}
        assert len(pids) == 1, [r.stdout for r in done]
        held = subprocess.run(["pgrep", "-f", "passepartout daemon$"], capture_output=True,
                              text=True)
        ours = [p for p in held.stdout.split()
                if f"PASSEPARTOUT_HOME={daemons.home}".encode()
                in Path(f"/proc/{p}/environ").read_bytes()
                or f"HOME={daemons.env['HOME']}\0".encode()
                in Path(f"/proc/{p}/environ").read_bytes()]
        assert ours == list(pids), held.stdout
    finally:
        for env in envs:
            cli(env, "stop")


def test_detach_and_status_say_ready_only_once_the_model_layer_is_up(
        daemons: Daemons) -> None:
    gate = daemons.tmp / "prime-gate"
    env = {**daemons.env, **gated(daemons, TEST_PRIME_GATE=gate)}
    detach = subprocess.Popen([str(ROOT / ".venv" / "bin" / "python"), "-m", "passepartout",
                               "daemon", "--detach"], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: Path(f"{gate}.reached").exists(), 90, "litellm's priming")
        # The agent has booted and litellm is held before its priming: not ready yet.
        assert not (daemons.rundir / "daemon.json").exists()
        status = daemons.cli("status")
        assert status.returncode == 3 and "still starting" in status.stdout, status.stdout
        assert detach.poll() is None
        gate.touch()
        out, err = detach.communicate(timeout=90)
        assert detach.returncode == 0, err
        assert "started: pid" in out
        shown = daemons.cli("status")
        assert shown.returncode == 0 and "still starting" not in shown.stdout, shown.stdout
    finally:
        gate.touch()
        if detach.poll() is None:
            detach.kill()
        daemons.cli("stop")


def test_a_daemon_still_starting_is_left_running_and_waited_for_again(
        daemons: Daemons) -> None:
    """A face's wait for the daemon it started ends only when the daemon is ready or
    has exited, or after a long while (minutes: its boot is slow on a busy machine);
    then the daemon is left running, and said to be still starting."""
    gate = daemons.tmp / "prime-gate"
    env = {**daemons.env, **gated(daemons, TEST_PRIME_GATE=gate)}
    config = Config.from_mapping(env, config_dir=Path(env["PASSEPARTOUT_CONFIG_DIR"]))
    try:
        with pytest.raises(StartError, match="still starting after 1 s; it was left running"):
            ensure_daemon(config, timeout=1.0, environ=env)
        wait_for(lambda: Path(f"{gate}.reached").exists(), 90, "litellm's priming")
        status = daemons.cli("status")
        assert status.returncode == 3 and "still starting" in status.stdout, status.stdout
        gate.touch()
        running = ensure_daemon(config, environ=env)
        assert not running.started  # the one started first, now ready
        assert daemons_under(str(daemons.tmp)) == [running.info["pid"]]
    finally:
        gate.touch()
        daemons.cli("stop")


def test_the_first_mcp_search_on_a_cold_daemon_waits_for_memory(daemons: Daemons) -> None:
    (daemons.memex / "notes.org").write_text("* Kumquat jam recipe\nBoil the kumquat.\n")
    gate = daemons.tmp / "import-gate"
    daemons.start(**gated(daemons, TEST_IMPORT_GATE=gate))
    wait_for(lambda: Path(f"{gate}.reached").exists(), 60, "the memex import")
    found: list[list[tuple[bool, str]]] = []
    search = threading.Thread(
        target=lambda: found.append(call(daemons, ("search", {"query": "kumquat"}))))
    search.start()
    try:
        wait_for(lambda: Path(f"{gate}.searched").exists(), 60, "the search to arrive")
    finally:
        gate.touch()
        search.join(90)
    [[(error, text)]] = found
    assert not error and "Kumquat jam recipe" in text, text
