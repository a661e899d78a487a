"""What the security layer needs to trust records on disk: the agent's seal, where to
report a record that is not sealed, and whether this is the first start.

The first start is the start that finds no accepted-policy record in the state
directory: no record the agent sealed can exist yet, and nothing has run.  Then the
``policy.toml`` and the grants already there are taken as the person's (sealed once,
and reported in ``events.org`` so the person can check them); on every later start
only what carries the seal counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from passepartout.security.trust.alarms import Alarms
from passepartout.security.trust.seal import Seal

ACCEPTED_POLICY = "policy-accepted.json"


@dataclass
class Trust:
    state_dir: Path
    seal: Seal
    alarms: Alarms
    first_start: bool

    @classmethod
    def in_state(cls, state_dir: Path) -> Trust:
        state_dir = Path(state_dir)
        return cls(
            state_dir=state_dir,
            seal=Seal.in_state(state_dir),
            alarms=Alarms.in_state(state_dir),
            first_start=not (state_dir / ACCEPTED_POLICY).exists(),
        )

    @property
    def policy_record(self) -> Path:
        return self.state_dir / ACCEPTED_POLICY
