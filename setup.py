"""The top-level ``skills/`` ships inside the wheel as ``passepartout/_skills``.

The repository keeps the shipped skills beside the package (a person reads and edits
them there); an installed passepartout finds them as package data
(:data:`passepartout.engine.pinned.SHIPPED_SKILLS_DIR`).  Everything else is in
pyproject.toml.
"""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["passepartout", "passepartout.*"]), "passepartout._skills"],
    package_dir={"passepartout._skills": "skills"},
    package_data={"passepartout._skills": ["*.py", "*.org"]},
)
