"""The four answers ACP offers for a permission request, and what each means to the
daemon: allow or reject, once or always (a standing grant scoped to the action, written
by the daemon exactly as an approval answered in Emacs or the terminal would)."""

from __future__ import annotations

from dataclasses import dataclass

from acp.schema import AllowedOutcome, PermissionOption, RequestPermissionResponse

OPTIONS = [
    PermissionOption(option_id="allow-once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="allow-always", name="Allow always (a standing grant)",
                     kind="allow_always"),
    PermissionOption(option_id="reject-once", name="Reject", kind="reject_once"),
    PermissionOption(option_id="reject-always", name="Reject always (a standing grant)",
                     kind="reject_always"),
]


@dataclass(frozen=True)
class Answer:
    yes: bool
    always: bool


NO = Answer(yes=False, always=False)
_ANSWERS = {"allow-once": Answer(True, False), "allow-always": Answer(True, True),
            "reject-once": NO, "reject-always": Answer(False, True)}


def answer_of(response: RequestPermissionResponse | None) -> Answer:
    """The person's answer; a cancelled request or an unknown option is a no."""
    outcome = response.outcome if response is not None else None
    if not isinstance(outcome, AllowedOutcome):
        return NO
    return _ANSWERS.get(outcome.option_id, NO)
