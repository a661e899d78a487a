"""The gates' decisions, in rooms.

- :mod:`.shell`: the shell analyser (a command runs, is asked, or is refused), its
  parts (words, options, globs, the allowlist, git), what runs later, and the ``shell``
  tool's executor.
- :mod:`.sandbox`: running a command in bubblewrap, and what it sees and reaches.
- :mod:`.files`: the file tools' safe read and write, where they may act, grep-search.
- :mod:`.privacy`: private (``@personal``) text: which lines are private, the index
  every request to a remote model is filtered by.
- :mod:`.vault`: secrets by name and the forms the mask hides.
- :mod:`.approvals`: the approvals file, grants, Flight Plans and standing grants.
- :mod:`.policy`: the policy's rules, the accepted ``policy.toml``, its command.
- :mod:`.trust`: the seal, the sealed record files, the alarms about them.
- Alone: :mod:`.guard` (one agent's security layer), :mod:`.install`, :mod:`.tools`,
  :mod:`.audit`, :mod:`.sensitive` (the protected places) and :mod:`.outbound` (the
  one exit).
"""
