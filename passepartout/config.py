"""Configuration from the environment and the config directory's ``.env``.

Every setting is read and checked once, at start; a bad value is a
:class:`~passepartout.errors.ConfigError` naming the variable, not a traceback later.
The process environment wins over ``.env``.
"""

from __future__ import annotations

import io
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from passepartout.errors import ConfigError

log = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_MANDATORY_SKILLS = ("policy", "dispatcher")

# Settings read by skills from ``Config.extra``; their values are checked here, at start.
NUMERIC_EXTRAS = {
    "PASSEPARTOUT_APPROVAL_TIMEOUT": 0.01,
    "PASSEPARTOUT_CONNECT_TIMEOUT": 0.01,
    "PASSEPARTOUT_READ_TIMEOUT": 0.01,
    "PASSEPARTOUT_MAX_OUTPUT_TOKENS": 1,
    "PASSEPARTOUT_AUDIT_MAX_BYTES": 4096,
    "PASSEPARTOUT_SHELL_TIMEOUT": 0.01,
    "PASSEPARTOUT_MEMORY_SNAPSHOTS": 1,
}


def _xdg(var: str, fallback: str, env: Mapping[str, str]) -> Path:
    base = env.get(var) or str(Path.home() / fallback)
    return Path(base) / "passepartout"


@dataclass(frozen=True)
class Config:
    """Every setting of the agent (see README, Configuration)."""

    model: str | None = None
    model_cognition: str | None = None
    model_reasoning: str | None = None
    fallback_models: tuple[str, ...] = ()
    home: Path = field(default_factory=lambda: Path.home() / ".local/state/passepartout")
    config_dir: Path = field(default_factory=lambda: Path.home() / ".config/passepartout")
    memex_dir: Path = field(default_factory=lambda: Path.home() / "memex")
    memex_scan_dirs: tuple[str, ...] = ("projects", "system")
    skills_dir: Path | None = None
    heartbeat_interval: float = 60.0
    memory_auto_save_interval: float = 300.0
    context_max_tokens: int = 32_000
    budget_usd: float | None = None
    mandatory_skills: tuple[str, ...] = DEFAULT_MANDATORY_SKILLS
    skill_load_timeout: float = 5.0
    extra: Mapping[str, str] = field(default_factory=dict)

    @property
    def approval_timeout(self) -> float:
        """How long a person has to answer an approval: the one limit, every face."""
        return float(self.extra.get("PASSEPARTOUT_APPROVAL_TIMEOUT") or 300.0)

    @property
    def state_dir(self) -> Path:
        return self.home

    @property
    def log_file(self) -> Path:
        return self.home / "passepartout.log"

    @classmethod
    def load(cls, env: Mapping[str, str] | None = None) -> Config:
        """Read the settings from ``env`` (default: ``os.environ`` plus ``.env``)."""
        environ = dict(os.environ if env is None else env)
        config_dir = (
            Path(environ["PASSEPARTOUT_CONFIG_DIR"]).expanduser()
            if environ.get("PASSEPARTOUT_CONFIG_DIR")
            else _xdg("XDG_CONFIG_HOME", ".config", environ)
        )
        merged = {**read_dotenv(config_dir / ".env"), **environ}
        return cls.from_mapping(merged, config_dir=config_dir)

    @classmethod
    def from_mapping(cls, env: Mapping[str, str], *, config_dir: Path | None = None) -> Config:
        for name, minimum in NUMERIC_EXTRAS.items():
            _number(env, name, 0.0, float, minimum=minimum)
        home = (
            Path(env["PASSEPARTOUT_HOME"]).expanduser()
            if env.get("PASSEPARTOUT_HOME")
            else _xdg("XDG_STATE_HOME", ".local/state", env)
        )
        return cls(
            model=env.get("PASSEPARTOUT_MODEL") or None,
            model_cognition=env.get("PASSEPARTOUT_MODEL_COGNITION") or None,
            model_reasoning=env.get("PASSEPARTOUT_MODEL_REASONING") or None,
            fallback_models=_split(env.get("PASSEPARTOUT_FALLBACK_MODELS", "")),
            home=home,
            config_dir=config_dir or _xdg("XDG_CONFIG_HOME", ".config", env),
            memex_dir=Path(env.get("MEMEX_DIR") or Path.home() / "memex").expanduser(),
            memex_scan_dirs=_split(env.get("MEMEX_SCAN_DIRS", "projects,system")),
            skills_dir=Path(env["SKILLS_DIR"]).expanduser() if env.get("SKILLS_DIR") else None,
            heartbeat_interval=_number(env, "HEARTBEAT_INTERVAL", 60.0, float, minimum=0.01),
            memory_auto_save_interval=_number(
                env, "MEMORY_AUTO_SAVE_INTERVAL", 300.0, float, minimum=0.01
            ),
            context_max_tokens=_number(env, "CONTEXT_MAX_TOKENS", 32_000, int, minimum=256),
            budget_usd=_optional_number(env, "PASSEPARTOUT_BUDGET_USD"),
            mandatory_skills=_split(
                env.get("PASSEPARTOUT_MANDATORY_SKILLS", ",".join(DEFAULT_MANDATORY_SKILLS))
            ),
            skill_load_timeout=_number(env, "SKILL_LOAD_TIMEOUT", 5.0, float, minimum=0.1),
            extra={k: v for k, v in env.items() if k.startswith("PASSEPARTOUT_")},
        )


def read_dotenv(path: Path) -> dict[str, str]:
    """The ``KEY=value`` pairs of a ``.env`` file (none when it does not exist); a line
    that is not one is named, with its file, and left out."""
    if not path.is_file():
        return {}
    from dotenv import dotenv_values  # python-dotenv, already required by litellm
    from dotenv.parser import parse_stream

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"{path} cannot be read: {err}", variable=str(path)) from None
    bad = [str(b.original.line) for b in parse_stream(io.StringIO(text)) if b.error]
    if bad:
        log.warning("%s: line%s %s %s not KEY=value and left out", path, "s" * (len(bad) > 1),
                    ", ".join(bad), "are" if len(bad) > 1 else "is")
    logging.getLogger("dotenv.main").addFilter(_OwnWarning())
    return {k: v for k, v in dotenv_values(stream=io.StringIO(text)).items() if v is not None}


class _OwnWarning(logging.Filter):
    """python-dotenv's own line about a bad line names no file: ours above does."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("python-dotenv could not parse")

    def __eq__(self, other: object) -> bool:  # added once, however often .env is read
        return isinstance(other, _OwnWarning)

    def __hash__(self) -> int:
        return hash(_OwnWarning)


def _split(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.replace(";", ",").split(",") if part.strip())


def _number(
    env: Mapping[str, str],
    name: str,
    default: T,
    kind: Callable[[str], T],
    *,
    minimum: float,
) -> T:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a number, not {raw!r}", variable=name) from None
    if float(value) < minimum:  # type: ignore[arg-type]
        raise ConfigError(f"{name} must be at least {minimum}, not {raw}", variable=name)
    return value


def _optional_number(env: Mapping[str, str], name: str) -> float | None:
    if not env.get(name, "").strip():
        return None
    return _number(env, name, 0.0, float, minimum=0.0)
