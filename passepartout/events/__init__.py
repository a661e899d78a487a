"""Events: org timestamps and repeats, hooks, cron, heartbeat, org scanning."""
