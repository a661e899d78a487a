"""The vault: secrets by name, injected only at execution, masked everywhere else.

Secrets come from the config directory's ``.env`` (and the process environment): every
variable whose name looks like a credential (``*_API_KEY``, ``*_TOKEN``, ``*PASSWORD*``
...) plus the names listed in ``PASSEPARTOUT_SECRETS``; optionally the system keyring
(``PASSEPARTOUT_KEYRING_SERVICE``) when the ``keyring`` package is installed.

A model only ever sees a secret's *name*: a tool argument may carry the placeholder
``{{secret:NAME}}``, which the tool resolves with :meth:`Vault.inject` right before it
runs.  Everything that leaves the process (logs, the audit, error and EPC replies,
requests to a model) goes through :func:`mask`, which replaces a secret's raw, base64
(standard and URL-safe, at any byte alignment), hex and URL-encoded forms.
"""

from __future__ import annotations

import base64
import logging
import re
import threading
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from passepartout.errors import PassepartoutError

log = logging.getLogger(__name__)

SECRET_NAME = re.compile(r"(?i)(?:API_?KEY|TOKEN|SECRET|PASSW(?:OR)?D|PASSPHRASE|CREDENTIAL|_AUTH)")
PLACEHOLDER = re.compile(r"\{\{secret:([A-Za-z_][A-Za-z0-9_]*)\}\}")
MIN_SECRET_LENGTH = 6  # shorter values would mask ordinary words
_MIN_FORM_LENGTH = 6
_LONG_TEXT = 4096
_VAULT_SETTINGS = frozenset({"PASSEPARTOUT_SECRETS", "PASSEPARTOUT_KEYRING_SERVICE"})


class VaultError(PassepartoutError):
    """A secret that is not in the vault, or a vault that cannot be read."""


def _b64_cores(raw: bytes) -> list[str]:
    """The base64 characters that depend on ``raw`` alone, for each of 3 byte alignments."""
    forms: list[str] = []
    for offset in range(3):
        padded = b"\0" * offset + raw
        skip = {0: 0, 1: 2, 2: 3}[offset]
        end = (len(padded) * 8) // 6
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            core = encode(padded).decode("ascii")[skip:end]
            if len(core) >= _MIN_FORM_LENGTH:
                forms.append(core)
    return forms


def encoded_forms(value: str) -> list[str]:
    """Every form of ``value`` that :meth:`Vault.mask` hides."""
    raw = value.encode("utf-8")
    forms = [value, raw.hex(), raw.hex().upper(), *_b64_cores(raw)]
    quoted = urllib.parse.quote(value, safe="")
    if quoted != value:
        forms.append(quoted)
    return [f for f in forms if len(f) >= _MIN_FORM_LENGTH]


@dataclass
class Vault:
    """Named secrets and the masks derived from them."""

    secrets: dict[str, str] = field(default_factory=dict)
    keyring_service: str | None = None
    _pattern: re.Pattern[str] | None = field(default=None, init=False, repr=False)
    _owner: dict[str, str] = field(default_factory=dict, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        self._rebuild()

    @classmethod
    def from_env(
        cls, env: Mapping[str, str], *, extra_names: tuple[str, ...] = ()
    ) -> Vault:
        """The secrets of ``env``: credential-like names and ``PASSEPARTOUT_SECRETS``."""
        listed = {n.strip() for n in env.get("PASSEPARTOUT_SECRETS", "").split(",") if n.strip()}
        listed.update(extra_names)
        chosen = {
            name: value
            for name, value in env.items()
            if value
            and name not in _VAULT_SETTINGS
            and (name in listed or SECRET_NAME.search(name))
        }
        return cls(chosen, keyring_service=env.get("PASSEPARTOUT_KEYRING_SERVICE") or None)

    @classmethod
    def from_config_dir(cls, config_dir: Path, environ: Mapping[str, str]) -> Vault:
        """The vault of a config directory's ``.env`` merged under the process environment."""
        from passepartout.config import read_dotenv

        return cls.from_env({**read_dotenv(Path(config_dir) / ".env"), **environ})

    # -- names and values -------------------------------------------------------------

    def names(self) -> list[str]:
        with self._lock:
            return sorted(self.secrets)

    def add(self, name: str, value: str) -> None:
        with self._lock:
            self.secrets[name] = value
        self._rebuild()

    def get(self, name: str) -> str:
        """The secret called ``name`` (the keyring is asked when it is not in ``.env``)."""
        with self._lock:
            value = self.secrets.get(name)
        if value is None and self.keyring_service:
            value = _from_keyring(self.keyring_service, name)
            if value is not None:
                self.add(name, value)
        if value is None:
            raise VaultError(f"there is no secret named {name!r} in the vault", secret=name)
        return value

    def inject(self, text: str) -> str:
        """Replace every ``{{secret:NAME}}`` in ``text`` by the secret (execution only)."""
        return PLACEHOLDER.sub(lambda m: self.get(m.group(1)), text)

    def inject_args(self, value: Any) -> Any:
        """:meth:`inject` through the strings of a tool's arguments (dicts, lists)."""
        if isinstance(value, str):
            return self.inject(value)
        if isinstance(value, dict):
            return {k: self.inject_args(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.inject_args(v) for v in value)
        return value

    # -- masking ------------------------------------------------------------------------

    def _rebuild(self) -> None:
        owner: dict[str, str] = {}
        for name, value in sorted(self.secrets.items()):
            if value is None or len(value) < MIN_SECRET_LENGTH:
                continue
            for form in encoded_forms(value):
                owner.setdefault(form, name)
        pattern = (
            re.compile("|".join(re.escape(f) for f in sorted(owner, key=len, reverse=True)))
            if owner
            else None
        )
        with self._lock:
            self._owner, self._pattern = owner, pattern

    def mask(self, text: str) -> str:
        """``text`` with every known form of every secret replaced by ``[secret:NAME]``."""
        pattern, owner = self._pattern, self._owner
        if pattern is None or not text:
            return text
        # A long text (a file, a buffer) rarely holds a secret: substring searches say
        # so in a tenth of the time the alternation takes to scan it (3 ms per MB).
        if len(text) > _LONG_TEXT and not any(form in text for form in owner):
            return text
        return pattern.sub(lambda m: f"[secret:{owner[m.group(0)]}]", text)

    def mask_value(self, value: Any) -> Any:
        """:meth:`mask` through a structure (dicts, lists, tuples); other values unchanged."""
        if isinstance(value, str):
            masked = self.mask(value)
            return value if masked == value else masked  # keeps str subclasses (Keyword)
        if isinstance(value, dict):
            return {k: self.mask_value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.mask_value(v) for v in value)
        return value


def _from_keyring(service: str, name: str) -> str | None:
    try:
        import keyring
    except ImportError:
        return None
    try:
        value = keyring.get_password(service, name)
    except Exception as err:  # a locked or absent keyring backend is "no secret"
        log.warning("keyring lookup of %s failed: %s", name, type(err).__name__)
        return None
    return value if isinstance(value, str) else None


# -- the process-wide vault ---------------------------------------------------------------

_current = Vault()
_current_lock = threading.Lock()


def get_vault() -> Vault:
    return _current


def set_vault(vault: Vault) -> Vault:
    """Make ``vault`` the one :func:`mask` uses (the policy skill does this at boot)."""
    global _current
    with _current_lock:
        _current = vault
    return vault


def mask(text: str) -> str:
    """Mask every secret of the process-wide vault in ``text``."""
    return _current.mask(text)


def mask_value(value: Any) -> Any:
    return _current.mask_value(value)


# -- logs ---------------------------------------------------------------------------------


class MaskingFilter(logging.Filter):
    """A handler filter that masks the formatted message and traceback of each record."""

    def filter(self, record: logging.LogRecord) -> bool:
        _mask_record(record)
        return True


def _mask_record(record: logging.LogRecord) -> None:
    if _current._pattern is None:
        return
    try:
        message = record.getMessage()
    except Exception:  # a bad format string: leave it for logging's own error path
        return
    masked = mask(message)
    if masked != message:
        record.msg, record.args = masked, None
    if record.exc_info and not record.exc_text:
        record.exc_text = mask(logging.Formatter().formatException(record.exc_info))
    elif record.exc_text:
        record.exc_text = mask(record.exc_text)


_installed = False


def install_log_masking() -> None:
    """Mask secrets in every log record, whichever handler writes it.

    The record factory is wrapped (it sees records of every logger, also those of
    handlers added later), and the root logger's present handlers get the filter too.
    """
    global _installed
    with _current_lock:
        if _installed:
            return
        _installed = True
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        _mask_record(record)
        return record

    logging.setLogRecordFactory(factory)
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, MaskingFilter) for f in handler.filters):
            handler.addFilter(MaskingFilter())

