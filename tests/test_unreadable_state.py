"""State files that went bad: an SQLite file of the home that is no database any more
(sessions, ledger, memory) is set aside and a new one started, so the agent still
answers; the doctor names what was set aside; a failed memory makes the health
degraded; and when no skill can answer a chat, the person waiting is told why rather
than getting an empty turn."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from fakellm import FakeLLM
from llm_agent import agent_memory, make_agent, make_config, user_signal

from passepartout.cli.doctor import check_dirs
from passepartout.sqlitefile import UNREADABLE, open_database, set_aside_files

pytest_plugins = ["llm_agent"]

GARBAGE = bytes(range(256)) * 20


def _schema(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE IF NOT EXISTS t (x)")


def test_a_file_that_is_no_database_is_set_aside(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    path.write_bytes(GARBAGE)
    (tmp_path / "db.sqlite-wal").write_bytes(b"old wal")
    conn = open_database(path, _schema, "a test")
    try:
        conn.execute("INSERT INTO t VALUES (1)")
        assert conn.execute("SELECT x FROM t").fetchall() == [(1,)]
    finally:
        conn.close()
    (aside,) = set_aside_files(tmp_path)
    assert UNREADABLE in aside.name and aside.read_bytes() == GARBAGE


def test_a_file_that_cannot_be_opened_is_an_error_and_stays(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    path.mkdir()  # what SQLite cannot open is not proof of a broken file
    with pytest.raises(sqlite3.OperationalError):
        open_database(path, _schema, "a test")
    assert path.is_dir() and set_aside_files(tmp_path) == []


def test_the_agent_answers_over_garbage_databases_and_the_doctor_says_so(
        provider_env: FakeLLM, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    for name in ("sessions.sqlite", "ledger.sqlite", "memory.sqlite3"):
        (home / name).write_bytes(GARBAGE)
    config = make_config(tmp_path)
    agent, rec = make_agent(config)
    try:
        provider_env.reply("Still here.")
        agent.loop.process(user_signal("hello"))
        memory = agent_memory(agent)
        health = agent.check_health()
    finally:
        agent.shutdown()
    assert rec.of("reply")[-1]["text"] == "Still here."
    assert memory is not None and health.status == "healthy", health.problems
    assert {p.name.split(UNREADABLE)[0] for p in set_aside_files(home)} == {
        "sessions.sqlite", "ledger.sqlite", "memory.sqlite3"}
    lines = [c.line() for c in check_dirs(config) if c.name == "set aside"]
    assert len(lines) == 3 and all(".recover" in line for line in lines)


def test_memory_that_cannot_open_makes_the_health_degraded(provider_env: FakeLLM,
                                                         tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    # A database, but of something else: no proof of damage, so it is not set aside.
    with sqlite3.connect(home / "memory.sqlite3") as other:
        other.execute("CREATE TABLE meta (name TEXT)")
    other.close()
    agent, _rec = make_agent(make_config(tmp_path))
    try:
        exports = agent.registry.exports("memory")
        assert exports is not None and exports.memory_SERVICE.ready.wait(20)
        health = agent.check_health()
    finally:
        agent.shutdown()
    assert health.status == "degraded"
    assert any(p.startswith("memory-skill: memory could not be opened") for p in health.problems)


def test_a_chat_no_skill_can_answer_says_why(provider_env: FakeLLM, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "sessions.sqlite").mkdir(parents=True)  # the chat skill cannot start
    agent, rec = make_agent(make_config(tmp_path))
    try:
        assert agent.status()["skills"]["chat"] == "failed"
        agent.loop.process(user_signal("hello"))
    finally:
        agent.shutdown()
    (error,) = rec.of("error")
    assert error["message"].startswith("no skill answers a chat: chat: failed (")
    assert "unable to open database file" in error["message"]
    assert rec.kinds()[-1] == "done" and provider_env.request_count == 0
