"""The background skills (the scribe, the gardener, the archivist): each a cron job in
the memex that the person can see, reschedule or turn off, each acting only through
proposals that pass the gates, and none spending a token when it has nothing to do."""
