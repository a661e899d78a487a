"""Self-improvement, gated: the agent may propose a new skill or a change to one of the
person's own skills, and only the person's approval of the exact content installs it.

Two tools.  ``skill-test`` vets a proposed file and runs its own tests (the ``:test``
blocks of an ``.org`` skill) in a scratch copy inside the sandbox, and returns what
they found with the diff against the current version; it writes nothing.
``propose-skill`` asks the person, every time and whatever a grant says, with the diff
and the test results, and is refused unless ``skill-test`` passed on that exact
content.  What a test run returns (its failures) leaves as any text leaving for a
model does: secrets masked, private text withheld.  On approval (in Emacs, or a Flight
Plan when no client is attached) the file is written to the person's skills directory,
trusted by its sha256 and hot-reloaded; a version that fails to load is put back, so
the previous one goes on serving.
A shipped skill's name is refused: shipped skills are never rewritten.
"""

from __future__ import annotations

import collections
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from passepartout.api import Action, Signal, Verdict, defskill, host, make_tool

if TYPE_CHECKING:
    from passepartout.agent import Agent
    from passepartout.security.guard import Security
    from passepartout.selfimprove.proposal import Proposal
    from passepartout.selfimprove.trial import Trial

DEPENDS_ON = ["policy"]

HOST = host()
AGENT = HOST.agent if HOST is not None else None
selfimprove_KEPT_TRIALS = 16


class selfimprove_Service:
    """The trials run so far (by content hash), the gate, and the two tools."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self._sec: Security | None = None
        self.trials: collections.OrderedDict[str, Trial] = collections.OrderedDict()
        self.lock = threading.Lock()

    def start(self) -> None:
        """The engine starts the skill: the security layer is the policy skill's."""
        from passepartout.security.install import install

        self._sec = install(self.agent)

    @property
    def sec(self) -> Security:
        if self._sec is None:
            raise RuntimeError("the selfimprove skill is not started")
        return self._sec

    def plan(self, file_name: str, content: str) -> Proposal:
        from passepartout.engine.loader import SHIPPED_SKILLS_DIR
        from passepartout.selfimprove.proposal import plan

        return plan(file_name, content, skills_dir=self.agent.config.skills_dir,
                    shipped_dir=SHIPPED_SKILLS_DIR)

    def trial(self, proposal: Proposal) -> Trial:
        from passepartout.security.sandbox.views import private_views
        from passepartout.selfimprove.trial import run_trial

        sec = self.sec
        policy = sec.shell_policy()
        # The sandbox of any shell command: the agent's places hidden or read-only, and
        # every private org file seen redacted, whatever the tests do to read it.
        result = run_trial(
            proposal.path.name, proposal.content,
            hidden=(*policy.secret_paths, str(sec.places.config_dir), str(sec.places.home)),
            protected=(*policy.protected_paths, str(sec.places.policy_file)),
            views=lambda: private_views(sec.places.home / "sandbox-views", sec.private_tag))
        with self.lock:
            self.trials[proposal.sha256] = result
            while len(self.trials) > selfimprove_KEPT_TRIALS:
                self.trials.popitem(last=False)
        return result

    def known_trial(self, sha256: str) -> Trial | None:
        with self.lock:
            return self.trials.get(sha256)

    def gate(self, action: Action, signal: Signal) -> Verdict:
        from passepartout.selfimprove.proposal import ProposalError

        if action.target != "tool" or action.name != "propose-skill":
            return Verdict.allow("not a skill proposal")
        try:
            proposal = self.plan(str(action.args.get("file_name", "")),
                                 str(action.args.get("content", "")))
        except ProposalError as err:
            return Verdict.deny(err.message)
        trial = self.known_trial(proposal.sha256)
        if trial is None:
            return Verdict.deny("test this exact content with skill-test first")
        if not trial.passed:
            from passepartout.security.outbound import outbound_text

            return Verdict.deny(outbound_text(f"its tests do not pass: {trial.summary()}"))
        return Verdict.ask(f"{proposal.describe()}; {trial.summary()}; once approved it is "
                           f"written, trusted by its hash and loaded:\n{proposal.diff()}")

    def test(self, file_name: str, content: str) -> str:
        from passepartout.errors import PipelineError
        from passepartout.security.outbound import outbound_text
        from passepartout.selfimprove.proposal import ProposalError

        try:
            proposal = self.plan(file_name, content)
        except ProposalError as err:
            raise PipelineError(outbound_text(err.message)) from None
        trial = self.trial(proposal)
        verdict = "ready to propose with propose-skill" if trial.passed else "not ready"
        # What the tests printed or raised leaves as any text does: secrets masked,
        # private text withheld.
        return outbound_text(f"{proposal.describe()}: {trial.summary()} ({verdict})\n"
                        f"{proposal.diff()}")

    def install(self, file_name: str, content: str) -> str:
        from passepartout.errors import PipelineError
        from passepartout.security.outbound import outbound_text
        from passepartout.selfimprove.install import put_in_place
        from passepartout.selfimprove.proposal import ProposalError

        try:
            proposal = self.plan(file_name, content)
        except ProposalError as err:
            raise PipelineError(outbound_text(err.message)) from None
        # A Flight Plan approved after a restart has no trial in memory: run it again.
        trial = self.known_trial(proposal.sha256) or self.trial(proposal)
        if not trial.passed:
            raise PipelineError(outbound_text(
                f"not installed: its tests do not pass: {trial.summary()}"))
        try:
            return outbound_text(put_in_place(proposal, self.agent.loader))
        except OSError as err:
            raise PipelineError(f"not installed: {Path(proposal.path)}: {err.strerror}") from None


if AGENT is not None:
    selfimprove_SERVICE = selfimprove_Service(AGENT)

    def skill_test(file_name: str, content: str) -> str:
        """Vet a new or changed skill of the person's and run its own tests in a sandboxed
        scratch copy; writes nothing. Returns the results and the diff against the current
        version.

        Args:
            file_name: the skill's file name in the person's skills directory (name.py or name.org)
            content: the whole file as it would be written
        """
        return selfimprove_SERVICE.test(file_name, content)

    def propose_skill(file_name: str, content: str, reason: str) -> str:
        """Propose a new skill, or a change to one of the person's skills, for the person to
        approve; run skill-test on the same content first. On approval it is written,
        trusted and loaded.

        Args:
            file_name: the skill's file name in the person's skills directory (name.py or name.org)
            content: the whole file as it would be written
            reason: why, in a sentence, for the person
        """
        return selfimprove_SERVICE.install(file_name, content)

    selfimprove_TOOLS = [
        make_tool(skill_test, name="skill-test"),
        make_tool(propose_skill, name="propose-skill", impact="high"),
    ]
    defskill("selfimprove", priority=96, depends_on=["policy"],
             gate=selfimprove_SERVICE.gate, tools=selfimprove_TOOLS,
             start=selfimprove_SERVICE.start)
else:
    defskill("selfimprove", priority=96, depends_on=["policy"])
