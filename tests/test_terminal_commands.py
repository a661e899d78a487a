"""``/model``, ``/session`` and ``/cost`` in ``passepartout chat``, with the fake model;
piped standard input keeps its line-by-line reading and writes no history."""

from __future__ import annotations

import io
from pathlib import Path

from fakellm import FakeLLM
from llm_agent import make_config

from passepartout.faces.terminal.chat import run_chat
from passepartout.faces.terminal.commands import command_word

pytest_plugins = ["llm_agent"]


def test_command_words() -> None:
    assert command_word("/model gpt-4o") == ("model", "gpt-4o")
    assert command_word("/COST") == ("cost", "")
    assert command_word("/session list") == ("session", "list")
    assert command_word("/skills") is None  # the agent's reflexes answer it
    assert command_word("model") is None


def test_model_session_and_cost(provider_env: FakeLLM, tmp_path: Path) -> None:
    fake = provider_env
    fake.reply("First answer.")
    fake.reply("Second answer.")
    fake.reply("Third answer.")
    script = "\n".join([
        "hello there", "/cost", "/model", "/model openai/gpt-4.1-mini", "again please",
        "/model no-such-model-xyz", "/model two words", "/session", "/session list",
        "/session ../etc", "/session other", "third one", "/session", "/cost",
        "/model default", "/help",
    ]) + "\n"
    out = io.StringIO()
    config = make_config(tmp_path, PASSEPARTOUT_MODEL_REASONING="openai/gpt-4o")
    assert run_chat(config, stdin=io.StringIO(script), stdout=out) == 0
    text = out.getvalue()
    # /cost after one turn: this session's single call, and today's.
    first_cost = text.split("First answer.")[1].split("cognition:")[0]
    assert "session terminal: $" in first_cost and ", 1 calls," in first_cost
    assert "today: $" in first_cost
    # /model shows each tier; a chosen model is used by the next turn.
    assert "cognition: openai/gpt-4o-mini" in text and "reasoning: openai/gpt-4o" in text
    assert "This chat now uses openai/gpt-4.1-mini (known to litellm) for every tier." in text
    assert fake.requests[0].model == "gpt-4o"  # "hello there" is a reasoning turn
    assert fake.requests[1].model.endswith("gpt-4.1-mini")
    assert "Unknown model 'no-such-model-xyz'" in text and "nothing changed" in text
    assert "Not a model name: 'two words'" in text
    assert fake.requests[2].model.endswith("gpt-4.1-mini")  # the unknown one changed nothing
    # /session names, lists and switches.
    assert "Session terminal: hello there" in text
    assert "Sessions (most recent first):\n* terminal" in text
    assert "Not a session id: '../etc'" in text
    assert "Switched to a new session other." in text
    assert "Session other: third one" in text
    assert fake.requests[2].messages[1]["content"].endswith("third one")
    assert all("hello there" not in str(m.get("content")) for m in fake.requests[2].messages)
    final_cost = text.rsplit("Session other", 1)[1]
    assert "session other: $" in final_cost and ", 1 calls," in final_cost
    assert ", 3 calls," in final_cost.split("today:")[1]
    assert "This chat uses the configured models again." in text
    assert "/model [NAME|default], /session [list|ID], /cost" in text  # after the reflex's /help
    assert "Commands: /help" in text
    assert fake.request_count == 3  # no command reached the model
    # Piped standard input: no line editing, no history file.
    assert not (config.home / "chat_history").exists()


def test_a_configured_model_is_accepted(provider_env: FakeLLM, tmp_path: Path) -> None:
    config = make_config(tmp_path, PASSEPARTOUT_FALLBACK_MODELS="mine/private-model")
    out = io.StringIO()
    assert run_chat(config, stdin=io.StringIO("/model mine/private-model\n/model\n"),
                    stdout=out) == 0
    assert "This chat now uses mine/private-model (configured)" in out.getvalue()
    assert "fallbacks: mine/private-model" in out.getvalue()
    assert "this chat: mine/private-model" in out.getvalue()
    assert provider_env.request_count == 0
