"""The settings of the messaging faces, read from ``Config.extra`` and checked once.

A face is on when its first variable is set (``PASSEPARTOUT_TELEGRAM_TOKEN``,
``PASSEPARTOUT_SIGNAL_ACCOUNT``); it then must name the chats it answers, and
nobody else's message is ever answered.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from passepartout.errors import ConfigError

TELEGRAM_API = "https://api.telegram.org"
SIGNAL_URL = "http://127.0.0.1:8080"
_TELEGRAM_TOKEN = re.compile(r"\d+:[A-Za-z0-9_-]{20,}")
_CHAT_ID = re.compile(r"-?\d{1,20}")
_NUMBER = re.compile(r"\+\d{6,15}")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_ON = {"1", "on", "yes", "true"}
_OFF = {"", "0", "off", "no", "false"}


@dataclass(frozen=True)
class TelegramSettings:
    token: str
    allowed: frozenset[str]  # chat ids (a private chat's id is the person's user id)
    api: str = TELEGRAM_API
    notify: bool = False

    def __repr__(self) -> str:  # never the token, wherever a repr ends up
        return f"TelegramSettings(allowed={sorted(self.allowed)}, api={self.api!r})"


@dataclass(frozen=True)
class SignalSettings:
    url: str  # signal-cli's HTTP endpoint (``signal-cli daemon --http``)
    account: str  # the number signal-cli sends from
    allowed: frozenset[str]  # numbers (+E.164) or ACIs (UUIDs)
    notify: bool = False


def telegram_settings(extra: Mapping[str, str]) -> TelegramSettings | None:
    """The Telegram face's settings; None when it is off."""
    token = extra.get("PASSEPARTOUT_TELEGRAM_TOKEN", "").strip()
    if not token:
        return None
    if not _TELEGRAM_TOKEN.fullmatch(token):
        raise ConfigError("PASSEPARTOUT_TELEGRAM_TOKEN is not a bot token (NUMBER:KEY, as "
                          "@BotFather gives it)", variable="PASSEPARTOUT_TELEGRAM_TOKEN")
    allowed = _list(extra, "PASSEPARTOUT_TELEGRAM_CHATS", _CHAT_ID, "chat ids (numbers)")
    return TelegramSettings(token, allowed, _url(extra, "PASSEPARTOUT_TELEGRAM_API",
                                                 TELEGRAM_API),
                            _flag(extra, "PASSEPARTOUT_TELEGRAM_NOTIFY"))


def signal_settings(extra: Mapping[str, str]) -> SignalSettings | None:
    """The Signal face's settings; None when it is off."""
    account = extra.get("PASSEPARTOUT_SIGNAL_ACCOUNT", "").strip()
    if not account:
        return None
    if not (_NUMBER.fullmatch(account) or _UUID.fullmatch(account)):
        raise ConfigError(f"PASSEPARTOUT_SIGNAL_ACCOUNT must be a number like +33612345678, "
                          f"not {account!r}", variable="PASSEPARTOUT_SIGNAL_ACCOUNT")
    allowed = _list(extra, "PASSEPARTOUT_SIGNAL_NUMBERS", None, "numbers (+E.164) or UUIDs")
    return SignalSettings(_url(extra, "PASSEPARTOUT_SIGNAL_URL", SIGNAL_URL), account,
                          allowed, _flag(extra, "PASSEPARTOUT_SIGNAL_NOTIFY"))


def _list(extra: Mapping[str, str], name: str, pattern: re.Pattern[str] | None,
          what: str) -> frozenset[str]:
    items = [p.strip() for p in extra.get(name, "").replace(";", ",").split(",") if p.strip()]
    if not items:
        raise ConfigError(f"{name} must list the {what} allowed to talk to the agent",
                          variable=name)
    for item in items:
        ok = (pattern.fullmatch(item) if pattern is not None
              else _NUMBER.fullmatch(item) or _UUID.fullmatch(item))
        if not ok:
            raise ConfigError(f"{name}: {item!r} is not one of the {what}", variable=name)
    return frozenset(items)


def _url(extra: Mapping[str, str], name: str, default: str) -> str:
    raw = extra.get(name, "").strip() or default
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{name} must be an http(s) URL, not {raw!r}", variable=name)
    return raw.rstrip("/")


def _flag(extra: Mapping[str, str], name: str) -> bool:
    raw = extra.get(name, "").strip().lower()
    if raw in _ON:
        return True
    if raw in _OFF:
        return False
    raise ConfigError(f"{name} must be on or off, not {raw!r}", variable=name)
