"""The agent's seal: a MAC over what the person approved or trusts.

A Flight Plan, a grant, the accepted policy file and a trusted skill's hash are written
with a seal made from a key that only the agent process reads (a 0600 file in its state
directory, which every tool refuses and the sandbox hides).  Text that anything else
wrote (the model through a tool, a command in the sandbox) cannot carry a valid seal,
so it is refused and reported instead of trusted.

Each use names its *purpose*, so a seal made for one kind of record is never valid for
another (a skill's hash cannot be replayed as a grant).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

from passepartout.errors import PassepartoutError

KEY_BYTES = 32
_SEPARATOR = b"\x1f"


class SealError(PassepartoutError):
    """The key file cannot be read or made."""

    kind = "seal"


class Seal:
    """Signs and checks records with the agent's key (created on first use)."""

    def __init__(self, key_file: Path) -> None:
        self.key_file = key_file
        self._key = _load_or_create(key_file)

    @classmethod
    def in_state(cls, state_dir: Path) -> Seal:
        """The seal whose key lives in ``state_dir/keys/seal.key``."""
        return cls(state_dir / "keys" / "seal.key")

    def sign(self, purpose: str, *parts: str) -> str:
        """A hex MAC over ``parts`` for ``purpose``."""
        message = _SEPARATOR.join(p.encode("utf-8", "surrogatepass") for p in (purpose, *parts))
        return hmac.new(self._key, message, hashlib.sha256).hexdigest()

    def verify(self, mac: str | None, purpose: str, *parts: str) -> bool:
        """True only when ``mac`` is this key's seal over exactly ``parts`` for ``purpose``."""
        if not mac or not isinstance(mac, str):
            return False
        return hmac.compare_digest(mac.strip().lower(), self.sign(purpose, *parts))


def _load_or_create(path: Path) -> bytes:
    try:
        key = path.read_bytes()
        if len(key) == KEY_BYTES:
            return key
        raise SealError(f"the seal key {path} is damaged ({len(key)} bytes); remove it")
    except FileNotFoundError:
        pass
    except OSError as err:
        raise SealError(f"cannot read the seal key {path}: {err.strerror}") from None
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        key = secrets.token_bytes(KEY_BYTES)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(key)
            out.flush()
            os.fsync(out.fileno())
        try:
            os.link(tmp, path)  # first writer wins; a concurrent start reads its key
        except FileExistsError:
            pass
        finally:
            tmp.unlink(missing_ok=True)
        return _load_or_create(path)
    except OSError as err:
        raise SealError(f"cannot create the seal key {path}: {err.strerror}") from None
