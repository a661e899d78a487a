"""Jobs the model made: marked where the model cannot unmark them.

A job the ``schedule`` tool writes carries ``:ORIGIN: model`` in its drawer, and its id
is recorded in the state directory (``<state>/model-jobs.json``, out of every tool's
reach), so removing the property does not remove the mark.  Like every job, it runs
only once the person approved its exact content (:mod:`passepartout.events.approval`).
Before that approval covered the whole heading, the person approved a model-made job's
prompt alone, sealed here (:meth:`ModelJobs.approved`); such a job's approval is carried
over once, when this version first finds it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import threading
from typing import Any

from passepartout.fsutil import atomic_write
from passepartout.security.trust import Trust

log = logging.getLogger(__name__)

RECORD = "model-jobs.json"
MADE, APPROVED = "model-job", "model-job-approved"


def _prompt_hash(prompt: str) -> str:
    return hashlib.sha256(prompt.encode("utf-8", "surrogatepass")).hexdigest()


class ModelJobs:
    """The record of model-made jobs and the person's approvals of their prompts."""

    def __init__(self, trust: Trust) -> None:
        self.trust = trust
        self.path = trust.state_dir / RECORD
        self._lock = threading.Lock()

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, UnicodeDecodeError) as err:
            log.error("the record of model-made jobs %s is unreadable: %s", self.path, err)
            return {}
        return {str(k): v for k, v in data.items() if isinstance(v, dict)} if isinstance(
            data, dict) else {}

    def _write(self, data: dict[str, dict[str, Any]]) -> None:
        atomic_write(self.path, json.dumps(data, indent=1, sort_keys=True), mode=0o600)

    def record(self, node_id: str, cron: str) -> None:
        """Mark ``node_id`` as a job the model made."""
        with self._lock:
            data = self._read()
            data[node_id] = {
                "cron": cron,
                "made": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
                "seal": self.trust.seal.sign(MADE, node_id, cron),
            }
            self._write(data)

    def made_by_model(self, node_id: str) -> bool:
        # Any entry counts, sealed or not: a forged one can only make a job ask.
        return node_id in self._read()

    def approved(self, node_id: str, prompt: str) -> bool:
        entry = self._read().get(node_id, {})
        return self.trust.seal.verify(entry.get("approved"), APPROVED, node_id,
                                      _prompt_hash(prompt))

    def approve(self, node_id: str, prompt: str) -> None:
        """The person approved this job with exactly this prompt."""
        with self._lock:
            data = self._read()
            entry = data.setdefault(node_id, {})
            entry["approved"] = self.trust.seal.sign(APPROVED, node_id, _prompt_hash(prompt))
            self._write(data)
