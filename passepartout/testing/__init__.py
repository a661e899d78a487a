"""Test support shipped with the package (the pytest plugin for literate skills)."""
