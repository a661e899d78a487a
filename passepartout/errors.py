"""The error hierarchy (seed 001), with structured fields.

Every error carries a human ``message`` and a stable ``kind``; :meth:`to_reply` is the
only form that crosses a process boundary, so no ``repr`` (which could carry a secret)
ever leaves the server.
"""

from __future__ import annotations

from typing import Any


class PassepartoutError(Exception):
    """Root of the hierarchy."""

    kind = "error"

    def __init__(self, message: str, **fields: Any) -> None:
        super().__init__(message)
        self.message = message
        self.fields = fields

    def __getattr__(self, name: str) -> Any:
        fields = self.__dict__.get("fields", {})
        if name in fields:
            return fields[name]
        raise AttributeError(name)

    def to_reply(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": self.message}


class ConfigError(PassepartoutError):
    """A setting has a bad value; ``variable`` names it."""

    kind = "config-error"


class PipelineError(PassepartoutError):
    """Any failure during Perceive -> Reason -> Act (``signal`` when known)."""

    kind = "pipeline-error"


class LLMError(PipelineError):
    """Provider failure: ``provider``, ``cascade``, ``attempt_count``."""

    kind = "llm-error"


class GateError(PipelineError):
    """A gate refused: ``gate_name``, ``rejected_action``."""

    kind = "gate-error"


class BudgetError(PipelineError):
    """A spending cap would be passed: ``remaining``, ``requested`` (USD)."""

    kind = "budget-error"


class ProtocolError(PassepartoutError):
    """A malformed message or frame: ``raw_message``."""

    kind = "protocol-error"


class DaemonError(PassepartoutError):
    """A face's call to the daemon: it cannot be reached, or refused a call (``kind`` says how)."""

    kind = "daemon-error"

    def __init__(self, message: str, kind: str = "daemon-error") -> None:
        super().__init__(message)
        self.kind = kind


class SkillError(PassepartoutError):
    """A skill could not be found, vetted, ordered or loaded: ``skill``."""

    kind = "skill-error"


class BootError(PassepartoutError):
    """The agent cannot start safely (a mandatory skill is missing or broken)."""

    kind = "boot-error"
