"""The skills a person trusts: each by name and exact sha256, sealed by the agent.

The records live in ``<state>/trusted-skills.json`` (the state directory every tool
refuses and the sandbox hides), each with the agent's seal (purpose ``"skill"``) over
its name and hash.  A record anything else wrote, or edited, has no valid seal: it is
ignored and logged, so the skill waits for the person again.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from passepartout.security.trust.records import record_list, write_records
from passepartout.security.trust.seal import Seal

log = logging.getLogger(__name__)

PURPOSE = "skill"
FILE_NAME = "trusted-skills.json"


@dataclass(frozen=True)
class TrustRecord:
    name: str
    sha256: str
    path: str
    trusted_at: float


class TrustStore:
    """Read and add sealed trust records in one state directory."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = Path(state_dir)
        self.path = self.state_dir / FILE_NAME
        self._seal: Seal | None = None
        self._lock = threading.Lock()

    @property
    def seal(self) -> Seal:
        if self._seal is None:  # the key is read (or made) only when a record is needed
            self._seal = Seal.in_state(self.state_dir)
        return self._seal

    def _raw(self) -> list[dict[str, object]]:
        return record_list(self.path, "skill trust records", "skills")

    def records(self) -> list[TrustRecord]:
        """The records whose seal is the agent's; the others are logged and left out."""
        valid: list[TrustRecord] = []
        for entry in self._raw():
            name, digest = str(entry.get("name", "")), str(entry.get("sha256", ""))
            if not self.seal.verify(str(entry.get("seal", "")), PURPOSE, name, digest):
                log.warning("ignoring a skill trust record for %r without the agent's seal", name)
                continue
            stamp = entry.get("trusted_at")
            valid.append(
                TrustRecord(
                    name, digest, str(entry.get("path", "")),
                    float(stamp) if isinstance(stamp, int | float) else 0.0,
                )
            )
        return valid

    def is_trusted(self, name: str, sha256: str) -> bool:
        return any(r.name == name and r.sha256 == sha256 for r in self.records())

    def trust(self, name: str, sha256: str, path: Path | str) -> None:
        """Record that the person trusts ``name`` with exactly this content."""
        with self._lock:
            kept = [
                e for e in self._raw()
                if not (e.get("name") == name and e.get("sha256") == sha256)
            ]
            kept.append(
                {
                    "name": name,
                    "sha256": sha256,
                    "path": str(path),
                    "trusted_at": time.time(),
                    "seal": self.seal.sign(PURPOSE, name, sha256),
                }
            )
            write_records(self.path, {"skills": kept})
        log.info("skill %s trusted with sha256 %s", name, sha256)
