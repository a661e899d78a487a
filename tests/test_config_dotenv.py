"""The ``.env`` of the config directory: its pairs are settings, a line that is not
one is named with its file and line (python-dotenv's own warning names neither), and
a file that is not text is a clear error."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest

from passepartout.config import Config, read_dotenv
from passepartout.errors import ConfigError


def test_pairs_are_read_and_a_bad_line_is_named(tmp_path: Path,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    env = tmp_path / ".env"
    env.write_text('PASSEPARTOUT_MODEL=openai/gpt-4o\nBROKEN LINE\nNAME="a ${PASSEPARTOUT_MODEL}"\n'
                   "export =\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        values = read_dotenv(env)
        read_dotenv(env)
    assert values == {"PASSEPARTOUT_MODEL": "openai/gpt-4o", "NAME": "a openai/gpt-4o"}
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [f"{env}: lines 2, 4 are not KEY=value and left out"] * 2
    config = Config.load({"PASSEPARTOUT_CONFIG_DIR": str(tmp_path),
                          "PASSEPARTOUT_HOME": str(tmp_path / "home")})
    assert config.model == "openai/gpt-4o"


def test_a_file_that_is_not_text_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / ".env").write_bytes(b"\xff\xfe KEY=1\n")
    with pytest.raises(ConfigError) as err:
        Config.load({"PASSEPARTOUT_CONFIG_DIR": str(tmp_path)})
    assert str(tmp_path / ".env") in err.value.message and "cannot be read" in err.value.message


def test_a_command_says_it_in_its_own_words(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("X=1\nnot a pair\n", encoding="utf-8")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PASSEPARTOUT_CONFIG_DIR":
           str(tmp_path), "PASSEPARTOUT_HOME": str(tmp_path / "home")}
    done = subprocess.run([sys.executable, "-m", "passepartout", "sessions"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"passepartout sessions: {tmp_path / '.env'}: line 2 is not KEY=value and left out"]
