"""The faces: each client of the daemon (the terminal, the TUI, ACP, MCP, messaging),
speaking to it over the wire only.  A face never imports another face or the server."""
