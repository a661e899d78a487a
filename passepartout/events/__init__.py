"""Events: hooks, cron, the heartbeat, the scan of org files for jobs (org syntax itself,
timestamps and repeaters included, is in :mod:`passepartout.org`)."""
