"""The ``policy.toml`` the person accepted, kept sealed in the state directory.

A rule written into ``policy.toml`` by anything but the person must not take effect.
The agent keeps a copy of the policy file the person last accepted, with its hash
sealed (``<state>/policy-accepted.json``).  When ``policy.toml`` differs from it, the
file is not used as it is: the accepted rules stay in force, the change is reported in
``events.org``, and only what makes the policy stricter applies at once (its deny and
ask rules, its protected and secret places, its always-ask tools), since that can only
take permissions away.  ``passepartout policy accept``, typed by the person in a
terminal, shows the change and seals the new file.

At the first start (no record yet, nothing has run) the file found is accepted once and
reported, so the person can check it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
from dataclasses import dataclass
from typing import Any

from passepartout.fsutil import atomic_write
from passepartout.security.trust import Trust

log = logging.getLogger(__name__)

PURPOSE = "policy"
ABSENT = "absent"  # what is sealed when the accepted state is "no policy file"


@dataclass(frozen=True)
class Accepted:
    """The last accepted policy: ``valid`` False when there is none (or it was damaged)."""

    valid: bool
    text: str | None


def digest(text: str | None) -> str:
    return ABSENT if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


class PolicyTrust:
    """Reads and writes the accepted-policy record of one state directory."""

    def __init__(self, trust: Trust) -> None:
        self.trust = trust

    def accepted(self) -> Accepted:
        path = self.trust.policy_record
        try:
            data: Any = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return Accepted(False, None)
        except (OSError, ValueError, UnicodeDecodeError) as err:
            self._damaged(f"cannot be read: {err}")
            return Accepted(False, None)
        text = data.get("text") if isinstance(data, dict) else None
        if not isinstance(data, dict) or not (text is None or isinstance(text, str)):
            self._damaged("is not a policy record")
            return Accepted(False, None)
        sealed = digest(text)
        if data.get("sha256") != sealed or not self.trust.seal.verify(
            data.get("seal"), PURPOSE, sealed
        ):
            self._damaged("does not carry the agent's seal (written by something else)")
            return Accepted(False, None)
        return Accepted(True, text)

    def accept(self, text: str | None, how: str) -> None:
        """Seal ``text`` (None: no policy file) as the accepted policy."""
        sealed = digest(text)
        record = {
            "text": text,
            "sha256": sealed,
            "accepted": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
            "how": how,
            "seal": self.trust.seal.sign(PURPOSE, sealed),
        }
        atomic_write(self.trust.policy_record, json.dumps(record, indent=1), mode=0o600)
        self.trust.first_start = False
        log.info("policy accepted (%s): %s", how, sealed[:12])

    def report_first_start(self, text: str | None) -> None:
        if text is None:
            return
        self.trust.alarms.report(
            "policy.toml accepted at the first start",
            "The rules found in policy.toml at the first start are in force.  From now on "
            "a changed policy.toml is used only after you run `passepartout policy accept` "
            f"in a terminal.  Accepted file's sha256: {digest(text)}",
        )

    def report_pending(self, text: str | None, problem: str | None = None) -> None:
        """Tell the person (once per version of the file) that a change waits for them."""
        why = f"It cannot be read ({problem}); " if problem else ""
        self.trust.alarms.report(
            "policy.toml changed: not in force until you accept it",
            f"{why}The last accepted rules stay in force; of the changed file only what "
            "is stricter applies now (deny and ask rules, protected and secret places, "
            "tools that always ask).  If you made the change, run `passepartout policy "
            "accept` in a terminal to review and accept it.  Changed file's sha256: "
            f"{digest(text)}",
            key=f"policy-pending:{digest(text)}",
        )

    def _damaged(self, why: str) -> None:
        self.trust.alarms.report(
            "the accepted policy record is not trusted",
            f"{self.trust.policy_record} {why}.  The built-in defaults and the stricter "
            "parts of policy.toml are in force until you run `passepartout policy accept`.",
            key=f"policy-record:{why}",
        )
