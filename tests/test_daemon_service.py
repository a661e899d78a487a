"""``passepartout service``: the systemd user unit (checked by ``systemd-analyze
verify``, which reads it as systemd will) and the launchd agent (read back by plistlib)."""

from __future__ import annotations

import plistlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from wire_client import PYTHON, ROOT

ANALYZE = shutil.which("systemd-analyze")


def service(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), **env}
    return subprocess.run([PYTHON, "-m", "passepartout", "service", *args], cwd=ROOT,
                          env=environ, capture_output=True, text=True, timeout=30)


def verify(unit: Path) -> subprocess.CompletedProcess[str]:
    assert ANALYZE is not None
    return subprocess.run([ANALYZE, "verify", str(unit)], capture_output=True, text=True,
                          timeout=30)


@pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed (Debian: systemd)")
def test_the_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    home = tmp_path / "odd home %n $USER"
    done = service(tmp_path, "install", PASSEPARTOUT_HOME=str(home), MEMEX_DIR="/srv/notes")
    assert done.returncode == 0, done.stderr
    unit = tmp_path / ".config/systemd/user/passepartout.cli.service"
    assert f"wrote {unit}" in done.stdout
    assert "systemctl --user enable --now passepartout" in done.stdout
    checked = verify(unit)
    assert checked.returncode == 0 and checked.stderr == "", checked.stderr
    text = unit.read_text()
    assert f"ExecStart={sys.executable} -m passepartout daemon" in text
    assert "Restart=on-failure" in text and "WantedBy=default.target" in text
    # systemd reads %% as % (and no $ in Environment=): the daemon gets the path as it is.
    assert 'Environment="PASSEPARTOUT_HOME=' + str(tmp_path) + '/odd home %%n $USER"' in text
    assert "Environment=MEMEX_DIR=/srv/notes" in text
    # The check can fail: a unit with a bad value is reported.
    bad = tmp_path / "bad.service"
    bad.write_text(text.replace("Restart=on-failure", "Restart=sometimes"))
    assert "restart specifier" in verify(bad).stderr


def test_install_keeps_a_changed_unit_and_uninstall_removes_it(tmp_path: Path) -> None:
    assert service(tmp_path, "install").returncode == 0
    unit = tmp_path / ".config/systemd/user/passepartout.cli.service"
    again = service(tmp_path, "install")
    assert again.returncode == 0 and "installed already" in again.stdout
    unit.write_text(unit.read_text() + "# mine\n")
    refused = service(tmp_path, "install")
    assert refused.returncode == 1 and "differs" in refused.stderr
    assert "Traceback" not in refused.stderr and unit.read_text().endswith("# mine\n")
    assert service(tmp_path, "install", "--force").returncode == 0
    assert not unit.read_text().endswith("# mine\n")
    removed = service(tmp_path, "uninstall")
    assert removed.returncode == 0 and not unit.exists()
    assert "nothing to remove" in service(tmp_path, "uninstall").stdout


def test_the_launchd_agent_is_a_plist_that_keeps_the_daemon_alive(tmp_path: Path) -> None:
    done = service(tmp_path, "install", "--kind", "launchd", MEMEX_DIR="/srv/notes")
    assert done.returncode == 0, done.stderr
    path = tmp_path / "Library/LaunchAgents/org.passepartout.cli.daemon.plist"
    agent = plistlib.loads(path.read_bytes())
    assert agent["ProgramArguments"] == [sys.executable, "-m", "passepartout", "daemon"]
    assert agent["KeepAlive"] == {"SuccessfulExit": False} and agent["RunAtLoad"] is True
    assert agent["EnvironmentVariables"] == {"MEMEX_DIR": "/srv/notes"}
    assert "launchctl bootstrap gui/" in done.stdout
