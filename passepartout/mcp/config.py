"""``$PASSEPARTOUT_CONFIG_DIR/mcp.json``: the MCP servers whose tools the model may ask
for, in the common ``mcpServers`` format (as Claude Desktop and Claude Code read it)::

    {"mcpServers": {
        "weather": {"command": "uvx", "args": ["weather-mcp"], "env": {"UNITS": "metric"}},
        "notes": {"url": "http://127.0.0.1:8765/mcp", "headers": {"Authorization": "Bearer ..."}},
        "old": {"command": "x", "disabled": true}}}

A server is a stdio command (``command``, ``args``, ``env``, ``cwd``) or a streamable
HTTP endpoint (``url``, ``headers``).  A mistake in the file is a clear error naming the
server and the key; the other servers still load.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from passepartout.errors import ConfigError

FILE_NAME = "mcp.json"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")
_STDIO_KEYS = frozenset({"command", "args", "env", "cwd", "type", "disabled", "timeout"})
_HTTP_KEYS = frozenset({"url", "headers", "type", "disabled", "timeout"})


@dataclass(frozen=True)
class ServerSpec:
    """One configured server: how to reach it, and how long a call may take."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    timeout: float = 60.0

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"

    def where(self) -> str:
        """What the person configured, for a status line (never a header's value)."""
        return self.url or " ".join([self.command or "", *self.args]).strip()


@dataclass(frozen=True)
class McpConfig:
    """The servers that load, and the entries that could not be read."""

    servers: tuple[ServerSpec, ...] = ()
    errors: tuple[str, ...] = ()
    path: Path | None = None


def load(config_dir: Path) -> McpConfig:
    """Read ``mcp.json`` of ``config_dir`` (no file: no servers)."""
    path = Path(config_dir) / FILE_NAME
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return McpConfig(path=path)
    except OSError as err:
        return McpConfig(errors=(f"{path}: cannot be read ({err.strerror})",), path=path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        return McpConfig(errors=(f"{path}: not JSON (line {err.lineno}: {err.msg})",), path=path)
    entries = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(entries, dict):
        return McpConfig(errors=(f"{path}: needs an object \"mcpServers\"",), path=path)
    servers: list[ServerSpec] = []
    errors: list[str] = []
    for name, entry in entries.items():
        try:
            spec = parse_entry(str(name), entry)
        except ConfigError as err:
            errors.append(f"{path}: server {str(name)[:40]!r}: {err.message}")
            continue
        if spec is not None:
            servers.append(spec)
    return McpConfig(tuple(servers), tuple(errors), path)


def parse_entry(name: str, entry: Any) -> ServerSpec | None:
    """One entry of ``mcpServers``; None when it is disabled."""
    if not _NAME.match(name):
        raise ConfigError("a server's name is letters, digits, '_', '.', '-' (at most 40)")
    if not isinstance(entry, dict):
        raise ConfigError("must be an object")
    if entry.get("disabled") is True:
        return None
    kind = str(entry.get("type") or ("http" if "url" in entry else "stdio")).lower()
    timeout = entry.get("timeout", 60)
    if not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout <= 0:
        raise ConfigError("timeout must be a positive number of seconds")
    if kind in ("http", "streamable-http", "streamablehttp"):
        _only(entry, _HTTP_KEYS)
        url = entry.get("url")
        if not isinstance(url, str) or not re.match(r"^https?://", url):
            raise ConfigError("url must be an http:// or https:// address")
        return ServerSpec(name, url=url, headers=_strings(entry, "headers"),
                          timeout=float(timeout))
    if kind != "stdio":
        raise ConfigError(f"type {kind!r} is not supported (stdio or http)")
    _only(entry, _STDIO_KEYS)
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ConfigError("command must be a non-empty string")
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ConfigError("args must be a list of strings")
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ConfigError("cwd must be a string")
    return ServerSpec(name, command=command, args=tuple(args), env=_strings(entry, "env"),
                      cwd=str(Path(cwd).expanduser()) if cwd else None, timeout=float(timeout))


def _only(entry: dict[str, Any], allowed: frozenset[str]) -> None:
    unknown = sorted(set(entry) - allowed)
    if unknown:
        raise ConfigError(f"unknown key {unknown[0]!r}")


def _strings(entry: dict[str, Any], key: str) -> dict[str, str]:
    value = entry.get(key, {})
    if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise ConfigError(f"{key} must be an object of strings")
    return dict(value)
