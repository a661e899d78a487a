"""A bearer token kept for an HTTP face on 127.0.0.1 (``passepartout mcp --http``,
``passepartout openai``), and the gate that refuses a request without it.

The token lives in a 0600 file of the person's, the same across restarts (a configured
client keeps working), replaced only when asked (``--new-token``); the file is read
without following a symlink, and one that others may read is refused.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path
from typing import Any

from passepartout.errors import PassepartoutError


def kept_token(path: Path, *, rotate: bool = False) -> str:
    """The token in ``path`` when it is a regular 0600 file of ours (read without
    following a symlink), else a new one written there; ``rotate``: always a new one."""
    if not rotate:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            fd = -1
        except OSError as err:
            raise PassepartoutError(f"cannot read the token file {path}: {err.strerror} "
                                    "(a symlink is refused); remove it or pass "
                                    "--new-token") from None
        if fd >= 0:
            with os.fdopen(fd, "r", encoding="utf-8", errors="replace") as handle:
                info = os.fstat(handle.fileno())
                token = handle.read(4096).strip()
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or (
                    info.st_mode & 0o077):
                raise PassepartoutError(
                    f"the token file {path} is not a private file of yours (0600); remove "
                    "it or pass --new-token")
            if len(token) >= 32:
                return token
    token = secrets.token_urlsafe(32)
    write_token(path, token)
    return token


def write_token(path: Path, token: str) -> None:
    """A fresh token in a new 0600 file (an old one is replaced, never followed)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(token + "\n")
    os.replace(tmp, path)


class BearerGate:
    """ASGI: a request without ``Authorization: Bearer TOKEN`` gets 401 and nothing else
    (``body`` of ``content_type``: the refusal in the words the face's clients read)."""

    def __init__(self, app: Any, token: str, *, body: bytes = b"a bearer token is needed\n",
                 content_type: bytes = b"text/plain") -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()
        self.body = body
        self.content_type = content_type

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        import hmac

        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", self.content_type),
                                        (b"www-authenticate",
                                         b'Bearer realm="passepartout"')]})
                await send({"type": "http.response.body", "body": self.body})
                return
        await self.app(scope, receive, send)
