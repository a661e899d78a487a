"""The full-screen chat: the conversation, an input line, a side panel, approvals as
dialogs.

Everything that talks to the daemon runs in a worker thread (a socket call must never
freeze the screen); the backend's events arrive on its reader thread and are handed to
the app's loop with ``call_from_thread``.  Text from the daemon is shown as text, never
as markup: a reply holding ``[bold]`` or an escape sequence is printed as it is.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Input, Static
from textual.worker import get_current_worker

from passepartout.errors import DaemonError
from passepartout.faces.answered import local_mark
from passepartout.faces.face import Face
from passepartout.faces.tui.history import history_lines
from passepartout.faces.tui.panel import Panel, read_panel
from passepartout.protocol import (
    Allow,
    ApprovalAsked,
    Chunk,
    Deny,
    Disconnected,
    Done,
    Event,
    Notice,
    ToolCalled,
    ToolEvent,
    ToolFinished,
    TurnError,
)
from passepartout.text import one_line, terminal_safe

log = logging.getLogger(__name__)

PANEL_REFRESH = 5.0
RECONNECT_FIRST, RECONNECT_MAX = 0.2, 5.0  # seconds between tries to attach again
PANEL_WIDTHS = (24, 32, 40, 52)


def plain(text: str) -> Text:
    """Daemon text for the screen: no markup, no control sequence."""
    return Text(terminal_safe(text))


class ApprovalScreen(ModalScreen[str]):
    """One question: allow once, allow always (a grant), or deny."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "choose('allow')", "Allow once"),
        Binding("a", "choose('always')", "Allow always"),
        Binding("n,escape", "choose('deny')", "Deny"),
    ]

    def __init__(self, approval: ApprovalAsked) -> None:
        super().__init__()
        self.approval = approval

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            # Static wraps at words, and a long action scrolls between the dialog's top
            # and its buttons: all of it can be read before it is answered.
            with VerticalScroll(id="asked"):
                yield Static(plain("The agent asks: " + self.approval.description),
                             id="question")
                for reason in self.approval.info.get("reasons") or []:
                    yield Static(plain(str(reason)), classes="detail")
            with Horizontal(id="choices"):
                yield Button("Allow once [y]", id="allow", variant="warning")
                yield Button("Allow always [a]", id="always")
                yield Button("Deny [n]", id="deny", variant="primary")

    @on(Button.Pressed)
    def pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id or "deny")

    def action_choose(self, answer: str) -> None:
        self.dismiss(answer)


class PassepartoutApp(App[None]):
    """The chat with the daemon, full screen."""

    TITLE = "Passepartout"
    CSS = """
    #main { height: 1fr; }
    #chat { width: 1fr; padding: 0 1; }
    #side { width: 32; border-left: solid $primary; padding: 0 1; }
    #side.hidden { display: none; }
    .you { color: $accent; margin-top: 1; }
    .agent { margin-bottom: 0; }
    .tool { color: $text-muted; }
    .tool-failed { color: $warning; }
    .error { color: $error; }
    .notice { color: $secondary; }
    .heading { text-style: bold; margin-top: 1; }
    #status { height: 1; color: $text-muted; padding: 0 1; }
    ApprovalScreen { align: center middle; }
    #dialog { width: 80%; height: auto; max-height: 90%; border: thick $warning;
              padding: 1 2; background: $surface; }
    #asked { height: auto; max-height: 1fr; }
    #choices { dock: bottom; }
    #question { width: 100%; height: auto; }
    #choices { height: auto; margin-top: 1; }
    #choices Button { margin-right: 2; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel the turn"),
        Binding("ctrl+b", "toggle_side", "Side panel"),
        Binding("f7", "side_wider", "Wider panel", priority=True),
        Binding("f8", "side_narrower", "Narrower panel", priority=True),
        Binding("ctrl+q", "quit", "Quit"),
    ]

    def __init__(self, face: Face, session: str, *,
                 reattach: Callable[[], Face | None] | None = None) -> None:
        """``reattach`` gives a new face of the daemon, or None while none runs; with
        it, a lost connection is made again as soon as the daemon is back."""
        super().__init__()
        self.face = face
        self.session = session
        self.reattach = reattach
        self.reconnecting = False
        self.turn_id: str | None = None
        self.reply: Static | None = None
        self.reply_text = ""
        self.busy = False
        self.asked_at = time.monotonic()  # when the running turn was sent
        self.width_index = 1

    def compose(self) -> ComposeResult:
        with Horizontal(id="main"):
            yield VerticalScroll(id="chat")
            with Vertical(id="side"):
                yield Static("Next cron jobs", classes="heading")
                yield Static("…", id="jobs")
                yield Static("Flight Plans waiting", classes="heading")
                yield Static("…", id="plans")
                yield Static("Cost", classes="heading")
                yield Static("…", id="cost")
        yield Static("", id="status")
        yield Input(placeholder="Ask, then Enter  (Esc cancels, Ctrl+Q quits)", id="prompt")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#prompt", Input).focus()
        self.face.listen(self.from_daemon)
        self.set_status(f"session {self.session}")
        self.load_history()
        self.refresh_panel()
        self.set_interval(PANEL_REFRESH, self.refresh_panel)

    # -- talking to the daemon (off the event loop) -----------------------------------------

    @work(thread=True, group="panel")
    def refresh_panel(self) -> None:
        try:
            panel = read_panel(self.face, self.session)
        except DaemonError as err:
            log.debug("side panel not refreshed: %s", err.message)
            return
        self.from_thread(self.show_panel, panel)

    @work(thread=True, group="history")
    def load_history(self) -> None:
        """A resumed session: its kept turns, shown as they were (before any new one)."""
        try:
            lines = history_lines(self.face.history(self.session))
        except DaemonError as err:
            self.from_thread(self.show_error, "the session's history", err.message)
            return
        if lines:
            self.from_thread(self.show_history, lines)

    def show_history(self, lines: list[tuple[str, str]]) -> None:
        chat = self.query_one("#chat", VerticalScroll)
        first = chat.children[0] if chat.children else None
        shown = [Static(plain(text), classes=kind) for text, kind in lines]
        if first is None:
            chat.mount(*shown)
        else:
            chat.mount(*shown, before=first)
        self.scroll_chat()

    @work(thread=True, group="turn")
    def submit(self, text: str) -> None:
        """Send the prompt and show its events until the turn is done."""
        try:
            turn = self.face.send(self.session, text)
        except DaemonError as err:
            self.from_thread(self.show_error, "not sent", err.message)
            self.from_thread(self.turn_over)
            return
        self.turn_id = turn.turn
        while not turn.finished:
            event = turn.next(1.0)
            if event is not None:
                self.from_thread(self.show, event)
            elif self.face.closed:
                break

    @work(thread=True, group="answer")
    def send_answer(self, approval_id: str, answer: str) -> None:
        try:
            reply = Deny() if answer == "deny" else Allow(always=answer == "always")
            if not self.face.answer(approval_id, reply):
                self.from_thread(self.add_line, "(too late: the approval had timed out, "
                                 "and was refused)", "notice")
        except DaemonError as err:
            self.from_thread(self.show_error, "the answer was not sent", err.message)

    @work(thread=True, group="cancel")
    def send_cancel(self) -> None:
        try:
            self.face.cancel(self.session, self.turn_id)
        except DaemonError as err:
            self.from_thread(self.show_error, "cancel", err.message)

    def from_daemon(self, event: Event) -> None:
        """An event of no turn of ours (a notice, a job's approval), on the reader."""
        if isinstance(event, Notice | ApprovalAsked | Disconnected):
            self.from_thread(self.show, event)

    def from_thread(self, *call: object) -> None:
        """Run ``call`` on the app's loop; nothing when the app has stopped, or when its
        screen is closing (a worker's news that came a moment too late)."""
        fn, *args = call
        with contextlib.suppress(RuntimeError, NoMatches):
            self.call_from_thread(fn, *args)  # type: ignore[arg-type]

    # -- the screen ---------------------------------------------------------------------------

    @on(Input.Submitted, "#prompt")
    def prompt_entered(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text:
            return
        if self.busy:
            self.set_status("a turn is running: Esc cancels it")
            return
        event.input.value = ""
        self.add_line("You: " + text, "you")
        self.reply, self.reply_text, self.busy = None, "", True
        self.asked_at = time.monotonic()
        self.set_status("thinking…")
        self.submit(text)

    def show(self, event: Event) -> None:
        if isinstance(event, Chunk):
            self.reply_text += event.text
            if self.reply is None:
                self.reply = self.add_line(self.reply_text, "agent")
            else:
                self.reply.update(plain(self.reply_text))
                self.scroll_chat()
        elif isinstance(event, ToolEvent):
            self.reply, self.reply_text = None, ""  # the next step's text is a new block
            self.add_line(*_tool_line(event))
        elif isinstance(event, TurnError):
            self.show_error(event.kind, event.message)
        elif isinstance(event, Done):
            if event.cancelled:
                self.add_line("(cancelled)", "notice")
            mark = local_mark(event, time.monotonic() - self.asked_at)
            if mark is not None:
                self.add_line(mark, "notice")
            self.turn_over()
            self.refresh_panel()
        elif isinstance(event, ApprovalAsked):
            self.ask(event)
        elif isinstance(event, Notice):
            self.add_line(f"[{event.level}] {event.text}", "notice")
            self.refresh_panel()
        elif isinstance(event, Disconnected) and not self.reconnecting:
            self.show_error("the daemon went away", event.reason)
            self.turn_over()
            if self.reattach is not None:
                self.reconnecting = True
                self.set_status("reconnecting to the daemon…")
                self.reconnect()

    @work(thread=True, group="reconnect", exclusive=True)
    def reconnect(self) -> None:
        """Attach again once the daemon is back (it is never started from here: a
        daemon the person stopped stays stopped), waiting longer between tries."""
        assert self.reattach is not None
        delay = RECONNECT_FIRST
        while not get_current_worker().is_cancelled:
            try:
                face = self.reattach()
            except DaemonError as err:
                log.debug("not reattached: %s", err.message)
                face = None
            if face is not None:
                self.from_thread(self.reattached, face)
                return
            time.sleep(delay)
            delay = min(delay * 2, RECONNECT_MAX)

    def reattached(self, face: Face) -> None:
        old, self.face, self.reconnecting = self.face, face, False
        face.listen(self.from_daemon)
        self.add_line("(reconnected to the daemon)", "notice")
        self.set_status(f"session {self.session}")
        self.refresh_panel()
        with contextlib.suppress(Exception):
            old.close()

    def ask(self, approval: ApprovalAsked) -> None:
        if approval.tool == "emacs-eval":  # Emacs shows and evaluates that code itself
            self.add_line(f"Refused {approval.description}: it needs Emacs", "notice")
            self.send_answer(approval.approval_id, "deny")
            return
        self.set_status("the agent asks for your approval")

        def answered(answer: str | None) -> None:
            choice = answer or "deny"
            self.add_line(f"{_ANSWERED.get(choice, choice)}: {approval.description}",
                          "notice")
            self.set_status("thinking…" if self.busy else "")
            self.send_answer(approval.approval_id, choice)

        self.push_screen(ApprovalScreen(approval), answered)

    def turn_over(self) -> None:
        self.busy = False
        self.reply, self.reply_text = None, ""
        self.turn_id = None
        self.set_status(f"session {self.session}")

    def add_line(self, text: str, kind: str) -> Static:
        line = Static(plain(text), classes=kind)
        self.query_one("#chat", VerticalScroll).mount(line)
        self.scroll_chat()
        return line

    def scroll_chat(self) -> None:
        self.query_one("#chat", VerticalScroll).scroll_end(animate=False)

    def show_error(self, kind: str, message: str) -> None:
        self.add_line(f"{kind}: {message}", "error")

    def set_status(self, text: str) -> None:
        self.query_one("#status", Static).update(plain(text))

    def show_panel(self, panel: Panel) -> None:
        self.query_one("#jobs", Static).update(plain("\n".join(panel.jobs) or "none"))
        self.query_one("#plans", Static).update(plain("\n".join(panel.plans) or "none"))
        cost = panel.cost + (f"\nmodel {panel.model}" if panel.model else "")
        self.query_one("#cost", Static).update(plain(cost or "nothing spent"))

    # -- keys ---------------------------------------------------------------------------------

    def action_cancel(self) -> None:
        if self.busy:
            self.set_status("cancelling…")
            self.send_cancel()

    def action_toggle_side(self) -> None:
        self.query_one("#side").toggle_class("hidden")

    def action_side_wider(self) -> None:
        self._side_width(+1)

    def action_side_narrower(self) -> None:
        self._side_width(-1)

    def _side_width(self, step: int) -> None:
        self.width_index = max(0, min(len(PANEL_WIDTHS) - 1, self.width_index + step))
        self.query_one("#side").styles.width = PANEL_WIDTHS[self.width_index]



_ANSWERED = {"allow": "Allowed once", "always": "Allowed always", "deny": "Denied"}
OUTPUT_PREVIEW = 200


def _tool_line(event: ToolEvent) -> tuple[str, str]:
    if isinstance(event, ToolCalled):
        args = ", ".join(f"{k}={v!r}" for k, v in (event.args or {}).items())
        return one_line(f"→ {event.name}({args})")[:OUTPUT_PREVIEW], "tool"
    if isinstance(event, ToolFinished):
        text = one_line(event.output or "")[:OUTPUT_PREVIEW]
        return (f"← {text}", "tool") if event.ok else (f"← failed: {text}", "tool-failed")
    return f"refused {event.name}: {event.reason}", "tool-failed"
