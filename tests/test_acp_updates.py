"""The translation of the daemon's events into ACP updates: one tool call from the
approval through its run to its result, a refusal shown as a failed call, a kept
session replayed, the answers of a permission request, the prompt's text."""

from __future__ import annotations

import pytest
from acp import text_block
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    EmbeddedResourceContentBlock,
    RequestPermissionResponse,
    ResourceContentBlock,
    TextResourceContents,
    ToolCallProgress,
    ToolCallStart,
)

from passepartout.faces.acp.agent import advertises_notices
from passepartout.faces.acp.permission import answer_of
from passepartout.faces.acp.updates import (
    PromptError,
    ToolTracker,
    approval_call,
    context_window,
    history_updates,
    prompt_parts,
    resource_path,
    usage_update,
)
from passepartout.protocol import (
    RESOURCE_BYTES,
    ApprovalAsked,
    ToolCalled,
    ToolDenied,
    ToolFinished,
)
from passepartout.signals import Keyword

ASKED = ApprovalAsked("ap1", "s", "t", "shell(cmd='make deploy')",
                      {"tool": "shell", "args": {"cmd": "make deploy"},
                       "reasons": ["make is not on the allowlist"]})


def test_an_asked_call_is_one_call_from_the_question_to_its_result() -> None:
    tools = ToolTracker(prefix="t")
    call_id = tools.for_approval(ASKED)
    fields = approval_call(call_id, ASKED)
    assert fields["title"] == "shell: make deploy" and fields["kind"] == "execute"
    assert "make is not on the allowlist" in fields["content"][0].content.text
    approved = tools.answered(call_id, True, False)
    assert approved.status == "in_progress"
    run = tools.on_tool(ToolCalled("s", "t", "shell", {"cmd": "make deploy"},
                                  call_id="c9"))
    assert isinstance(run, ToolCallProgress) and run.tool_call_id == call_id
    done = tools.on_tool(ToolFinished("s", "t", "shell", True, output="ok",
                                   call_id="c9"))
    assert isinstance(done, ToolCallProgress) and done.tool_call_id == call_id
    assert done.status == "completed"


def test_a_rejected_call_ends_failed_with_the_reason() -> None:
    tools = ToolTracker(prefix="t")
    call_id = tools.for_approval(ASKED)
    assert tools.answered(call_id, False, True).status == "failed"
    refused = tools.on_tool(ToolDenied("s", "t", "shell(cmd='make deploy')",
                                      reason="the person said no"))
    assert isinstance(refused, ToolCallProgress) and refused.tool_call_id == call_id
    assert refused.status == "failed"
    assert "the person said no" in refused.content[0].content.text  # type: ignore[index,union-attr]


def test_a_refusal_no_one_was_asked_about_is_a_failed_call() -> None:
    refused = ToolTracker(prefix="t").on_tool(
        ToolDenied("s", "t", "read-file(path='~/.ssh/id_rsa')", reason="protected"))
    assert isinstance(refused, ToolCallStart) and refused.status == "failed"
    assert refused.kind == "read"


def test_a_kept_session_replays_prompts_replies_and_tool_calls() -> None:
    updates = history_updates([
        {"role": ":user", "content": "list my files"},
        {"role": ":assistant", "content": "",
         "tool-calls": [{"call-id": "c1", "name": "shell", "arguments": '{"cmd": "ls"}'}]},
        {"role": ":tool", "content": "a.org", "call-id": "c1"},
        {"role": ":assistant", "content": "You have a.org."},
    ])
    kinds = [u.session_update for u in updates]
    assert kinds == ["user_message_chunk", "tool_call", "tool_call_update",
                     "agent_message_chunk"]
    assert isinstance(updates[1], ToolCallStart) and updates[1].title == "shell: ls"


def test_the_four_answers_and_a_cancelled_request() -> None:
    def pick(option: str) -> RequestPermissionResponse:
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected",
                                                                option_id=option))

    assert (answer_of(pick("allow-once")).yes, answer_of(pick("allow-once")).always) == (
        True, False)
    assert answer_of(pick("allow-always")).always and answer_of(pick("allow-always")).yes
    assert not answer_of(pick("reject-always")).yes and answer_of(pick("reject-always")).always
    assert not answer_of(pick("something-else")).yes
    cancelled = RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
    assert not answer_of(cancelled).yes and not answer_of(None).yes


def test_a_resource_is_named_in_the_text_and_attached_by_the_place_it_claims() -> None:
    attached = EmbeddedResourceContentBlock(
        type="resource", resource=TextResourceContents(uri="file:///n%20b.org", text="* Notes"))
    link = ResourceContentBlock(type="resource_link", uri="file:///etc/hosts", name="hosts")
    web = ResourceContentBlock(type="resource_link", uri="https://example.org/a", name="a")
    parts = prompt_parts([text_block("summarize"), attached, link, web])
    assert parts.text == ("summarize\n\n[file:///n%20b.org]\n\n[file:///etc/hosts]"
                          "\n\n[https://example.org/a]")
    assert parts.attachments == [
        [Keyword("name"), "file:///n%20b.org", Keyword("text"), "* Notes",
         Keyword("file"), "/n b.org"],
        [Keyword("name"), "file:///etc/hosts", Keyword("file"), "/etc/hosts"]]


def test_the_place_a_resource_claims() -> None:
    assert resource_path("~/.ssh/id_rsa") == "~/.ssh/id_rsa"
    assert resource_path(".ssh/id_rsa") == ".ssh/id_rsa"  # taken in the workspace
    assert resource_path("zed://h/home/me/.ssh/id_rsa") is None  # not a file to read
    assert resource_path("zed://h/home/me/.ssh/id_rsa", claimed=True) == "/home/me/.ssh/id_rsa"
    assert resource_path("https://example.org/a", claimed=False) is None


def test_an_oversized_resource_is_refused_before_it_is_sent() -> None:
    big = EmbeddedResourceContentBlock(type="resource", resource=TextResourceContents(
        uri="file:///big.txt", text="x" * (RESOURCE_BYTES + 1)))
    with pytest.raises(PromptError, match="at most"):
        prompt_parts([text_block("read"), big])


def test_usage_is_the_last_call_in_the_window_of_its_model() -> None:
    usage = {"session": {"calls": 2, "tokens-in": 3000, "tokens-out": 80, "cost": 0.01},
             "last": {"model": "openai/gpt-4o", "tokens-in": 2000}}
    update = usage_update(usage, 200_000)
    assert update is not None and update.used == 2000 and update.size == 128000
    assert update.cost is not None and update.cost.amount == 0.01
    capped = usage_update(usage, 32000)  # the most this agent puts in a context
    assert capped is not None and capped.size == 32000
    assert usage_update({}, None) is None


def test_the_local_model_has_its_window_and_an_unknown_one_no_meter() -> None:
    local = {"session": {"calls": 1, "tokens-in": 900, "cost": 0.0},
             "last": {"model": "local/smollm2", "tokens-in": 900}}
    update = usage_update(local, 32000)
    assert update is not None and (update.used, update.size) == (900, 8192)
    assert context_window("local/smollm2") == 8192
    unknown = {"session": {"calls": 1, "tokens-in": 900, "cost": 0.0},
               "last": {"model": "openai/my-own-finetune", "tokens-in": 900}}
    assert context_window("openai/my-own-finetune") is None
    assert usage_update(unknown, 32000) is None  # no size is better than a false one


def test_a_replay_gives_each_call_its_own_id_and_its_final_status() -> None:
    """The model reuses ``call_1``: four calls replay as four, each with its result;
    refused, failed and unrun calls end failed, and a call without a result too."""
    def call(args: str) -> dict[str, object]:
        return {"role": ":assistant", "content": "",
                "tool-calls": [{"call-id": "call_1", "name": "shell", "arguments": args}]}

    updates = history_updates([
        {"role": ":user", "content": "go"},
        call('{"cmd": "ls"}'), {"role": ":tool", "content": "a.org", "call-id": "call_1"},
        call('{"cmd": "make deploy"}'),
        {"role": ":tool", "content": "refused by policy (ask): the person said no",
         "call-id": "call_1"},
        call('{"cmd": "false"}'), {"role": ":tool", "content": "error: exit 1",
                                   "call-id": "call_1"},
        call('{"cmd": "sleep 9"}'),
        {"role": ":user", "content": "Refused by the gates: shell was refused"},
        {"role": ":assistant", "content": "Done."},
    ])
    starts = [u for u in updates if isinstance(u, ToolCallStart)]
    assert len({u.tool_call_id for u in starts}) == 4
    final = {u.tool_call_id: u.status for u in updates
             if isinstance(u, ToolCallStart | ToolCallProgress)}
    assert list(final.values()) == ["completed", "failed", "failed", "failed"]
    said = [u.content.text for u in updates if u.session_update == "agent_message_chunk"]
    assert any("Refused by the gates" in t for t in said)  # the gates', not the person's
    asked = [u.content.text for u in updates if u.session_update == "user_message_chunk"]
    assert asked == ["go"]


def test_live_ids_are_the_agents_though_the_model_repeats_its_own() -> None:
    one, two = ToolTracker(prefix="t1"), ToolTracker(prefix="t2")
    first = one.on_tool(ToolCalled("s", "t1", "shell", {"cmd": "ls"}, call_id="call_1"))
    second = two.on_tool(ToolCalled("s", "t2", "shell", {"cmd": "ls"},
                                   call_id="call_1"))
    assert isinstance(first, ToolCallStart) and isinstance(second, ToolCallStart)
    assert first.tool_call_id != second.tool_call_id != "call_1"
    done = two.on_tool(ToolFinished("s", "t2", "shell", True, output="x",
                                 call_id="call_1"))
    assert isinstance(done, ToolCallProgress) and done.tool_call_id == second.tool_call_id


def test_the_notice_extension_is_for_a_client_that_advertises_it() -> None:
    assert advertises_notices(ClientCapabilities(field_meta={"passepartout": {"notice": True}}))
    assert not advertises_notices(ClientCapabilities())
    assert not advertises_notices(ClientCapabilities(field_meta={"passepartout": True}))
    assert not advertises_notices(None)


def texts_of(updates: list[object], call_id: str) -> list[str]:
    """The texts the updates of one call showed, in order."""
    return [c.content.text for u in updates  # type: ignore[attr-defined]
            if isinstance(u, ToolCallStart | ToolCallProgress) and u.tool_call_id == call_id
            for c in (u.content or [])]


def test_a_replay_says_each_answer_on_the_call_it_was_about() -> None:
    """Allowed always here, rejected in another face, unanswered: each on its own call,
    in the words the live call said it; an answer kept before its call (a turn the
    intent parser answered) and that call are one call."""
    def call(cid: str, cmd: str) -> dict[str, object]:
        return {"role": ":assistant", "content": "", "tool-calls": [
            {"call-id": cid, "name": "shell", "arguments": f'{{"cmd": "{cmd}"}}'}]}

    def answer(cid: str | None, answer: str, always: bool, by: str, reason: str = "",
               name: str = "shell(cmd='x')") -> dict[str, object]:
        kept: dict[str, object] = {"role": ":approval", "name": name,
                                   "content": f"{name} — asked", "answer": answer,
                                   "always": always, "by": by, "reason": reason}
        if cid:
            kept["call-id"] = cid
        return kept

    updates = history_updates([
        {"role": ":user", "content": "go"},
        call("call_1", "make"), answer("call_1", "allowed", True, "acp"),
        {"role": ":tool", "content": "exit code 0", "call-id": "call_1"},
        call("call_1", "make deploy"), answer("call_1", "denied", False, "emacs", "refused"),
        {"role": ":tool", "content": "refused by policy (ask): no", "call-id": "call_1"},
        call("call_1", "make clean"), answer("call_1", "denied", False, "",
                                             "no answer in time"),
        {"role": ":tool", "content": "refused by policy (ask): no", "call-id": "call_1"},
        {"role": ":user", "content": "note: milk"},
        answer(None, "allowed", False, "acp", name="remember(title='milk')"),
        {"role": ":assistant", "content": "", "tool-calls": [
            {"call-id": "shown-1", "name": "remember", "arguments": '{"title": "milk"}'}]},
        {"role": ":tool", "content": "noted", "call-id": "shown-1"},
    ])
    starts = [u for u in updates if isinstance(u, ToolCallStart)]
    assert len(starts) == 4, starts
    final = {u.tool_call_id: u.status for u in updates
             if isinstance(u, ToolCallStart | ToolCallProgress) and u.status}
    assert list(final.values()) == ["completed", "failed", "failed", "completed"]
    first, second, third, fourth = final
    assert texts_of(updates, first) == ["You allowed always.", "exit code 0"]
    assert texts_of(updates, second)[0] == "You rejected once (answered in emacs)."
    assert texts_of(updates, third)[0] == "Not allowed: no answer in time."
    assert texts_of(updates, fourth) == ["You allowed once.", "noted"]
    assert starts[3].status == "pending"
    (ran,) = [u for u in updates if isinstance(u, ToolCallProgress)
              and u.tool_call_id == fourth and u.title]
    assert ran.title == "remember: milk" and ran.status == "in_progress"


def test_the_live_answer_reads_as_its_replay() -> None:
    tools = ToolTracker(prefix="t")
    call_id = tools.for_approval(ASKED)
    live = tools.answered(call_id, True, True)
    assert [c.content.text for c in live.content or []] == [  # type: ignore[union-attr]
        "You allowed always."]
