"""The skill engine: discovery, ordering, vetting, loading, hot reload (seeds 003, 004)."""

from passepartout.engine.loader import CatalogEntry, SkillLoader, Status, require
from passepartout.engine.registry import Registry
from passepartout.engine.skill import Skill, defskill, host

__all__ = [
    "CatalogEntry",
    "Registry",
    "Skill",
    "SkillLoader",
    "Status",
    "defskill",
    "host",
    "require",
]
