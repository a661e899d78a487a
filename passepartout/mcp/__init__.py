"""MCP, both ways: the servers of ``mcp.json`` lend their tools to the model (each call
a proposal through the gates), and ``passepartout mcp`` offers the memex to other
agents (every read audited, every write an approval)."""
