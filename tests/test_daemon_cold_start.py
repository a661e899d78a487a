"""A cold start: "ready" means it can answer, and the start does no work the first
answer does not need.

- The first turn sent the moment ``daemon --detach`` returns is answered, not an error.
- A daemon given a ready pipe (as ``ensure_daemon`` gives the one it starts) writes
  "ready" on it once its info is written, and holds it no longer: no process it starts
  inherits it.
- A model call with tools does not import litellm's MCP gateway (ours are function
  tools), and the flag that says so never reaches the provider.
- The shell gate's parser (bashlex builds its tables when imported) loads on the first
  parse, not when the agent's modules are imported.
- The garbage collector is held during the start and frozen at its end; what was
  frozen is handed back to it later.
"""

from __future__ import annotations

import gc
import json
import os
import select
import subprocess
from pathlib import Path

import pytest
from agents import wait_for
from daemon_proc import Daemons
from fakellm import FakeLLM
from wire_client import PYTHON, ROOT

from passepartout import startup
from passepartout.faces.face import Face
from passepartout.protocol import Chunk, Done, TurnError
from passepartout.wire.start import READY_FD


def test_the_first_turn_sent_as_detach_returns_is_answered(daemons: Daemons,
                                                           fake_llm: FakeLLM) -> None:
    fake_llm.reply("Awake and answering.")
    try:
        detach = daemons.cli("daemon", "--detach", timeout=120)
        assert detach.returncode == 0, detach.stderr
        assert "started: pid" in detach.stdout
        face = Face.attach(daemons.home, environ=daemons.env)
        assert face is not None
        with face:
            seen = list(face.send("cold", "Are you up?").events(timeout=60))
        assert not [e for e in seen if isinstance(e, TurnError)], seen
        assert "".join(e.text for e in seen if isinstance(e, Chunk)) == "Awake and answering."
        assert isinstance(seen[-1], Done)
        log = (daemons.home / "passepartout.log").read_text()
        assert "s after its start" in log  # the start's length, in the log
    finally:
        daemons.cli("stop")


def _pipe_name(fd: int) -> str:
    return f"pipe:[{os.fstat(fd).st_ino}]"


def test_a_started_daemon_says_ready_on_its_pipe_and_lets_it_go(daemons: Daemons) -> None:
    read_end, write_end = os.pipe()
    proc = subprocess.Popen(
        [PYTHON, "-m", "passepartout", "daemon"], cwd=ROOT,
        env={**daemons.env, READY_FD: str(write_end)}, pass_fds=(write_end,),
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=(daemons.tmp / "daemon.stderr").open("wb"))
    os.close(write_end)
    try:
        readable, _, _ = select.select([read_end], [], [], 120)
        assert readable, "the daemon said nothing on its ready pipe"
        said = os.read(read_end, 64)
        assert said == b"ready\n", (said, (daemons.tmp / "daemon.stderr").read_text())
        # Ready: its info is there for any face to find.
        info = json.loads((daemons.rundir / "daemon.json").read_text())
        assert info["pid"] == proc.pid
        # The end of the pipe: nobody holds its write end any more, the daemon included
        # (so no process it started inherited it), while the daemon runs on.
        assert os.read(read_end, 64) == b""
        assert proc.poll() is None
        held = {os.readlink(f"/proc/{proc.pid}/fd/{fd}")
                for fd in os.listdir(f"/proc/{proc.pid}/fd")}
        assert _pipe_name(read_end) not in held
    finally:
        os.close(read_end)
        daemons.cli("stop")
        proc.wait(60)


CALL_WITH_TOOLS = """
import json, os, sys
sys.path.insert(0, "tests")
from fakellm import FakeLLM
from passepartout.llm.provider import Provider

TOOLS = [{"type": "function", "function": {"name": "shell", "description": "run",
          "parameters": {"type": "object", "properties": {}}}}]
with FakeLLM() as fake:
    fake.reply("done")
    os.environ["OPENAI_BASE_URL"] = fake.base_url
    result = Provider().complete(["openai/gpt-4o-mini"], [{"role": "user", "content": "hi"}],
                                 tools=TOOLS)
    print(json.dumps({
        "text": result.reply.text,
        "gateway": "litellm.responses.mcp.chat_completions_handler" in sys.modules,
        "sent": sorted(fake.last_request.body),
    }))
"""


def test_a_call_with_tools_does_not_import_litellms_mcp_gateway() -> None:
    # A process of its own: litellm's modules that other tests imported are not there.
    done = subprocess.run([PYTHON, "-c", CALL_WITH_TOOLS],
                          cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "OPENAI_API_KEY": "sk-test",
                               "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    said = json.loads(done.stdout.strip().splitlines()[-1])
    assert said["text"] == "done"
    assert said["gateway"] is False
    assert "tools" in said["sent"]
    assert not [key for key in said["sent"] if "mcp" in key], said["sent"]


def test_the_gateway_flag_is_passed_only_when_litellm_knows_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from litellm.litellm_core_utils import core_helpers

    from passepartout.llm import litellm_import

    assert litellm_import._known_call_options() == {"_skip_mcp_handler": True}
    # A litellm that would not strip it: never sent to a provider as a field of its own.
    monkeypatch.setattr(core_helpers, "filter_internal_params", lambda data, extra=None: data)
    assert litellm_import._known_call_options() == {}


def test_the_shell_parser_loads_on_the_first_parse() -> None:
    probe = ("import sys\n"
             "import passepartout.agent, passepartout.security.policy\n"
             "print('bashlex' in sys.modules)\n"
             "from passepartout.security.shell import analyze\n"
             "print(bool(analyze('ls -l | wc -l')))\n"
             "print('bashlex' in sys.modules)\n")
    done = subprocess.run([PYTHON, "-c", probe], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    before, _parsed, after = done.stdout.split()
    assert (before, after) == ("False", "True")


def test_the_start_holds_the_collector_then_freezes_and_hands_back(
        monkeypatch: pytest.MonkeyPatch) -> None:
    if not gc.isenabled():
        pytest.fail("the collector is off in the test process")
    monkeypatch.setattr(startup, "HAND_BACK_AFTER", 0.0)
    try:
        startup.hold_collector()
        assert not gc.isenabled()
        startup.release_collector()
        assert gc.isenabled()
        wait_for(lambda: gc.get_freeze_count() == 0, 30, "the frozen objects handed back")
        startup.release_collector()  # once only: nothing held, nothing to do
        assert gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()


def test_a_collector_switched_off_by_the_embedder_stays_off() -> None:
    gc.disable()
    try:
        startup.hold_collector()
        startup.release_collector()
        assert not gc.isenabled() and gc.get_freeze_count() == 0
    finally:
        gc.enable()


def test_the_timeline_names_each_phase_in_order() -> None:
    startup.mark("first phase")
    startup.mark("second phase")
    said = startup.report()
    assert said.index("first phase +") < said.index("second phase +")
    # Counted from the process's own start (this test process began before this test).
    assert startup.since_start() > 0


def test_only_a_pipe_given_by_the_starter_is_taken_as_the_ready_pipe(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from passepartout.cli.daemon import _ready_fd

    read_end, write_end = os.pipe()
    with (tmp_path / "file").open("w") as plain:
        try:
            for stray in ("1", "2", str(plain.fileno()), "not a number", "99999"):
                monkeypatch.setenv(READY_FD, stray)
                assert _ready_fd() is None, stray
                assert READY_FD not in os.environ  # never passed on to what it starts
            os.set_inheritable(write_end, True)
            monkeypatch.setenv(READY_FD, str(write_end))
            assert _ready_fd() == write_end
            assert not os.get_inheritable(write_end)
        finally:
            os.close(read_end)
            os.close(write_end)
