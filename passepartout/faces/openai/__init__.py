"""``passepartout openai``: Passepartout served as a model, for every client of the
OpenAI chat-completions protocol (gptel, ellama, aider, the ``openai`` library).

A face of the daemon like the others: it serves ``/v1/models`` and
``/v1/chat/completions`` on 127.0.0.1 with a bearer token kept in a 0600 file (the same
across restarts, replaced with ``--new-token``), and turns each request into a turn of
the agent through the daemon's wire (:mod:`passepartout.faces.openai.app`).  It is off
until this command runs; the daemon is started when none runs.
"""
