"""The log boundary: whatever a log line quotes, it reaches a terminal escaped and with
the vault's secrets masked, for every logger and every handler."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from passepartout.security import logs
from passepartout.security import vault as vault_mod
from passepartout.security.vault import Vault

HOSTILE = "title \x1b]52;c;aGk=\x07 \x1b[2J\r\u202eevil\ud800 end"


@pytest.mark.attack
def test_a_record_quoting_terminal_controls_is_written_escaped(tmp_path: Path) -> None:
    logs.install()
    log_file = tmp_path / "log.txt"
    handler = logging.FileHandler(log_file, encoding="utf-8")
    logger = logging.getLogger("passepartout.test.boundary")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        logger.warning("hook: %s", HOSTILE)
        try:
            raise ValueError(HOSTILE)
        except ValueError:
            logger.exception("failed")
    finally:
        logger.removeHandler(handler)
        handler.close()
    written = log_file.read_text(encoding="utf-8")
    assert "\x1b" not in written and "\r" not in written and "\u202e" not in written
    assert "\\x1b]52;c;aGk=\\x07" in written
    assert "\\ud800" in written and "Traceback" in written


def test_a_record_is_masked_and_escaped_together() -> None:
    logs.install()
    previous = vault_mod.get_vault()
    vault_mod.set_vault(Vault({"GITHUB_TOKEN": "ghp_" + "A1b2C3d4" * 5}))
    try:
        record = logging.getLogger("passepartout.test.boundary").makeRecord(
            "x", logging.INFO, __file__, 1, "token %s\x1b[31m", ("ghp_" + "A1b2C3d4" * 5,),
            None)
        logs.make_safe(record)
    finally:
        vault_mod.set_vault(previous)
    assert record.getMessage() == "token [secret:GITHUB_TOKEN]\\x1b[31m"


@pytest.mark.attack
def test_the_daemons_log_setup_makes_records_safe(tmp_path: Path) -> None:
    """`passepartout serve`'s own handlers (stderr and the log file) write escaped text,
    also before the agent boots."""
    code = (
        "import logging, sys\n"
        "from passepartout.config import Config\n"
        "from passepartout.server.serve import setup_logging\n"
        "config = Config.load()\n"
        "setup_logging(config)\n"
        f"logging.getLogger('passepartout.x').warning('quoted: %s', {HOSTILE!r})\n"
        "print(config.log_file)\n"
    )
    env = {**os.environ, "PASSEPARTOUT_HOME": str(tmp_path / "home"),
           "PASSEPARTOUT_CONFIG_DIR": str(tmp_path / "config"),
           "MEMEX_DIR": str(tmp_path / "memex")}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert b"\x1b" not in done.stderr and b"\\x1b]52" in done.stderr
    log_file = Path(done.stdout.decode().strip())
    written = log_file.read_bytes()
    assert b"\x1b" not in written and b"\\x1b]52" in written
