"""A secret put into a shell command never changes how bash reads it (checked with bash)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from passepartout.security.shell.secrets import inject_secrets

from passepartout.errors import PipelineError
from passepartout.security.vault import Vault

ODD = "p@ss w0rd;$(touch pwned)'\"`id`*"


def argv_of(cmd: str, cwd: Path | None = None) -> list[str]:
    out = subprocess.run(["bash", "-c", cmd.replace("echo", "printf '%s\\0'", 1)],
                         capture_output=True, check=True, cwd=cwd).stdout
    return out.decode().split("\0")[:-1]


@pytest.mark.attack
def test_an_odd_value_is_passed_as_one_word_and_runs_nothing(tmp_path: Path) -> None:
    vault = Vault({"DB_PASSWORD": ODD, "API_TOKEN": "abc-123_x.y/z=="})
    cmd = inject_secrets("echo {{secret:DB_PASSWORD}} --key={{secret:API_TOKEN}}", vault)
    assert argv_of(cmd, tmp_path) == [ODD, "--key=abc-123_x.y/z=="]
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize("cmd", ['echo "{{secret:DB_PASSWORD}}"', "echo x{{secret:DB_PASSWORD}}",
                                 "echo '{{secret:DB_PASSWORD}}'"])
def test_an_odd_value_inside_a_word_is_refused(cmd: str) -> None:
    with pytest.raises(PipelineError, match="word of its own"):
        inject_secrets(cmd, Vault({"DB_PASSWORD": ODD}))


def test_a_plain_value_goes_anywhere() -> None:
    vault = Vault({"API_TOKEN": "abc-123_x.y/z=="})
    cmd = inject_secrets('echo "Bearer {{secret:API_TOKEN}}"', vault)
    assert argv_of(cmd) == ["Bearer abc-123_x.y/z=="]
