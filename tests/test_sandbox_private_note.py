"""A shell result says when the command used the sandbox's private directories, where
what it writes is gone once it ends."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from llm_agent import make_agent, make_config, provider_env, user_signal  # noqa: F401
from passepartout.security.sandbox.private import private_note, private_paths


def test_paths_in_the_private_directories_are_found() -> None:
    ws = "/home/me/notes"
    assert private_paths("echo hi > /tmp/out.txt", ws) == ["/tmp/out.txt"]
    assert private_paths("dd if=a of=/dev/shm/x; touch '/run/y'", ws) == ["/dev/shm/x", "/run/y"]
    assert private_paths("f=$(mktemp) && echo x > $f", ws) == ["/tmp (mktemp)"]
    assert private_paths("ls /etc ./tmp/x /tmpfoo; cat notes.org", ws) == []
    # A workspace under /tmp is the real one: nothing is lost there.
    assert private_paths("echo x > /tmp/ws/a.txt", "/tmp/ws") == []
    assert private_note("ls", ws) is None
    note = private_note("cp a /tmp/b", ws)
    assert note is not None and "/tmp/b" in note and ws in note


def test_the_shell_result_carries_the_note(provider_env: Any, tmp_path: Path) -> None:  # noqa: F811
    name = f"/tmp/pp-{uuid.uuid4().hex[:8]}.txt"
    fake = provider_env
    agent, rec = make_agent(make_config(tmp_path))
    try:
        fake.tool_call("shell", {"cmd": f"echo kept > {name}"}, call_id="c1")
        fake.reply("done")
        agent.loop.process(user_signal("write it"))
    finally:
        agent.shutdown()
    results = rec.of("tool-result")
    assert results, rec.events
    output = str(results[0])
    assert "exit code 0" in output
    assert f"This command used {name}" in output and "emptied when the command ends" in output
    assert not Path(name).exists()  # the person cannot find it: the note says why
