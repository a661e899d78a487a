"""For tests: trust skill files the way the person does, by sealing their hashes.

``trust_skills(state_dir, skills_dir)`` records every skill file there (or the files
named) in the state directory's sealed trust records, as ``passepartout skills trust``
would after the person said yes; an agent using that state directory then loads them.
"""

from __future__ import annotations

from pathlib import Path

from passepartout.engine.discovery import skill_name
from passepartout.engine.pinned import sha256_of
from passepartout.engine.trust import TrustStore


def skill_files(*places: Path) -> list[Path]:
    found: list[Path] = []
    for place in map(Path, places):
        if place.is_dir():
            found += [
                p for p in sorted(place.iterdir())
                if p.suffix in (".py", ".org") and not p.name.startswith(("_", "."))
            ]
        else:
            found.append(place)
    return found


def trust_skills(state_dir: Path | str, *places: Path | str) -> TrustStore:
    """Seal the current content of every skill file in ``places`` as trusted."""
    store = TrustStore(Path(state_dir))
    for path in skill_files(*map(Path, places)):
        store.trust(skill_name(path), sha256_of(path.read_bytes()), path)
    return store
