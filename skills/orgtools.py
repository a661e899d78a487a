"""Org editing tools: add a heading, set a property, set the TODO state, add a note,
refile, archive, capture into the inbox.

Each edit is made as org-mode's own command makes it (the tests compare the file with
org's in ``emacs --batch``): a repeated task marked done moves on by org's repeater
rule, the same code as the cron rule's, with ``LAST_REPEAT`` and a state note; an
archived subtree goes to ``FILE_archive`` with org's ``ARCHIVE_*`` properties.
Headings are named by ``:ID:`` (``id:X``) or by outline path (``Projects/Alpha``).

Every edit writes an org file, so every one is high-impact: the dispatcher asks the
person unless a rule or grant of ``policy.toml`` or the approvals file allows it.
An edit that touches a private (``@personal``) subtree, or puts text into one, is
asked of the person by this skill's gate every time, whatever a grant says; the tool
refuses it when the file turned private after the gates judged it.  Text is escaped
(no title, tag, property or note can become org structure) and files are replaced
atomically; then each Emacs attached gets the same edit in the buffer visiting the
file (the protocol's ``org-edit``): one change that ``undo`` takes back, and a
buffer with unsaved changes keeps them.

Settings: ``PASSEPARTOUT_ORG_INBOX``: the capture file (default ``inbox.org`` in the
memex).
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from passepartout.api import Action, Signal, Tool, Verdict, defskill, host, make_tool

if TYPE_CHECKING:
    from passepartout.agent import Agent
    from passepartout.org.edit_files import OrgFiles, Plan
    from passepartout.security.guard import Security

DEPENDS_ON = ["policy"]

HOST = host()
AGENT = HOST.agent if HOST is not None else None

orgtools_TOOLS: list[Tool] = []
orgtools_NAMES = ("org-add-heading", "org-set-property", "org-set-todo", "org-add-note",
                  "org-refile", "org-archive", "org-capture")
orgtools_APPROVAL_TTL = 600.0  # seconds a private edit's ask stays good for the tool
orgtools_EMACS_MAX = 4 * 1024 * 1024  # characters sent to Emacs (a frame holds 8 MB)


class orgtools_Service:
    """The edits, the gate's verdict on privacy, and the private edits it asked."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self._sec: Security | None = None
        self._files: OrgFiles | None = None
        self.asked: dict[str, float] = {}
        self.lock = threading.Lock()

    def start(self) -> None:
        """The engine starts the skill: the security layer is the policy skill's."""
        from passepartout.org.edit_files import OrgFiles
        from passepartout.security.install import install

        self._sec = install(self.agent)
        inbox = self.agent.config.extra.get("PASSEPARTOUT_ORG_INBOX") or "inbox.org"
        inbox_path = Path(inbox).expanduser()
        if not inbox_path.is_absolute():
            inbox_path = Path(self.agent.config.memex_dir) / inbox_path
        self._files = OrgFiles(resolve=self.resolve, inbox=inbox_path,
                               private_tag=self._sec.private_tag)

    @property
    def sec(self) -> Security:
        if self._sec is None:
            raise RuntimeError("the orgtools skill is not started")
        return self._sec

    @property
    def files(self) -> OrgFiles:
        if self._files is None:
            raise RuntimeError("the orgtools skill is not started")
        return self._files

    def resolve(self, raw: str) -> Path:
        """The real file behind a tool's path, judged as the file tools judge a write."""
        from passepartout.org.outline import OrgEditError
        from passepartout.security.files.paths import denial

        resolved, reason = denial(str(raw), self.sec.path_rules(), writing=True)
        if reason is not None or resolved is None:
            raise OrgEditError(reason or f"{raw}: an unusable path")
        return resolved.path

    def plan(self, name: str, args: dict[str, Any]) -> Plan:
        from passepartout.org.edits import NewHeading

        f = self.files
        if name in ("org-add-heading", "org-capture"):
            new = NewHeading(title=args["title"], tags=tuple(args.get("tags") or ()),
                             properties=dict(args.get("properties") or {}),
                             body=args.get("body") or "", todo=args.get("todo") or None)
            if name == "org-capture":
                return f.plan_capture(new)
            return f.plan_add_heading(args["file"], new, args.get("parent") or None,
                                      args.get("level") or None)
        if name == "org-set-property":
            return f.plan_set_property(args["file"], args["heading"], args["key"],
                                       args["value"])
        if name == "org-set-todo":
            return f.plan_set_todo(args["file"], args["heading"], args.get("state") or None)
        if name == "org-add-note":
            return f.plan_add_note(args["file"], args["heading"], args["note"])
        if name == "org-refile":
            return f.plan_refile(args["file"], args["heading"], args.get("dest") or None,
                                 args.get("to_heading") or None)
        return f.plan_archive(args["file"], args["heading"])

    @staticmethod
    def key(name: str, args: dict[str, Any]) -> str:
        return json.dumps([name, args], sort_keys=True, default=str)

    def gate(self, action: Action, signal: Signal) -> Verdict:
        from passepartout.errors import PipelineError
        from passepartout.org.outline import OrgEditError

        if action.target != "tool" or action.name not in orgtools_NAMES:
            return Verdict.allow("not an org edit")
        tool = AGENT.tool(action.name) if AGENT is not None else None
        try:
            args = tool.validate(action.args) if tool is not None else {}
            plan = self.plan(action.name, args)
        except (OrgEditError, PipelineError, KeyError, ValueError) as err:
            # the tool will say what is wrong; the other gates judge the rest
            return Verdict.allow(f"no edit planned ({str(err)[:200]})")
        if not plan.private:
            return Verdict.allow("touches no private subtree")
        with self.lock:
            now = time.monotonic()
            self.asked = {k: t for k, t in self.asked.items() if now - t < orgtools_APPROVAL_TTL}
            self.asked[self.key(action.name, args)] = now
        return Verdict.ask(f"{action.name} touches private text ({'; '.join(plan.private)}): "
                           "only the person can allow it")

    def run(self, name: str, args: dict[str, Any]) -> str:
        from passepartout.errors import PipelineError
        from passepartout.org.outline import OrgEditError

        try:
            plan = self.plan(name, args)
            if plan.private:
                with self.lock:
                    asked = self.asked.pop(self.key(name, args), None)
                if asked is None or time.monotonic() - asked > orgtools_APPROVAL_TTL:
                    raise OrgEditError(
                        f"refused: this edit touches private text ({'; '.join(plan.private)}) "
                        "and the person was not asked; propose it again to ask them")
            done = self.files.apply(plan)
        except OrgEditError as err:
            raise PipelineError(str(err)) from None
        except OSError as err:
            raise PipelineError(f"the org file could not be written: {err.strerror}") from None
        self.show_in_emacs(plan)
        return done

    def show_in_emacs(self, plan: Plan) -> None:
        """Give the buffers visiting the edited files the same edit (undo takes it back;
        a buffer with unsaved changes keeps them): the protocol's ``org-edit``."""
        from passepartout.protocol import OrgEdited

        channel = self.agent.faces
        broadcast = getattr(channel, "broadcast", None)
        if broadcast is None:
            return
        for path, new in plan.writes.items():
            old = plan.before.get(path)
            if old is not None and len(old) + len(new) < orgtools_EMACS_MAX:
                broadcast(OrgEdited(str(path), old, new))


if AGENT is not None:
    orgtools_SERVICE = orgtools_Service(AGENT)
    run = orgtools_SERVICE.run

    def org_add_heading(file: str, title: str, parent: str = "", level: int = 0,
                        tags: list[str] | None = None, properties: dict[str, str] | None = None,
                        body: str = "", todo: str = "") -> str:
        """Add a heading to an org file: at the end of a heading's subtree, or of the file.

        Args:
            file: the org file, absolute or relative to the workspace
            title: the heading's text
            parent: the heading to add it under (id:ID or a path like A/B); empty: end of file
            level: the heading's level (default: one below the parent, or 1)
            tags: the heading's tags
            properties: properties for its drawer, NAME: value
            body: text under the heading
            todo: a TODO keyword for it, or empty
        """
        return run("org-add-heading", dict(file=file, title=title, parent=parent, level=level,
                                           tags=tags, properties=properties, body=body,
                                           todo=todo))

    def org_set_property(file: str, heading: str, key: str, value: str) -> str:
        """Set a property of an org heading (in its property drawer).

        Args:
            file: the org file, absolute or relative to the workspace
            heading: id:ID or an outline path like Projects/Alpha
            key: the property's name
            value: its value (one line)
        """
        return run("org-set-property", dict(file=file, heading=heading, key=key, value=value))

    def org_set_todo(file: str, heading: str, state: str) -> str:
        """Set the TODO state of an org heading; a repeated task marked done moves to its next date.

        Args:
            file: the org file, absolute or relative to the workspace
            heading: id:ID or an outline path like Projects/Alpha
            state: a TODO keyword of the file (TODO, DONE, ...), or empty for none
        """
        return run("org-set-todo", dict(file=file, heading=heading, state=state))

    def org_add_note(file: str, heading: str, note: str) -> str:
        """Add a dated note under an org heading, as org's add-note does.

        Args:
            file: the org file, absolute or relative to the workspace
            heading: id:ID or an outline path like Projects/Alpha
            note: the note's text
        """
        return run("org-add-note", dict(file=file, heading=heading, note=note))

    def org_refile(file: str, heading: str, to_heading: str = "", dest: str | None = None) -> str:
        """Move an org subtree under another heading, in the same file or another one.

        Args:
            file: the org file holding the subtree, absolute or relative to the workspace
            heading: the subtree: id:ID or an outline path like Projects/Alpha
            to_heading: the heading to move it under; empty for the top level of the file
            dest: the destination org file, if not the same file
        """
        return run("org-refile", dict(file=file, heading=heading, to_heading=to_heading,
                                      dest=dest))

    def org_archive(file: str, heading: str) -> str:
        """Archive an org subtree to FILE_archive, as org's archive-subtree does.

        Args:
            file: the org file, absolute or relative to the workspace
            heading: the subtree: id:ID or an outline path like Projects/Alpha
        """
        return run("org-archive", dict(file=file, heading=heading))

    def org_capture(title: str, body: str = "", tags: list[str] | None = None) -> str:
        """Capture an item into the person's org inbox (a new heading at its end).

        Args:
            title: the item's heading
            body: text under it
            tags: its tags
        """
        return run("org-capture", dict(title=title, body=body, tags=tags))

    orgtools_TOOLS = [
        make_tool(org_add_heading, name="org-add-heading", impact="high"),
        make_tool(org_set_property, name="org-set-property", impact="high"),
        make_tool(org_set_todo, name="org-set-todo", impact="high"),
        make_tool(org_add_note, name="org-add-note", impact="high"),
        make_tool(org_refile, name="org-refile", impact="high"),
        make_tool(org_archive, name="org-archive", impact="high"),
        make_tool(org_capture, name="org-capture", impact="high"),
    ]

    defskill("orgtools", priority=95, depends_on=["policy"], gate=orgtools_SERVICE.gate,
             tools=orgtools_TOOLS, start=orgtools_SERVICE.start)
else:
    defskill("orgtools", priority=95, depends_on=["policy"])
