"""Gates, approvals, the shell policy and the sandbox."""
