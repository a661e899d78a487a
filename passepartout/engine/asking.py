"""Asking the person to trust a skill: in Emacs with the file shown, else a Flight Plan.

A skill that waits (its exact content not yet trusted) is asked about on the first
heartbeat after the start, and at once when a reload finds it changed: in the face a
person has attached, when one is (the question carries the path, the sha256 and the
whole file), otherwise as a Flight Plan in the approvals file.  The plan is the approvals book's own
entry, but its ledger state is this module's (so the runner of tool plans leaves it
alone) and carries a seal over its id and hash: a plan written by anything else is not
one of these.  On each heartbeat an APPROVED plan trusts the skill and reloads it, and a
skill trusted meanwhile from the terminal (``passepartout skills trust``) is loaded.
"""

from __future__ import annotations

import ast
import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from passepartout.engine.pinned import sha256_of
from passepartout.loop.actions import Action, ApprovalRequest
from passepartout.pyast import parse_module
from passepartout.security.approvals import APPROVED, CANCELLED, DONE, REJECTED
from passepartout.signals import Keyword, Signal
from passepartout.turn import DAEMON, TurnContext

if TYPE_CHECKING:
    from passepartout.engine.loader import CatalogEntry, SkillLoader

log = logging.getLogger(__name__)

LEDGER_STATE = "skill-trust"
PLAN_PURPOSE = "skill-plan"


def summarize(text: str) -> list[str]:
    """A few lines saying what a skill file is: size, docstring, imports, skills."""
    lines = [f"{text.count(chr(10)) + 1} lines, {len(text.encode('utf-8'))} bytes"]
    try:
        tree = parse_module(text)
    except SyntaxError as err:
        return [*lines, f"does not parse: line {err.lineno}: {err.msg}"]
    doc = ast.get_docstring(tree)
    if doc:
        lines.append("says: " + doc.strip().splitlines()[0][:120])
    imports: list[str] = []
    skills: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imports += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            imports += [f"{node.module}.{a.name}" for a in node.names]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "defskill"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            skills.append(repr(node.args[0].value))
    lines.append("imports: " + (", ".join(imports) or "nothing"))
    lines.append("declares: " + (", ".join(skills) or "no defskill"))
    return lines


def skill_source_text(path: Path) -> str:
    from passepartout.engine import literate

    text = path.read_text(encoding="utf-8")
    return literate.python_code(text) if path.suffix == ".org" else text


class SkillAsker:
    """Asks about the loader's waiting skills and acts on the answers."""

    def __init__(self, agent: Any, loader: SkillLoader) -> None:
        self.agent = agent
        self.loader = loader
        self.asked: set[tuple[str, str]] = set()
        self.started = False
        self._lock = threading.Lock()
        loader.on_waiting = self.on_waiting

    # -- when ------------------------------------------------------------------------

    def attach(self) -> None:
        """Ask on the heartbeat (once the agent runs: ``doctor`` never asks)."""
        bus = self.agent.services.heartbeat
        if bus is not None:
            bus.register(self.tick, name="skill-trust")

    def on_waiting(self, entry: CatalogEntry) -> None:
        if self.started:
            self._ask_soon(entry)

    def tick(self, _tick: Any = None) -> None:
        self.load_trusted()
        self.check_plans()
        if not self.started:
            self.started = True
            for entry in self.loader.waiting():
                self._ask_soon(entry)

    def _ask_soon(self, entry: CatalogEntry) -> None:
        key = (entry.name, entry.sha256)
        with self._lock:
            if key in self.asked or not entry.sha256:
                return
            self.asked.add(key)
        threading.Thread(
            target=self.ask, args=(entry.name, entry.path, entry.sha256),
            name=f"skill-trust-{entry.name}", daemon=True,
        ).start()

    # -- asking ------------------------------------------------------------------------

    def ask(self, name: str, path: Path, digest: str) -> bool | None:
        """Ask the person; True/False is their answer, None a Flight Plan written."""
        try:
            raw = path.read_bytes()
        except OSError as err:
            log.warning("skill %s: cannot read %s to ask about it: %s", name, path, err)
            return False
        if sha256_of(raw) != digest:
            return False  # changed again: the next load asks about the new content
        text = raw.decode("utf-8", "replace")
        reasons = (
            f"trust the skill {name} with exactly this content (sha256 {digest})",
            f"file: {path}",
            *summarize(skill_source_text(path) if path.suffix == ".org" else text),
        )
        channel = self.agent.faces
        peers = getattr(channel, "peers", None)
        if channel is not None and callable(peers) and peers():
            args = {"name": name, "sha256": digest, "path": str(path), "content": text}
            signal = Signal(payload={"sensor": Keyword("skill-trust")},
                            turn=TurnContext(face=DAEMON, origin="skill-trust"))
            request = ApprovalRequest(Action("skill", "trust", args), reasons, signal)
            if self.agent.approvals.ask_on(channel, request):
                self._trust(name, digest, path)
                return True
            log.info("skill %s not trusted: the person said no (sha256 %s)", name, digest)
            return False
        self.flight_plan(name, path, digest, reasons)
        return None

    def flight_plan(self, name: str, path: Path, digest: str, reasons: tuple[str, ...]) -> None:
        book = self._book()
        if book is None:
            log.warning("skill %s waits for approval; no approvals file to ask in", name)
            return
        action = Action("skill", "trust", {"name": name, "sha256": digest, "path": str(path)})
        ledger = book.ledger()
        for plan in book.plans():
            known = ledger.get(plan.id, {})
            if known.get("state") == LEDGER_STATE and known.get("hash") == action.digest():
                return  # already asked
        signal = Signal(payload={"sensor": Keyword("skill-trust")},
                        turn=TurnContext(face="background", origin="skill-trust"))
        plan = book.propose(ApprovalRequest(action, reasons, signal))
        seal = self.loader.trust.seal.sign(PLAN_PURPOSE, plan.id, action.digest()) if (
            self.loader.trust is not None
        ) else ""
        book.set_ledger(plan.id, state=LEDGER_STATE, skill_seal=seal)
        log.info("skill %s waits for approval: Flight Plan %s in %s", name, plan.id, book.path)

    # -- answers -------------------------------------------------------------------------

    def check_plans(self) -> None:
        """Act on the person's answers to the skill Flight Plans."""
        book = self._book()
        store = self.loader.trust
        if book is None or store is None:
            return
        ledger = book.ledger()
        for plan in book.plans():
            known = ledger.get(plan.id, {})
            if known.get("state") != LEDGER_STATE or plan.state not in (APPROVED, REJECTED):
                continue
            action = plan.action()
            digest = str(known.get("hash", ""))
            genuine = store.seal.verify(
                str(known.get("skill_seal", "")), PLAN_PURPOSE, plan.id, digest
            )
            forgery = getattr(book, "forgery", None)  # the book's own seal check
            if callable(forgery) and forgery(plan, known) is not None:
                genuine = False
            if action is None or action.digest() != digest or not genuine:
                why = "this skill approval was edited or not written by the agent; not trusted"
                book.set_ledger(plan.id, state="cancelled")
                book.mark(plan.id, CANCELLED, why)
                log.warning("Flight Plan %s: %s", plan.id, why)
                continue
            if plan.state == REJECTED:
                book.set_ledger(plan.id, state="rejected")
                continue
            name, sha = str(action.args.get("name")), str(action.args.get("sha256"))
            path = Path(str(action.args.get("path")))
            book.set_ledger(plan.id, state="done")
            self._trust(name, sha, path)
            book.mark(plan.id, DONE, f"trusted {name} (sha256 {sha})")

    def load_trusted(self) -> None:
        """Load the waiting skills the person trusted meanwhile (e.g. from the terminal)."""
        store = self.loader.trust
        if store is None:
            return
        for entry in self.loader.waiting():
            if entry.sha256 and store.is_trusted(entry.name, entry.sha256):
                self.loader.reload(entry.name)

    def _trust(self, name: str, digest: str, path: Path) -> None:
        if self.loader.trust is None:
            return
        self.loader.trust.trust(name, digest, path)
        if name in self.loader.catalog:
            entry = self.loader.reload(name)
            log.info("skill %s trusted by the person: %s", name, entry.describe())
            check = getattr(self.agent, "check_health", None)
            if callable(check):
                check()

    def _book(self) -> Any:
        security = self.agent.services.security
        return getattr(security, "book", None)
