"""``passepartout chat``: the line-by-line terminal face of the daemon."""
