"""The dispatcher gate (mandatory): high-impact actions need a person's yes.

Evaluating code (``eval`` in the agent, ``emacs-eval`` in the person's Emacs), writing
files and any tool that declares itself high-impact are asked of the person (in Emacs,
in the terminal, or as a Flight Plan in org); nobody answering is a no.
"""

from __future__ import annotations

from passepartout.api import Action, Signal, Verdict, defskill, host

DEPENDS_ON = ["policy"]

AGENT = host()

dispatcher_ALWAYS_ASK = frozenset({"eval", "emacs-eval", "write-file"})


def dispatcher_gate(action: Action, signal: Signal) -> Verdict:
    if action.target != "tool":
        return Verdict.allow("not a tool call")
    if action.name in dispatcher_ALWAYS_ASK:
        return Verdict.ask(f"{action.name} is high-impact")
    tool = AGENT.tool(action.name) if AGENT is not None else None
    if tool is not None and tool.impact == "high":
        return Verdict.ask(f"{action.name} declares itself high-impact")
    return Verdict.allow("low impact")


defskill("dispatcher", priority=90, gate=dispatcher_gate)
