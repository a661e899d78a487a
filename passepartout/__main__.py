"""``python -m passepartout``: the command line."""

from passepartout.cli import main

raise SystemExit(main())
