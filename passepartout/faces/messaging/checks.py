"""``passepartout doctor``'s line for each configured messaging face: its settings,
checked as the daemon checks them (no call to the service: the doctor stays offline)."""

from __future__ import annotations

from passepartout.config import Config
from passepartout.errors import ConfigError
from passepartout.faces.messaging.settings import signal_settings, telegram_settings


def messaging_checks(config: Config) -> list[tuple[str, bool, str, str]]:
    """(name, ok, detail, fix) for each face that is configured, none for those off."""
    checks: list[tuple[str, bool, str, str]] = []
    try:
        telegram = telegram_settings(config.extra)
        if telegram is not None:
            checks.append(("telegram face", True,
                           f"on: {len(telegram.allowed)} allowed chat(s), {telegram.api}, "
                           f"notices {'on' if telegram.notify else 'off'}", ""))
    except ConfigError as err:
        checks.append(("telegram face", False, f"off: {err.message}",
                       "set PASSEPARTOUT_TELEGRAM_TOKEN and PASSEPARTOUT_TELEGRAM_CHATS, or "
                       "unset the token to turn the face off"))
    try:
        signal = signal_settings(config.extra)
        if signal is not None:
            checks.append(("signal face", True,
                           f"on: {signal.account} through {signal.url}, "
                           f"{len(signal.allowed)} allowed number(s), "
                           f"notices {'on' if signal.notify else 'off'}", ""))
    except ConfigError as err:
        checks.append(("signal face", False, f"off: {err.message}",
                       "set PASSEPARTOUT_SIGNAL_ACCOUNT, PASSEPARTOUT_SIGNAL_URL and "
                       "PASSEPARTOUT_SIGNAL_NUMBERS, or unset the account to turn it off"))
    return checks
