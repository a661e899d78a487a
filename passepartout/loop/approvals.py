"""The one approval path: every "ask" of the gates comes here, and nowhere else.

A signal from a person's face (Emacs, the terminal) is asked on that face's channel,
with one time limit (``PASSEPARTOUT_APPROVAL_TIMEOUT``): the request carries it, so
the face shows it and never waits longer, and a face that hangs anyway is cut off
here; no answer is a no.  A background signal (cron, hook, heartbeat), or one whose
face is gone, goes to the BACKGROUND_APPROVAL hook the security layer attaches (a
Flight Plan), and is refused when there is none; so does one whose channel says no
person can be asked (a client program's turn while no face is attached).  The
APPROVAL_ANSWERED hooks (the audit, the clearance of what was approved) hear every
answer a person gave.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING

from passepartout.loop.actions import ApprovalRequest
from passepartout.loop.hooks import APPROVAL_ANSWERED, BACKGROUND_APPROVAL, Hooks

if TYPE_CHECKING:
    from passepartout.loop.events import Channel
    from passepartout.signals import Signal

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 300.0


def is_background(signal: Signal) -> bool:
    """A signal no person is waiting on: nobody to ask now."""
    return signal.turn.background


class Approvals:
    """Asks the person whose face sent the signal, or hands the request on."""

    def __init__(self, channels: Mapping[str, Channel], *, hooks: Hooks | None = None,
                 timeout: float = DEFAULT_TIMEOUT) -> None:
        self.channels = channels
        self.hooks = hooks or Hooks()
        self.timeout = timeout

    def __call__(self, request: ApprovalRequest) -> bool:
        request = dataclasses.replace(request, timeout=self.timeout)
        signal = request.signal
        channel = self.channels.get(signal.turn.face or "")
        can_ask = getattr(channel, "can_ask", None)
        if channel is None or is_background(signal) or (
                callable(can_ask) and not can_ask(signal)):
            background = self.hooks.one(BACKGROUND_APPROVAL)
            if background is None:
                log.info("nobody to ask about %s: denied", request.action.describe())
                return False
            return background(request) is True
        granted = self.ask_on(channel, request)
        log.info("approval of %s: %s", request.action.describe(),
                 "granted" if granted else "denied")
        for heard in self.hooks.chain(APPROVAL_ANSWERED):
            try:
                heard(request, granted)
            except Exception as err:  # the answer stands; what failed to note it says so
                log.error("noting the answer to %s failed: %s", request.describe(), err)
        return granted

    def ask_on(self, channel: Channel, request: ApprovalRequest) -> bool:
        """Ask ``channel`` itself, within the one time limit (no Flight Plan, no audit:
        the caller records the answer, as the skill-trust question does)."""
        request = dataclasses.replace(request, timeout=self.timeout)
        answer: list[bool] = []

        def ask() -> None:
            try:
                answer.append(channel.approve(request) is True)
            except Exception as err:  # a channel that fails (disconnect, EOF) is a no
                log.warning("approval of %s failed: %s", request.action.describe(), err)

        # A daemon thread: a person who never answers must not keep the process alive.
        thread = threading.Thread(target=ask, name="approval", daemon=True)
        thread.start()
        thread.join(self.timeout)
        if thread.is_alive():
            log.warning("no answer to %s within %g s: denied", request.describe(), self.timeout)
            return False
        return bool(answer) and answer[0]
