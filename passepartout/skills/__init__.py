"""The namespace where loaded skills live: ``passepartout.skills.<name>``.

Skill files themselves are in the repository's ``skills/`` directory and the person's
SKILLS_DIR; the engine (``passepartout.engine``) loads them here, one module each.
"""
