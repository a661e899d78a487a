"""Passepartout: a personal agent for people who live in Emacs and org-mode."""

import os

__version__ = "0.1.0"

# litellm, in its default "DEV" mode, loads the first .env found walking up from its own
# package directory (the checkout, the home directory...) into the process environment
# at import: a stray ``OPENAI_BASE_URL`` there would send the person's key elsewhere.
# Settings come from the environment and $PASSEPARTOUT_CONFIG_DIR/.env only.
os.environ.setdefault("LITELLM_MODE", "PRODUCTION")
