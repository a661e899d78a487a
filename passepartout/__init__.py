"""Passepartout: a personal agent for people who live in Emacs and org-mode."""

__version__ = "0.1.0"
