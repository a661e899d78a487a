"""Self-improvement, gated: the agent proposes a new skill or a change to one of the
person's skills; the proposal is vetted, its own tests run in a sandboxed scratch copy,
and only the person's approval of that exact content writes, trusts and reloads it."""
