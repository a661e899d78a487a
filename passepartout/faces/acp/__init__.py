"""``passepartout acp``: the Agent Client Protocol over stdio, as a face of the daemon.

An ACP client (agent-shell in Emacs, Zed, JetBrains, Neovim) starts ``passepartout acp``
and speaks JSON-RPC on its stdin and stdout; this process attaches to the person's
running daemon (starting it when none runs) through :class:`~passepartout.faces.face.Face`
and translates: a prompt becomes a chat turn in the daemon, its events become session
updates, and every "ask" of the gates becomes ``session/request_permission``.  The
agent, its gates, sessions, memory and ledger are the daemon's, the same as Emacs's and
the terminal's; nothing here decides anything.

- :mod:`passepartout.faces.acp.agent`: the ACP methods;
- :mod:`passepartout.faces.acp.updates`: daemon events and history as ACP updates;
- :mod:`passepartout.faces.acp.permission`: the four answers to a permission request;
- :mod:`passepartout.faces.acp.main`: the command.
"""
