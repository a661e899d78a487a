"""Jobs the model made: marked, and asked before their first run.

A job the ``schedule`` tool writes carries ``:ORIGIN: model`` in its drawer, and its id
is recorded in the state directory (``<state>/model-jobs.json``, out of every tool's
reach), so removing the property does not remove the mark.  When such a job fires
and the person has not yet approved its exact prompt, it does not reach the model:
its first run becomes a Flight Plan (the action ``job:first-run`` with the job's id,
heading and prompt) in the approvals file, and the firing is reported in
``events.org``.  When the person sets the plan to APPROVED, the agent seals that
approval (id and the prompt's hash) and runs the job; later runs need no question,
until the prompt changes.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import threading
from collections.abc import Callable
from typing import Any

from passepartout.fsutil import atomic_write
from passepartout.loop.actions import Action
from passepartout.security.trust import Trust
from passepartout.signals import Signal

log = logging.getLogger(__name__)

RECORD = "model-jobs.json"
MADE, APPROVED = "model-job", "model-job-approved"
TARGET, VERB = "job", "first-run"
JOB_ORIGINS = frozenset({"cron", "hook"})


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

    def needs_first_approval(self, signal: Signal, marked: Callable[[str], bool]) -> bool:
        """True for the prompt of a model-made job (recorded, or ``marked`` with
        ``:ORIGIN: model`` in its file) whose prompt the person has not approved."""
        meta = signal.meta
        if signal.sensor != "user-input" or str(meta.get("origin", "")) not in JOB_ORIGINS:
            return False
        node_id = str(meta.get("heading") or "")
        if not node_id:
            return False
        if not (self.made_by_model(node_id) or marked(node_id)):
            return False
        return not self.approved(node_id, str(signal.payload.get("text", "")))


def first_run(signal: Signal, title: str = "") -> Action:
    """The action that stands for a model-made job's first run (a person approves it)."""
    meta = signal.meta
    return Action(
        TARGET,
        VERB,
        {
            "id": str(meta.get("heading") or ""),
            "heading": title,
            "origin": str(meta.get("origin", "")),
            "tier": str(meta.get("tier", "")),
            "prompt": str(signal.payload.get("text", "")),
        },
    )
