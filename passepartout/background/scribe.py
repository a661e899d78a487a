"""The scribe: the day's chat sessions and events distilled into dated notes.

Its cron job is a reflex: it gathers what is new since its last note (messages of the
persisted chat sessions, and ``events.org`` entries other than the background jobs'
own) and, only when there is some, asks the cognition tier's model once for a note.
The reply becomes a heading "YYYY-MM-DD Day: notes of the day" at the end of the notes
file (``:NOTES_FILE:`` on the job's heading, default ``notes/scribe.org`` in the
memex; a new file there gets only its title line), proposed as an ``org-add-heading``
call that passes the gates, with links back: ``[[passepartout:SESSION]]`` to each
chat (Emacs opens it) and to ``events.org``.  Nothing new: no model call, no write.

Private text: entries of ``events.org`` about headings in a private subtree are left
out, and every request to a remote model passes the privacy filter anyway.  The
"since" mark moves only when a note was proposed, so a failed call loses nothing.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import uuid
from dataclasses import dataclass
from pathlib import Path

from passepartout.background.acts import SOURCE
from passepartout.background.jobs import DAYS, JobSpec
from passepartout.background.service import Background
from passepartout.events.jobs import Job
from passepartout.fsutil import atomic_write
from passepartout.llm.tokens import content_text
from passepartout.org.drawer import entry_properties
from passepartout.signals import Keyword, Signal
from passepartout.turn import TurnChoice, TurnContext

log = logging.getLogger(__name__)

NAME = "scribe"
DEFAULT_NOTES = "notes/scribe.org"
MESSAGE_MAX = 1500  # characters of one message in the prompt
MATERIAL_MAX = 16000  # characters of material in the prompt
OWN_KINDS = frozenset({"background", "scribe", "gardener", "archivist"})
ENTRY = re.compile(r"^\* \[(\d{4}-\d{2}-\d{2}) \w+ (\d{2}:\d{2}:\d{2})\] ([^:\n]+): (.*)$")
PROMPT = ("You are the scribe of a personal org-mode memex.  Distil the chat sessions and "
          "events below, from {start} to {end}, into a short note worth keeping: "
          "decisions, facts learned, things done, open questions.  Answer with the note "
          "only, as plain org body text (paragraphs or a list), no headings.\n\n")

SPEC = JobSpec(
    name=NAME,
    title="Scribe: the day's chats and events into notes",
    at=dt.time(23, 30),
    repeat="+1d",
    body=("Distils the chat sessions and events.org since its last note into a dated note "
          "in :NOTES_FILE:, with links back.  One cognition-tier model call, only when "
          "there is something new."),
    properties={"NOTES_FILE": DEFAULT_NOTES},
)


@dataclass(frozen=True)
class EventItem:
    when: dt.datetime
    kind: str
    title: str
    node: str | None
    text: str


def read_events(path: Path, tz: dt.tzinfo | None) -> list[EventItem]:
    """The entries of ``events.org`` (as :class:`EventLog` writes them)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as err:
        log.warning("scribe: %s is unreadable: %s", path, err)
        return []
    items: list[EventItem] = []
    current: dict[str, object] | None = None
    body: list[str] = []

    def close() -> None:
        if current is not None:
            # The drawer EventLog writes after the headline: :LEVEL:, :NODE:, :FILE:.
            _planning, props, rest = entry_properties(body)
            node = (props.get("NODE") or "").split()
            items.append(EventItem(text="\n".join(body[rest:]).strip(),
                                   node=node[0] if node else None,
                                   **current))  # type: ignore[arg-type]

    for line in lines:
        match = ENTRY.match(line)
        if match:
            close()
            body = []
            try:
                when = dt.datetime.fromisoformat(f"{match.group(1)}T{match.group(2)}")
            except ValueError:
                current = None
                continue
            current = {"when": when.replace(tzinfo=tz), "kind": match.group(3).strip(),
                       "title": match.group(4).strip()}
        elif current is not None:
            body.append(line)
    close()
    return items


@dataclass
class Material:
    """What is new since the scribe's last note."""

    sessions: dict[str, list[str]]  # session -> lines
    events: list[EventItem]

    def empty(self) -> bool:
        return not self.sessions and not self.events

    def text(self) -> str:
        parts: list[str] = []
        for session, lines in self.sessions.items():
            parts.append(f"Chat session {session}:\n" + "\n".join(lines))
        if self.events:
            parts.append("Events:\n" + "\n".join(
                f"- {e.when:%Y-%m-%d %H:%M} {e.kind}: {e.title}"
                + (f"\n  {e.text[:MESSAGE_MAX]}" if e.text else "") for e in self.events))
        joined = "\n\n".join(parts)
        return joined if len(joined) <= MATERIAL_MAX else (
            joined[:MATERIAL_MAX] + "\n[... more material left out]")


class Scribe:
    """The reflex of the scribe's cron job, and what it does with the model's note."""

    def __init__(self, background: Background) -> None:
        self.bg = background

    def since(self, now: dt.datetime) -> dt.datetime:
        state = self.bg.load(NAME)
        try:
            return dt.datetime.fromisoformat(str(state["since"]))
        except (KeyError, ValueError):
            return now.replace(hour=0, minute=0, second=0, microsecond=0)  # the day's

    def gather(self, start: dt.datetime, end: dt.datetime) -> Material:
        sessions: dict[str, list[str]] = {}
        store = self.bg.agent.services.sessions
        since = getattr(store, "since", None)
        found = since(start.timestamp() - 1e-6) if callable(since) else []
        for session, when, message in found:
            role = str(message.get("role") or "")
            text = content_text(message.get("content")).strip()
            if role not in ("user", "assistant") or not text or when >= end.timestamp():
                continue
            sessions.setdefault(session, []).append(f"{role}: {text[:MESSAGE_MAX]}")
        ours = self.bg.node_ids()
        is_private = self.bg.orchestrator.is_private
        events = [e for e in read_events(self.bg.events.path, start.tzinfo)
                  if start <= e.when < end and e.kind not in OWN_KINDS
                  and e.node not in ours and not (e.node and is_private(e.node))]
        return Material(sessions, events)

    def __call__(self, job: Job) -> str:
        # Whole seconds (events.org's resolution): what falls in the second the run
        # started in belongs to the next run, so nothing is lost or counted twice.
        end = self.bg.now().replace(microsecond=0)
        start = self.since(end)
        material = self.gather(start, end)
        if material.empty():
            return f"nothing new since {start:%Y-%m-%d %H:%M}"
        prompt = PROMPT.format(start=f"{start:%Y-%m-%d %H:%M}", end=f"{end:%Y-%m-%d %H:%M}")
        turn = f"{NAME}-{uuid.uuid4().hex[:10]}"
        notes = self.notes_file(job)
        self.bg.outcomes.expect(turn, lambda text: self.write(job, notes, start, end,
                                                              material, text))
        context = TurnContext(face=SOURCE, origin="cron", heading=job.id, turn_id=turn,
                              choice=TurnChoice(tier="cognition"),
                              private=self.bg.orchestrator.is_private(job.id))
        signal = Signal(payload={"sensor": Keyword("user-input"),
                                 "text": prompt + material.text()}, turn=context)
        if not self.bg.agent.stimuli.inject(signal):
            self.bg.outcomes.forget(turn)
            raise RuntimeError("the agent is not taking input; no note asked for")
        return (f"asked the cognition model for a note of {len(material.sessions)} chat "
                f"session(s) and {len(material.events)} event(s)")

    def notes_file(self, job: Job) -> Path:
        raw = Path(self.bg.setting(job, "NOTES_FILE", DEFAULT_NOTES)).expanduser()
        return raw if raw.is_absolute() else self.bg.memex / raw

    def start_notes(self, notes: Path) -> None:
        """A new notes file holds only its title (the note itself is proposed), and is
        made only inside the memex: a :NOTES_FILE: elsewhere must exist already."""
        memex = self.bg.memex.resolve()
        target = notes.parent.resolve() / notes.name
        if not target.is_relative_to(memex) or notes.suffix != ".org" or notes.is_symlink():
            log.warning("scribe: %s is not an org file inside the memex; not made", notes)
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, "#+TITLE: Scribe notes\n")

    def write(self, job: Job, notes: Path, start: dt.datetime, end: dt.datetime,
              material: Material, text: str) -> None:
        """Propose the note (the model's ``text``) as a heading of the notes file."""
        if not notes.exists():
            self.start_notes(notes)
        links = [f"- [[passepartout:{s}][chat {s}]] ({len(lines)} message(s))"
                 for s, lines in material.sessions.items()]
        if material.events:
            links.append(f"- [[file:{self.bg.events.path}][events.org]] "
                         f"({len(material.events)} event(s))")
        body = f"{text.strip()}\n\nSources:\n" + "\n".join(links)
        title = f"{end:%Y-%m-%d} {DAYS[end.weekday()]}: notes of the day"
        props = {"SCRIBE_FROM": start.isoformat(timespec="minutes"),
                 "SCRIBE_TO": end.isoformat(timespec="minutes")}
        # The mark moves before the proposal goes out: the note may be written (on
        # another lane) before propose returns, and the next run must not see this
        # material again.  A proposal that could not be made puts it back.
        before = self.bg.load(NAME)
        self.bg.save(NAME, {**before, "since": end.isoformat()})
        if not self.bg.propose(NAME, job, "org-add-heading",
                               {"file": str(notes), "title": title, "properties": props,
                                "body": body}):
            self.bg.save(NAME, before)
