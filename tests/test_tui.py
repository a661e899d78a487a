"""``passepartout tui``, headless under Textual's pilot, attached to a real daemon with
the fake model: a streamed reply; an approval as a dialog, denied (nothing runs) and
allowed (it runs); cancel mid-stream; the side panel's cron jobs, Flight Plans and
cost; the panel toggled and resized; text from the daemon shown, never obeyed; a
resumed session read as it was shown live, answers to approvals included; a long action
asked whole, at word boundaries, above the dialog's buttons."""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from daemon_proc import Daemons, scratch_daemons
from fakellm import FakeLLM
from textual.containers import VerticalScroll
from textual.widgets import Button, Static

from passepartout.faces.face import Face
from passepartout.faces.tui.app import ApprovalScreen, PassepartoutApp
from passepartout.protocol import Chunk, Done

JOB = """* Water the plants
:PROPERTIES:
:ID: plants-1
:CRON: <2031-03-02 Sun 09:00 +1w>
:TIER: reflex
:REFLEX: log
:END:
"""


@pytest.fixture(scope="module")
def fake_llm() -> Iterator[FakeLLM]:
    """One fake model and one daemon for the module: each daemon start costs seconds."""
    with FakeLLM() as fake:
        yield fake


@pytest.fixture(scope="module")
def daemons(tmp_path_factory: pytest.TempPathFactory, fake_llm: FakeLLM) -> Iterator[Daemons]:
    for running in scratch_daemons(tmp_path_factory.mktemp("tui"), fake_llm.base_url):
        running.env.update(PASSEPARTOUT_STREAM="1")
        running.write_approved(running.memex / "projects" / "garden.org", JOB)
        running.start()
        running.wait_ready()
        yield running


@pytest.fixture
def face(daemons: Daemons) -> Iterator[Face]:
    attached = Face.attach(daemons.home, source="tui", environ=daemons.env)
    assert attached is not None
    with attached:
        yield attached


def chat_text(app: PassepartoutApp) -> str:
    lines = app.query_one("#chat", VerticalScroll).query(Static)
    return "\n".join(str(line.render()) for line in lines)


async def until(pilot: object, probe: Callable[[], object], what: str,
                timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not probe():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.05)  # type: ignore[attr-defined]


async def say(pilot: object, app: PassepartoutApp, text: str) -> None:
    await pilot.click("#prompt")  # type: ignore[attr-defined]
    app.query_one("#prompt").value = text  # type: ignore[attr-defined]
    await pilot.press("enter")  # type: ignore[attr-defined]


def test_a_reply_streams_and_the_side_panel_shows_jobs_and_cost(
        face: Face, fake_llm: FakeLLM) -> None:
    fake_llm.reply("Hello from \x1b]52;c;cGF3bmVk\x07 the [bold]daemon[/bold].")

    async def drive() -> None:
        app = PassepartoutApp(face, "tui-s")
        async with app.run_test(size=(120, 36)) as pilot:
            await say(pilot, app, "hi")
            await until(pilot, lambda: "the [bold]daemon[/bold]." in chat_text(app),
                        "the reply, markup shown as text")
            assert "\x1b" not in chat_text(app) and "\\x1b" in chat_text(app)
            await until(pilot, lambda: not app.busy, "the turn to end")
            app.refresh_panel()
            await until(pilot, lambda: "Water the plants" in str(
                app.query_one("#jobs", Static).render()), "the cron job in the panel")
            await until(pilot, lambda: "session: 1 calls" in str(
                app.query_one("#cost", Static).render()), "the session's cost")
            side = app.query_one("#side")
            await pilot.press("ctrl+b")
            assert not side.display
            await pilot.press("ctrl+b")
            await pilot.press("f7")
            assert side.styles.width is not None and side.styles.width.value == 40
            await pilot.resize_terminal(70, 20)
            await pilot.pause(0.1)
            assert app.query_one("#prompt").region.width > 0

    asyncio.run(drive())


def test_an_approval_is_a_dialog_no_runs_nothing_and_yes_runs(
        face: Face, fake_llm: FakeLLM) -> None:
    fake_llm.tool_call("eval", {"code": "6*7"})
    fake_llm.reply("Not computed.")
    fake_llm.tool_call("eval", {"code": "6*7"})
    fake_llm.reply("It is 42.")

    async def drive() -> None:
        app = PassepartoutApp(face, "tui-a")
        async with app.run_test(size=(120, 36)) as pilot:
            await say(pilot, app, "compute")
            await until(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the dialog")
            assert "6*7" in str(app.screen.query_one("#question").render())
            await pilot.press("n")
            await until(pilot, lambda: "Not computed." in chat_text(app), "the reply to no")
            assert "Denied" in chat_text(app) and "← 42" not in chat_text(app)
            await until(pilot, lambda: not app.busy, "the turn to end")
            await say(pilot, app, "compute again")
            await until(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the dialog")
            await pilot.press("y")
            await until(pilot, lambda: "It is 42." in chat_text(app), "the reply to yes")
            assert "← 42" in chat_text(app)

    asyncio.run(drive())


def test_escape_cancels_a_turn_mid_stream_and_flight_plans_show(
        face: Face, fake_llm: FakeLLM, daemons: Daemons) -> None:
    fake_llm.slow_stream("word " * 200, chunk_delay=0.05)
    book = Path(str(face.status()["approvals-file"]))
    book.parent.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now().strftime("%Y-%m-%d %a %H:%M")
    book.write_text(f"* TODO Run the nightly backup\n:PROPERTIES:\n:ID: plan-7\n"
                    f":CREATED: [{stamp}]\n:END:\n", encoding="utf-8")

    async def drive() -> None:
        app = PassepartoutApp(face, "tui-c")
        async with app.run_test(size=(120, 36)) as pilot:
            await say(pilot, app, "talk a lot")
            await until(pilot, lambda: "word word" in chat_text(app), "the stream")
            await pilot.press("escape")
            await until(pilot, lambda: "(cancelled)" in chat_text(app), "the cancel")
            assert chat_text(app).count("word") < 200
            app.refresh_panel()
            await until(pilot, lambda: "Run the nightly backup" in str(
                app.query_one("#plans", Static).render()), "the waiting plan")

    asyncio.run(drive())


def test_a_lost_daemon_is_reattached_when_it_is_back(daemons: Daemons,
                                                     fake_llm: FakeLLM) -> None:
    # Last in the file: it kills the module's daemon and starts another.
    fake_llm.reply("Back again.")
    face = Face.attach(daemons.home, source="tui", environ=daemons.env)
    assert face is not None

    def reattach() -> Face | None:
        return Face.attach(daemons.home, source="tui", environ=daemons.env)

    async def drive() -> None:
        app = PassepartoutApp(face, "tui-r", reattach=reattach)
        async with app.run_test(size=(120, 36)) as pilot:
            await pilot.pause(0.2)
            daemons.started[-1].kill()
            daemons.started[-1].wait(10)
            await until(pilot, lambda: "the daemon went away" in chat_text(app), "the loss")
            daemons.start()
            await until(pilot, lambda: "(reconnected to the daemon)" in chat_text(app),
                        "the reattach", timeout=60)
            await say(pilot, app, "still there?")
            await until(pilot, lambda: "Back again." in chat_text(app), "a reply after it")
        app.face.close()

    asyncio.run(drive())


def test_a_resumed_session_shows_its_turns_as_they_were(
        face: Face, fake_llm: FakeLLM) -> None:
    fake_llm.tool_call("eval", {"code": "6*9"})
    fake_llm.reply("Not computed.")
    fake_llm.tool_call("eval", {"code": "6*7"})
    fake_llm.reply("It is 42.")

    async def first() -> str:
        app = PassepartoutApp(face, "tui-resume")
        async with app.run_test(size=(120, 36)) as pilot:
            await say(pilot, app, "compute it")
            await until(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the dialog")
            await pilot.press("n")
            await until(pilot, lambda: not app.busy, "the turn to end")
            await say(pilot, app, "compute the other")
            await until(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the dialog")
            await pilot.press("y")
            await until(pilot, lambda: not app.busy, "the turn to end")
            return chat_text(app)

    async def again() -> str:
        app = PassepartoutApp(face, "tui-resume")
        async with app.run_test(size=(120, 36)) as pilot:
            await until(pilot, lambda: "It is 42." in chat_text(app), "the history")
            return chat_text(app)

    live = asyncio.run(first()).splitlines()
    lines = asyncio.run(again()).splitlines()
    assert lines[0] == "You: compute it"
    assert lines[1].startswith("Denied: eval(code='6*9') — "), lines
    assert lines[2].startswith("refused eval(code='6*9'): "), lines
    assert any(line.startswith("Allowed once: eval(code='6*7') — ") for line in lines), lines
    assert lines[-1] == "It is 42."
    # Line for line what the live chat showed (the turns themselves, not the notices of
    # the daemon that came in between).
    assert lines == [line for line in live if not line.startswith("[")], (live, lines)


def test_history_lines_say_calls_results_refusals_and_errors() -> None:
    from passepartout.faces.tui.history import history_lines

    lines = history_lines([
        {"role": "user", "content": "note: milk"},
        {"role": "assistant", "content": "", "tool-calls": [
            {"call-id": "c1", "name": "remember", "arguments": '{"title": "milk"}'}]},
        {"role": "tool", "call-id": "c1", "content": "noted"},
        {"role": "assistant", "content": "Noted."},
        {"role": "denied", "name": "shell(cmd='ls')", "content": "policy says no"},
        {"role": "error", "content": "llm-error: the provider is down"}])
    assert lines == [("You: note: milk", "you"), ("→ remember(title='milk')", "tool"),
                     ("← noted", "tool"), ("Noted.", "agent"),
                     ("refused shell(cmd='ls'): policy says no", "tool-failed"),
                     ("llm-error: the provider is down", "error")]


def test_history_lines_leave_out_the_calls_of_a_refused_step_that_never_started() -> None:
    """Live, a refused step shows its refused call; its siblings never started and were
    not shown, so a resumed session does not show them either."""
    from passepartout.faces.tui.history import history_lines
    from passepartout.llm.translate import SIBLING_NOT_RUN

    lines = history_lines([
        {"role": "user", "content": "tidy up"},
        {"role": "assistant", "content": "", "tool-calls": [
            {"call-id": "c1", "name": "shell", "arguments": '{"cmd": "rm -rf x"}'},
            {"call-id": "c2", "name": "read-file", "arguments": '{"path": "a"}'}]},
        {"role": "tool", "call-id": "c1", "content": "refused by policy (deny): no rm"},
        {"role": "tool", "call-id": "c2", "content": SIBLING_NOT_RUN},
        {"role": "assistant", "content": "I may not."}])
    assert lines == [("You: tidy up", "you"),
                     ("refused shell(cmd='rm -rf x'): no rm", "tool-failed"),
                     ("I may not.", "agent")]


def test_history_lines_say_each_answer_to_an_approval_where_it_came() -> None:
    from passepartout.faces.tui.history import history_lines

    asked = "shell(cmd='make') — shell: make is not on the allow-list"
    lines = history_lines([
        {"role": "user", "content": "build it"},
        {"role": "assistant", "content": "", "tool-calls": [
            {"call-id": "c1", "name": "shell", "arguments": '{"cmd": "make"}'},
            {"call-id": "c2", "name": "shell", "arguments": '{"cmd": "make test"}'}]},
        {"role": "approval", "call-id": "c1", "content": asked, "answer": "allowed",
         "always": True, "by": "tui", "reason": ""},
        {"role": "approval", "call-id": "c2", "content": "shell(cmd='make test') — …",
         "answer": "allowed", "always": False, "by": "emacs", "reason": ""},
        {"role": "tool", "call-id": "c1", "content": "exit code 0"},
        {"role": "tool", "call-id": "c2", "content": "exit code 0"},
        {"role": "assistant", "content": "", "tool-calls": [
            {"call-id": "c3", "name": "shell", "arguments": '{"cmd": "make install"}'}]},
        {"role": "approval", "call-id": "c3", "content": "shell(cmd='make install') — …",
         "answer": "denied", "always": False, "by": "", "reason": "no answer in time"},
        {"role": "tool", "call-id": "c3",
         "content": "refused by policy (ask): shell: make install is not on the allow-list"},
        {"role": "assistant", "content": "Built, not installed."}])
    assert lines == [
        ("You: build it", "you"),
        (f"Allowed always: {asked}", "notice"),
        ("Allowed once: shell(cmd='make test') — … [answered in emacs]", "notice"),
        ("→ shell(cmd='make')", "tool"), ("← exit code 0", "tool"),
        ("→ shell(cmd='make test')", "tool"), ("← exit code 0", "tool"),
        ("Denied (no answer in time): shell(cmd='make install') — …", "notice"),
        ("refused shell(cmd='make install'): shell: make install is not on the allow-list",
         "tool-failed"),
        ("Built, not installed.", "agent")]


def test_a_long_action_is_asked_whole_at_word_boundaries_with_its_buttons() -> None:
    """An action longer than the screen: its beginning shows first, its lines break at
    words, the rest scrolls above the buttons, which stay on the screen."""
    from textual.app import App
    from textual.geometry import Region

    from passepartout.protocol import ApprovalAsked

    words = [f"word{n:03d}" for n in range(400)]
    asked = ApprovalAsked("ap1", "s", "t",
                          f"shell(cmd='echo {' '.join(words)}') — shell: echo is asked",
                          {"tool": "shell", "reasons": ["echo is not on the allow-list"]})

    class Dialog(App[None]):
        CSS = PassepartoutApp.CSS

        def on_mount(self) -> None:
            self.push_screen(ApprovalScreen(asked))

    async def drive() -> None:
        app = Dialog()
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause(0.1)
            screen = app.screen
            dialog = screen.query_one("#dialog")
            assert screen.region.contains_region(dialog.region), dialog.region
            for button in screen.query(Button):
                assert dialog.content_region.contains_region(button.region), button.id
            scroll = screen.query_one("#asked")
            question = screen.query_one("#question", Static)
            assert question.region.y == scroll.region.y  # its beginning is what shows
            assert scroll.max_scroll_y > 0  # the rest is there, scrolled to
            lines = [strip.text.strip() for strip in question.render_lines(
                Region(0, 0, question.size.width, question.size.height))]
            assert lines[0].startswith("The agent asks: shell(cmd='echo word000")
            shown = " ".join(lines).split()
            assert [w for w in shown if w.startswith("word")][1:-1] == words[1:-1]
            await pilot.press("n")
            await pilot.pause(0.1)
            assert not isinstance(app.screen, ApprovalScreen)

    asyncio.run(drive())


def test_a_reply_of_the_local_model_says_so_with_its_time(face: Face) -> None:
    async def drive() -> None:
        app = PassepartoutApp(face, "tui-local")
        async with app.run_test(size=(120, 36)) as pilot:
            app.show(Chunk("tui-local", "t1", "Venus."))
            app.show(Done("tui-local", "t1", model="local/smollm2", local=True))
            await until(pilot, lambda: "(local model local/smollm2, offline, " in chat_text(app),
                        "the local model's mark")
            app.show(Chunk("tui-local", "t2", "Mercury."))
            app.show(Done("tui-local", "t2", model="openai/gpt-4o", local=False))
            await until(pilot, lambda: "Mercury." in chat_text(app), "the second reply")
            assert chat_text(app).count("(local model") == 1

    asyncio.run(drive())
