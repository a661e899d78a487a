"""The shipped skills, pinned by hash: the repository's ``skills/`` as it was released.

A skill file whose name and sha256 are in :data:`SHIPPED` is the project's own code:
it loads without asking and may use the whole ``passepartout`` package (the policy
and dispatcher skills install the security layer itself).  Anything else, a changed
shipped file included, is a person's skill: vetted by the allowlist and loaded only
once the person trusted its exact content.

``make pin-skills`` (:func:`main`) rewrites the manifest,
:mod:`passepartout.engine.shipped_skills`, from the files; a test keeps it current.
"""

from __future__ import annotations

import hashlib
from importlib.resources import files
from pathlib import Path

from passepartout.engine.shipped_skills import SHIPPED
from passepartout.fsutil import atomic_write

CHECKOUT_SKILLS_DIR = Path(__file__).resolve().parents[2] / "skills"


def _shipped_skills_dir() -> Path:
    """Where the shipped skills are: in an installed wheel, the package data
    ``passepartout/_skills`` (setup.py maps the repository's ``skills/`` there); in a
    checkout (or an editable install of one), the repository's ``skills/``."""
    packaged = Path(str(files("passepartout").joinpath("_skills")))
    if packaged.is_dir():
        return packaged.resolve()
    return CHECKOUT_SKILLS_DIR


SHIPPED_SKILLS_DIR = _shipped_skills_dir()
MANIFEST = Path(__file__).with_name("shipped_skills.py")


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def is_pinned(filename: str, sha256: str) -> bool:
    """True when ``filename`` with this content is a skill that ships with passepartout."""
    return SHIPPED.get(filename) == sha256


def current(directory: Path = SHIPPED_SKILLS_DIR) -> dict[str, str]:
    """The hashes of the skill files in ``directory`` now."""
    return {
        path.name: sha256_of(path.read_bytes())
        for path in sorted(directory.iterdir())
        if path.suffix in (".py", ".org") and not path.name.startswith(("_", "."))
    }


def render(hashes: dict[str, str]) -> str:
    lines = "".join(f"    {name!r}: {digest!r},\n" for name, digest in sorted(hashes.items()))
    return (
        '"""The shipped skills\' sha256 (written by ``make pin-skills``)."""\n'
        "\n"
        "SHIPPED: dict[str, str] = {\n"
        f"{lines}"
        "}\n"
    )


def main() -> int:
    text = render(current(CHECKOUT_SKILLS_DIR))
    if MANIFEST.exists() and MANIFEST.read_text(encoding="utf-8") == text:
        print(f"{MANIFEST} is up to date")
        return 0
    atomic_write(MANIFEST, text)
    print(f"wrote {MANIFEST}")
    return 0
