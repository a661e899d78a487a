"""A resumed session reads as it was shown: a turn the intent parser answered (its call,
result and reply), a refusal the model never saw, an error, and each answer to an
approval (between its call and its result) are kept in the session with the model's own
turns; the shown-only entries never reach a model; a session the
person never said anything in is not listed."""

from __future__ import annotations

import json
from pathlib import Path

from fakellm import FakeLLM
from llm_agent import (  # noqa: F401
    Recorder,
    agent_setup,
    make_agent,
    make_config,
    provider_env,
    user_signal,
)
from test_local_tools import local_agent

from passepartout.agent import Agent
from passepartout.faces.acp.updates import history_updates
from passepartout.llm.shown import model_messages
from passepartout.loop.actions import Answer, ApprovalRequest
from passepartout.views import sessions


def history(agent: Agent, session: str = "s1") -> list[dict[str, object]]:
    return [{k: str(v) if k == "role" else v for k, v in m.items()}
            for m in agent.services.sessions.history(session)]


def test_a_turn_the_intent_parser_answered_is_kept_as_shown(tmp_path: Path) -> None:
    agent, rec = make_agent(make_config(tmp_path, PASSEPARTOUT_MODEL="openai/unreachable"))
    try:
        agent.loop.process(user_signal("every Monday at 9 remind me to water the plants"))
        kept = history(agent)
        # The model sees it next time too: a well-formed call and its result.
        messages = model_messages(agent.services.sessions.messages("s1"))
    finally:
        agent.shutdown()
    assert [m["role"] for m in kept] == ["user", "assistant", "tool", "assistant"]
    assert kept[0]["content"] == "every Monday at 9 remind me to water the plants"
    [call] = kept[1]["tool-calls"]  # type: ignore[misc]
    assert call["name"] == "schedule" and "+1w>" in json.loads(call["arguments"])["timestamp"]
    assert kept[2]["call-id"] == call["call-id"] and kept[2]["name"] == "schedule"
    [reply] = rec.of("reply")
    assert kept[3]["content"] == reply["text"]
    assert messages[1]["tool_calls"][0]["function"]["name"] == "schedule"


def test_a_refused_intent_is_kept_as_its_denial(tmp_path: Path) -> None:
    agent, rec = local_agent(tmp_path)
    try:
        agent.loop.process(user_signal("note: buy milk"))
        kept = history(agent)
        messages = model_messages(agent.services.sessions.messages("s1"))
    finally:
        agent.shutdown()
    [denied] = rec.of("denied")
    assert kept[0] == {"role": "user", "content": "note: buy milk"}
    shown = [m for m in kept if m["role"] == "denied"]
    assert shown == [{"role": "denied", "content": denied["reason"],
                      "name": "remember(title='buy milk')"}]
    assert all(m["role"] != "denied" for m in messages)
    # Replayed to an ACP client, it is a refused call.
    [update] = [u.model_dump(mode="json") for u in history_updates(kept)
                if getattr(u, "session_update", "") == "tool_call"]
    assert update["status"] == "failed" and "remember" in update["title"]


def test_an_error_is_kept_and_never_sent_to_a_model(
    agent_setup: tuple[Agent, object, FakeLLM],  # noqa: F811
) -> None:
    agent, _rec, fake = agent_setup
    fake.for_model("gpt-4o-mini").error(400, "the provider is down")
    agent.loop.process(user_signal("Tell me a short joke about org-mode."))
    kept = history(agent)
    assert kept[0] == {"role": "user", "content": "Tell me a short joke about org-mode."}
    errors = [m for m in kept if m["role"] == "error"]
    assert len(errors) == 1 and "the provider is down" in str(errors[0]["content"])
    # The next turn's request carries the person's words, not the error entry.
    fake.for_model("gpt-4o-mini").reply("Why did the heading fold?")
    agent.loop.process(user_signal("Another one, please.", **{"turn-id": "t2"}))
    roles = [m["role"] for m in fake.last_request.body["messages"]]
    assert "error" not in roles and roles.count("user") == 2
    # Replayed to an ACP client, the error is said too.
    texts = [json.dumps(u.model_dump(mode="json")) for u in history_updates(kept)]
    assert any("Error: " in t for t in texts)


def test_a_session_without_a_prompt_is_not_listed(tmp_path: Path) -> None:
    agent, _rec = make_agent(make_config(tmp_path, PASSEPARTOUT_MODEL="openai/unreachable"))
    try:
        store = agent.services.sessions
        store.append("empty", {"role": "assistant", "content": "[cancelled]"})
        agent.loop.process(user_signal("every Monday at 9 remind me to water the plants"))
    finally:
        agent.shutdown()
    assert [s["id"] for s in sessions(tmp_path / "home")] == ["s1"]


class Answering(Recorder):
    """A face that says how it answered, as the daemon's channel does: by ``face``,
    ``always`` or once."""

    def __init__(self, answers: list[tuple[bool, bool]], face: str = "tui") -> None:
        super().__init__()
        self.answers, self.face = list(answers), face

    def approve(self, request: ApprovalRequest) -> bool:
        self.asked.append(request)
        yes, always = self.answers.pop(0)
        if request.heard is not None:
            request.heard(Answer(yes, always=always, by=self.face,
                                 reason="" if yes else "refused"))
        return yes


def test_each_approval_answer_is_kept_between_its_call_and_result(
    provider_env: FakeLLM, tmp_path: Path,  # noqa: F811
) -> None:
    fake = provider_env
    agent, _rec = make_agent(make_config(tmp_path),
                             Answering([(True, True), (False, False)]))
    try:
        fake.tool_call("eval", {"code": "6*7"})
        fake.reply("It is 42.")
        agent.loop.process(user_signal("compute"))
        fake.tool_call("eval", {"code": "6*9"})
        fake.reply("Not computed.")
        agent.loop.process(user_signal("compute again", **{"turn-id": "t2"}))
        kept = history(agent)
        roles = [m["role"] for m in fake.last_request.body["messages"]]
    finally:
        agent.shutdown()
    assert [m["role"] for m in kept] == [
        "user", "assistant", "approval", "tool", "assistant",
        "user", "assistant", "approval", "tool", "assistant"]
    allowed, denied = [m for m in kept if m["role"] == "approval"]
    call = kept[1]["tool-calls"][0]  # type: ignore[index]
    assert allowed["call-id"] == call["call-id"] and allowed["name"] == "eval(code='6*7')"
    assert str(allowed["content"]).startswith("eval(code='6*7') — ")
    assert (allowed["answer"], allowed["always"], allowed["by"], allowed["reason"]) == (
        "allowed", True, "tui", "")
    assert (denied["answer"], denied["always"], denied["by"], denied["reason"]) == (
        "denied", False, "tui", "refused")
    assert "approval" not in roles  # shown to the person, never to a model
