"""The vault: secrets by name, injected only at execution, masked everywhere else.

The secrets a tool may use are the ones the person declared in the config directory's
``.env``: its variables whose names look like a credential (``*_API_KEY``, ``*_TOKEN``,
``*PASSWORD*`` ...) or are listed in ``PASSEPARTOUT_SECRETS``; and, when
``PASSEPARTOUT_KEYRING_SERVICE`` names a service (and the ``keyring`` package is
installed), the system keyring's entries of that service.  The process environment is
never a source: the provider's own API key there cannot be asked for by name.  Its
credential-looking variables (and those ``PASSEPARTOUT_SECRETS`` lists) are only
*masked*, like the declared secrets.

A model only ever sees a secret's *name*: a tool argument may carry the placeholder
``{{secret:NAME}}``, which the tool resolves with :meth:`Vault.inject` right before it
runs (the gates ask the person first, see :mod:`passepartout.security.guard`).
Everything that leaves the process (logs, the audit, error and EPC replies, requests to
a model) goes through :func:`mask`, which replaces every form
:mod:`passepartout.security.vault.forms` knows (any case and separators, reversed,
rot13, hex and escapes, base64, base32, halves).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from passepartout.errors import PassepartoutError
from passepartout.security.vault.forms import SecretMatcher

log = logging.getLogger(__name__)

SECRET_NAME = re.compile(r"(?i)(?:API_?KEY|TOKEN|SECRET|PASSW(?:OR)?D|PASSPHRASE|CREDENTIAL|_AUTH)")
PLACEHOLDER = re.compile(r"\{\{secret:([A-Za-z_][A-Za-z0-9_]*)\}\}")
MIN_SECRET_LENGTH = 6  # shorter values would mask ordinary words
_VAULT_SETTINGS = frozenset({"PASSEPARTOUT_SECRETS", "PASSEPARTOUT_KEYRING_SERVICE"})


class VaultError(PassepartoutError):
    """A secret that is not in the vault, or a vault that cannot be read."""


def secret_names(value: Any) -> tuple[str, ...]:
    """The names of the ``{{secret:NAME}}`` placeholders in the strings of ``value``."""
    found: dict[str, None] = {}
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.update(dict.fromkeys(PLACEHOLDER.findall(item)))
        elif isinstance(item, Mapping):
            stack += [*item.keys(), *item.values()]
        elif isinstance(item, list | tuple):
            stack += list(item)
    return tuple(sorted(found))


def _is_secret(name: str, listed: set[str]) -> bool:
    return name not in _VAULT_SETTINGS and (name in listed or bool(SECRET_NAME.search(name)))


@dataclass
class Vault:
    """Named secrets (``secrets``: a tool may use them) and values that are only masked
    (``masked``: the process environment's credentials)."""

    secrets: dict[str, str] = field(default_factory=dict)
    keyring_service: str | None = None
    masked: dict[str, str] = field(default_factory=dict)
    _matcher: SecretMatcher = field(default_factory=SecretMatcher, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        self._rebuild()

    @classmethod
    def from_env(
        cls, env: Mapping[str, str], *, extra_names: tuple[str, ...] = ()
    ) -> Vault:
        """A vault whose secrets are the credential-like and listed names of ``env``
        (a declared set, such as a ``.env`` file's)."""
        listed = {n.strip() for n in env.get("PASSEPARTOUT_SECRETS", "").split(",") if n.strip()}
        listed.update(extra_names)
        chosen = {name: value for name, value in env.items() if value and _is_secret(name, listed)}
        return cls(chosen, keyring_service=env.get("PASSEPARTOUT_KEYRING_SERVICE") or None)

    @classmethod
    def from_config_dir(cls, config_dir: Path, environ: Mapping[str, str]) -> Vault:
        """The secrets declared in ``config_dir/.env``; ``environ``'s credentials are
        masked, never resolved (its settings still apply: the keyring service and the
        names ``PASSEPARTOUT_SECRETS`` lists)."""
        from passepartout.config import read_dotenv

        declared = read_dotenv(Path(config_dir) / ".env")
        settings = {**declared, **environ}
        listed = {
            n.strip() for n in settings.get("PASSEPARTOUT_SECRETS", "").split(",") if n.strip()
        }
        vault = cls.from_env(declared, extra_names=tuple(listed))
        vault.keyring_service = settings.get("PASSEPARTOUT_KEYRING_SERVICE") or None
        vault.masked = {
            name: value for name, value in environ.items()
            if value and _is_secret(name, listed) and declared.get(name) != value
        }
        vault._rebuild()
        return vault

    # -- names and values -------------------------------------------------------------

    def names(self) -> list[str]:
        """The secrets a tool may use (the keyring's are added once looked up)."""
        with self._lock:
            return sorted(self.secrets)

    def knows(self, name: str) -> bool:
        """Whether ``{{secret:name}}`` may resolve (a keyring is asked only at use)."""
        with self._lock:
            return name in self.secrets or self.keyring_service is not None

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
        with self._lock:
            named = [*self.secrets.items(), *self.masked.items()]
        matcher = SecretMatcher.of(named, min_length=MIN_SECRET_LENGTH)
        with self._lock:
            self._matcher = matcher

    @property
    def masking(self) -> bool:
        """Whether there is anything to mask."""
        return bool(self._matcher)

    def mask(self, text: str) -> str:
        """``text`` with every known form of every secret replaced by ``[secret:NAME]``."""
        return self._matcher.mask(text)

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

