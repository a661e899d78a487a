"""The event orchestrator (seed 000): the CRON/HOOK nodes of the memex, their jobs,
their hooks, and what a heartbeat tick does with them.

News of a node comes from three places: the bootstrap scan at start, the watcher
while running, and Emacs (an ``:org-edit`` signal).  Each goes through the registry,
which says what really changed; jobs follow the change, and hooks fire on it (not on
the bootstrap scan: finding a node at start is not a change).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from passepartout.errors import ProtocolError
from passepartout.events.approval import JobApprovals, describe_job, job_hash
from passepartout.events.classify import Classifier
from passepartout.events.cron import Clock, Scheduler, make_job
from passepartout.events.dispatch import BackgroundChannel, Dispatcher, Injector, Reflexes, ReflexFn
from passepartout.events.heartbeat import Tick
from passepartout.events.hooks import HookBus, HookHandler, HookResult
from passepartout.events.jobs import Job, OrgNode, ScanProblem, Tier, derive_id
from passepartout.events.leader import Leadership
from passepartout.events.presets import Preset, read_presets
from passepartout.events.registry import NodeChange, NodeRegistry, diff_nodes
from passepartout.events.scan import clean_title, org_files, scan_file, scan_text, worth_scanning
from passepartout.events.seen import SeenNodes
from passepartout.events.watcher import MemexWatcher
from passepartout.org.eventlog import Entry, EventLog, Notifier
from passepartout.security.privacy import DEFAULT_TAG, org_node_private

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Held:
    """A CRON/HOOK heading that waits for the person's approval of its content."""

    node: OrgNode
    hash: str
    why: str  # new | changed | denied
    what: str  # what the person is asked about
    change: NodeChange | None  # the change whose hooks fire once it is approved


HeldHandler = Callable[[Held], Any]


@dataclass
class BootstrapReport:
    files: int = 0
    nodes: int = 0
    jobs: int = 0
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0


class Orchestrator:
    """Registry, scheduler, hooks and dispatch of one agent."""

    def __init__(
        self,
        *,
        home: Path,
        memex_dir: Path,
        scan_dirs: Iterable[str] = ("projects", "system"),
        inject: Injector | None = None,
        notify: Notifier | None = None,
        clock: Clock | None = None,
        tz: dt.tzinfo | None = None,
        watch_delay: float = 0.2,
        approvals: JobApprovals | None = None,
        presets_file: Path | None = None,
    ) -> None:
        self.memex_dir = Path(memex_dir).expanduser()
        # The daemon's presets (events/presets.py), read again when the file changes.
        self.presets_file = presets_file
        self._presets: tuple[tuple[int, int] | None, dict[str, Preset]] | None = None
        self._preset_problems: dict[str, str] = {}
        self.roots = [(self.memex_dir / d).resolve() if d not in (".", "") else
                      self.memex_dir.resolve() for d in scan_dirs]
        self.registry = NodeRegistry()
        self.scheduler = Scheduler(Path(home) / "events" / "cron-state.json", clock=clock, tz=tz)
        self.events = EventLog(Path(home) / "events.org", notify=notify, clock=self.scheduler.clock)
        self.hooks = HookBus(self.events)
        self.reflexes = Reflexes()
        self.dispatcher = Dispatcher(self.reflexes, self.events, self.scheduler.finish, inject)
        self.channel = BackgroundChannel(self.dispatcher)
        self.private_tag = DEFAULT_TAG
        self.dispatcher.is_private = self.is_private
        self.dispatcher.name_of = self.heading_name
        self.dispatcher.model_of = self.heading_model
        self.dispatcher.preset_of = self.heading_preset
        self.classifier: Classifier | None = None
        # Hook names whose handler runs the heading's tier itself (the shipped prompt
        # and summarize): a node carrying one is not also run as a prompt here.
        self.model_hooks: set[str] = set()
        self.ready = threading.Event()
        self.bootstrap_report: BootstrapReport | None = None
        self.seen = SeenNodes(Path(home) / "events" / "nodes.json", self.registry.nodes)
        self._missed: list[NodeChange] = []  # edits made while the agent was down
        self._fired_early: set[str] = set()  # node ids fired before the bootstrap ended
        # The nodes known at the last stop (None: no record), read once when first needed.
        self._record: tuple[dict[str, OrgNode] | None] | None = None
        self._record_lock = threading.Lock()
        self._job_problems: dict[str, ScanProblem] = {}
        self._file_lock = threading.Lock()  # one file read-and-apply at a time
        self._watcher = MemexWatcher(self.roots, self.rescan, delay=watch_delay)
        # One agent per state directory runs cron and hooks (the first to start).
        self.leadership = Leadership(Path(home) / "automation.lock")
        self.leadership.held()
        # The person's sealed answers about headings: with them, a heading runs only when
        # its exact content was approved (the events skill always gives them; without,
        # as in a library use, every heading runs).
        self.approvals = approvals
        self.on_held: HeldHandler | None = None  # asks the person (the events skill)
        self._held: dict[str, Held] = {}
        self._held_lock = threading.RLock()
        self._asked: set[str] = set()  # the hashes asked about in this run
        # A job approved before this version (the schedule tool's first-run record).
        self.legacy_approval: Callable[[OrgNode], bool] | None = None

    # -- what others call --------------------------------------------------------------

    def jobs(self) -> list[dict[str, Any]]:
        """Every cron job as plain data, soonest first (the EPC ``jobs`` method)."""
        return [job.describe() for job in self.scheduler.jobs()]

    def job(self, job_id: str) -> Job | None:
        return self.scheduler.job(job_id)

    def heading_model(self, node_id: str) -> str | None:
        """The model the heading's subtree chose for what runs under it, or None."""
        node = self.registry.node(node_id)
        return node.model if node is not None else None

    def presets(self) -> dict[str, Preset]:
        """The daemon's presets, as the presets file holds them now."""
        if self.presets_file is None:
            return {}
        try:
            stat = self.presets_file.stat()
            key: tuple[int, int] | None = (stat.st_mtime_ns, stat.st_size)
        except OSError:
            key = None
        cached = self._presets
        if cached is None or cached[0] != key:
            problems: dict[str, str] = {}
            cached = (key, read_presets(self.presets_file, problems)
                      if key is not None else {})
            self._presets, self._preset_problems = cached, problems
        return cached[1]

    def heading_preset(self, node_id: str) -> Preset | str | None:
        """The preset the heading's subtree chose (``PASSEPARTOUT_PRESET``) for what
        runs under it; None when it chose none; a text saying why it must not run when
        the daemon does not know that preset, or when the preset changed since the
        person approved the heading (it is then held, and asked again)."""
        node = self.registry.node(node_id)
        name = node.choice.get("PASSEPARTOUT_PRESET") if node is not None else None
        if node is None or not name:
            return None
        preset = self.presets().get(name)
        if preset is None and name in self._preset_problems:
            return (f"its preset {name!r} in {self.presets_file} is malformed: "
                    f"{self._preset_problems[name]}")
        if preset is None:
            return (f"its preset {name!r} is not one the daemon knows (presets are read "
                    f"from {self.presets_file or 'no presets file'})")
        if not self.cleared(node):
            self._hold(node, None)
            return (f"its preset {name!r} changed since it was approved: held until you "
                    "approve it again")
        if node.tier_text and preset.choice.tier:  # the heading's own tier wins
            preset = Preset(preset.name, dataclasses.replace(preset.choice, tier=None))
        return preset

    def heading_name(self, node_id: str) -> str:
        """A heading as the person knows it: its title and file, then its :ID: if it has
        one (an id derived from the outline means nothing to a person)."""
        from passepartout.llm.heading_names import shown_file

        node = self.registry.node(node_id)
        if node is None:
            return node_id
        own = f" {node_id}" if node.properties.get("ID") == node_id else ""
        return f"{node.heading!r} ({shown_file(node.file)}){own}"

    def is_private(self, node_id: str, tag: str | None = None) -> bool:
        """Whether the CRON/HOOK node ``node_id`` lies in a private subtree (org's
        reading of its file on disk, tags inherited and #+FILETAGS)."""
        node = self.registry.node(node_id)
        if node is None:
            return False
        return org_node_private(node.file, node.text, tag or self.private_tag)

    def job_problems(self) -> list[dict[str, str]]:
        """The :CRON: headings that are not scheduled, and why (``cron list`` shows them)."""
        return [{"heading": p.heading or "", "file": p.file, "problem": p.message}
                for p in list(self._job_problems.values())]

    def problems(self) -> list[str]:
        found = [*self.registry.problems(), *self._job_problems.values()]
        return [str(p) for p in found]

    def register_hook(self, name: str, fn: HookHandler, *, kind: str = "action") -> None:
        self.hooks.register(name, fn, kind=kind)

    def register_reflex(self, name: str, fn: ReflexFn) -> None:
        self.reflexes.register(name, fn)

    def set_classifier(self, classifier: Classifier | None) -> None:
        """Use ``classifier`` for jobs without ``:TIER:`` (None: the default one)."""
        self.classifier = classifier
        for node in self.registry.nodes():
            if node.cron is not None and self.cleared(node):
                self._upsert_job(node)

    # -- scanning ---------------------------------------------------------------------

    def bootstrap(self) -> BootstrapReport:
        """Scan every org file under the scan directories.  No hook fires: what changed
        while the agent was down waits for :meth:`fire_missed`."""
        started = time.perf_counter()
        report = BootstrapReport()
        for path in org_files(self.roots):
            with self._file_lock:
                scan = scan_file(path)
                changes = self.registry.replace_file(scan, source="scan")
            report.files += 1
            report.problems += [str(p) for p in scan.problems]
            self._apply(changes, fire=False, save=False)
        before = self._last_record()
        if before is not None:
            self._rescan_outside(before.values())
            missed = diff_nodes(before, {n.id: n for n in self.registry.nodes()}, "scan")
            # An edit that arrived during the scan has fired already.
            self._missed = [c for c in missed if c.node.id not in self._fired_early]
        self._fired_early.clear()
        self.scheduler.save()
        report.nodes = len(self.registry.nodes())
        report.jobs = len(self.scheduler.jobs())
        report.problems += [str(p) for p in self._job_problems.values()]
        report.seconds = time.perf_counter() - started
        self.bootstrap_report = report
        self.ready.set()
        self.seen.save()  # after ready: a change that lands now is saved after this
        log.info("orchestrator: bootstrap scanned %d files in %.2f s: %d nodes, %d jobs, "
                 "%d problems", report.files, report.seconds, report.nodes, report.jobs,
                 len(report.problems))
        return report

    def _rescan_outside(self, known: Iterable[OrgNode]) -> None:
        """Read again the files outside the scan directories that held known nodes."""
        scanned = set(self.registry.files())
        for file in sorted({node.file for node in known} - scanned):
            path = Path(file)
            if not path.is_file() or not worth_scanning(path):
                continue  # gone: its nodes count as removed
            with self._file_lock:
                changes = self.registry.replace_file(scan_file(path), source="scan")
            self._apply(changes, fire=False, save=False)

    def fire_missed(self) -> list[HookResult]:
        """Fire the hooks of the nodes edited, added or removed while the agent was
        down (found by the bootstrap); call once every hook handler is registered."""
        missed, self._missed = self._missed, []
        if missed:
            log.info("orchestrator: %d CRON/HOOK node(s) changed while the agent was down",
                     len(missed))
        return self._fire(missed)

    def rescan(self, path: Path) -> list[NodeChange]:
        """Bring the registry up to date with ``path`` (a file or directory) on disk."""
        path = Path(path)
        if path.is_dir():
            changes: list[NodeChange] = []
            for file in org_files([path]):
                changes += self.rescan(file)
            return changes
        key = str(path.resolve())
        with self._file_lock:
            if path.is_file() and worth_scanning(path):
                changes = self.registry.replace_file(scan_file(path), source="disk")
            else:
                changes = []
                prefix = key.rstrip("/") + "/"
                for known in self.registry.files():
                    if known == key or known.startswith(prefix):  # a file, or a gone directory
                        changes += self.registry.remove_file(known, source="disk")
        self._apply(changes)
        return changes

    def apply_edit(self, payload: Mapping[str, Any], source: str = "emacs") -> list[HookResult]:
        """An ``:org-edit`` from the face ``source`` (Emacs's org minor mode sends them):
        the saved file is rescanned; without a file on disk, the sent node texts are
        used."""
        file = payload.get("file")
        if not isinstance(file, str) or not file:
            raise ProtocolError("an org-edit needs :file, the org file's path")
        path = Path(file).expanduser()
        if not path.is_file():
            return self._apply(self._edit_from_texts(str(path.resolve()), payload, source))
        with self._file_lock:
            known = str(path.resolve()) in self.registry.files()
            changes = self.registry.replace_file(scan_file(path), source=source)
        if known:
            return self._apply(changes)
        # First news of a file outside the scanned directories: its other nodes were
        # already there; only the one the edit names has changed.
        edited = [c for c in changes if _names(payload, c.node)]
        self._apply([c for c in changes if c not in edited], fire=False)
        return self._apply([self._with_old_text(c, payload) for c in edited])

    def _with_old_text(self, change: NodeChange, payload: Mapping[str, Any]) -> NodeChange:
        old_text = payload.get("old")
        if change.kind != "added" or not isinstance(old_text, str) or change.new is None:
            return change
        outline = change.new.outline
        old = next(iter(scan_text(old_text, change.new.file, outline).nodes), None)
        return NodeChange("changed", old, change.new, change.source) if old else change

    def _edit_from_texts(self, file: str, payload: Mapping[str, Any],
                         source: str) -> list[NodeChange]:
        outline = tuple(str(t) for t in (payload.get("outline") or []))
        old_id = payload.get("id")
        old_text, new_text = payload.get("old"), payload.get("new")
        if not old_id and isinstance(old_text, str):
            old_nodes = scan_text(old_text, file, outline).nodes
            old_id = old_nodes[0].id if old_nodes else None
        if not old_id and payload.get("heading"):
            old_id = derive_id(file, [*outline, clean_title(str(payload["heading"]))])
        new_nodes = scan_text(new_text, file, outline).nodes if isinstance(new_text, str) else []
        new = new_nodes[0] if new_nodes and str(payload.get("action")) != "removed" else None
        changes: list[NodeChange] = []
        if old_id and (new is None or new.id != old_id):
            changes += self.registry.put_node(file, str(old_id), None, source)
        if new is not None:
            changes += self.registry.put_node(file, new.id, new, source)
        return changes

    # -- applying changes ---------------------------------------------------------------

    def _apply(self, changes: list[NodeChange], *, fire: bool = True,
               save: bool = True) -> list[HookResult]:
        """Jobs follow the changes; hooks fire on them (unless ``fire`` is off).  A
        heading whose content the person has not approved is held instead."""
        if fire and not self.ready.is_set():
            changes = self._against_record(changes)
        results: list[HookResult] = []
        to_fire: list[NodeChange] = []
        for change in changes:
            new, old = change.new, change.old
            if new is not None and not self.cleared(new):
                self._hold(new, change if fire else None)
                continue
            was_held = self._unhold(new.id if new is not None else (old.id if old else ""))
            if new is not None and new.cron is not None:
                self._upsert_job(new, save=save)
            elif old is not None and old.cron is not None:
                current = self.registry.node(old.id)
                if current is not None and current.cron is not None:
                    continue  # moved to another file, which holds it now
                self._job_problems.pop(old.id, None)
                if self.scheduler.remove(old.id) is not None:
                    log.info("cron %r removed", old.heading)
            if new is None and was_held is not None:
                continue  # a heading never approved went: nothing of it ran, nothing fires
            to_fire.append(change)
        if fire:
            if not self.ready.is_set():
                self._fired_early.update(c.node.id for c in to_fire)
            results = self._fire(to_fire)
        if changes and self.ready.is_set():  # a half-done bootstrap is not a record
            self.seen.save_soon()
        return results

    # -- the person's approval of what runs ---------------------------------------------

    def content_hash(self, node: OrgNode) -> str:
        return job_hash(node, self.memex_dir, self.presets())

    def cleared(self, node: OrgNode) -> bool:
        """The person approved ``node`` exactly as it is now."""
        if self.approvals is None:
            return True
        digest = self.content_hash(node)
        if self.approvals.approved(digest):
            return True
        legacy = self.legacy_approval
        if legacy is not None and legacy(node):
            # A job the model made whose prompt the person approved before this
            # version: that approval becomes this one, once.
            self.approvals.record(digest, node, self.memex_dir, allowed=True)
            self.events.record(Entry("approval", f"{self.heading_name(node.id)}: approved "
                                     "before, its approval carried over", level="info",
                                     node_id=node.id, file=node.file))
            return True
        return False

    def held(self) -> list[Held]:
        """The headings waiting for the person's approval (or denied), by file."""
        with self._held_lock:
            return sorted(self._held.values(), key=lambda h: (h.node.file, h.node.heading))

    def held_jobs(self) -> list[dict[str, Any]]:
        """The held headings as plain data (the EPC ``held-jobs`` method)."""
        return [{"id": h.node.id, "heading": h.node.heading, "file": h.node.file,
                 "why": h.why, "what": h.what, "hash": h.hash,
                 "kind": "cron" if h.node.cron is not None else "hook"} for h in self.held()]

    def _unhold(self, node_id: str) -> Held | None:
        with self._held_lock:
            return self._held.pop(node_id, None)

    def _hold(self, node: OrgNode, change: NodeChange | None) -> Held:
        """Keep ``node`` from running; say so and ask the person (once per content)."""
        assert self.approvals is not None
        digest = self.content_hash(node)
        if self.approvals.denied(digest):
            why = "denied"
        else:
            why = "changed" if self.approvals.known_id(node.id) else "new"
        tier = None
        if node.cron is not None and not node.tier_text:
            try:
                tier = make_job(node, self.classifier).tier.value
            except ValueError:
                tier = None
        held = Held(node, digest, why, describe_job(node, self.memex_dir, why, tier,
                                                        self.presets()), change)
        with self._held_lock:
            previous = self._held.get(node.id)
            self._held[node.id] = held
        self._job_problems.pop(node.id, None)
        if self.scheduler.remove(node.id) is not None:
            log.info("cron %r held: its content is not approved", node.heading)
        if previous is not None and previous.hash == digest:
            return held  # said already
        if why == "denied":
            log.info("%s: denied by the person, not run", held.what)
            return held
        self.events.record(Entry(
            "approval", f"{held.what}: held until you approve it",
            f"Approve it where you are asked, or run: passepartout cron allow {node.id}",
            level="warning", node_id=node.id, file=node.file))
        if digest not in self._asked and self.on_held is not None:
            self._asked.add(digest)
            try:
                self.on_held(held)
            except Exception:
                log.exception("asking about the held heading %s failed", node.id)
        return held

    def allow(self, node_id: str, digest: str | None = None) -> Held:
        """The person approves the held heading ``node_id`` as it is now (and, with
        ``digest``, only if that is still its content): it is scheduled, and the hooks
        of the change that was held fire.  ValueError says why not."""
        if self.approvals is None:
            raise ValueError("this agent does not hold jobs for approval")
        with self._held_lock:
            held = self._held.get(node_id)
            if held is None:
                raise ValueError(f"no held job has the id {node_id!r}")
            current = self.registry.node(node_id)
            if current is None or self.content_hash(current) != held.hash \
                    or (digest is not None and digest != held.hash):
                raise ValueError(f"{held.node.heading!r} changed since it was shown; "
                                 "it is asked again as it is now")
            self.approvals.record(held.hash, held.node, self.memex_dir, allowed=True)
            del self._held[node_id]
        self.events.record(Entry("approval", f"{held.what}: approved", level="info",
                                 node_id=node_id, file=held.node.file))
        if held.node.cron is not None:
            self._upsert_job(held.node)
        if held.change is not None:
            self._fire([held.change])
        return held

    def deny(self, node_id: str) -> Held:
        """The person says no to the heading ``node_id`` as it is now (held or running):
        it does not run, and is not asked about again until it changes."""
        if self.approvals is None:
            raise ValueError("this agent does not hold jobs for approval")
        node = self.registry.node(node_id)
        if node is None:
            raise ValueError(f"no job or hook heading has the id {node_id!r}")
        digest = self.content_hash(node)
        self.approvals.record(digest, node, self.memex_dir, allowed=False)
        held = self._hold(node, None)
        self.events.record(Entry("approval", f"{held.what}: denied", level="info",
                                 node_id=node_id, file=node.file))
        return held

    def _last_record(self) -> dict[str, OrgNode] | None:
        with self._record_lock:
            if self._record is None:
                self._record = (self.seen.load(),)
            return self._record[0]

    def _against_record(self, changes: list[NodeChange]) -> list[NodeChange]:
        """An edit that comes during the start's scan is news of a file the registry
        does not know yet: against the record of the last stop, a node that was there
        is "changed", or no news at all when it is as it was."""
        record = self._last_record() or {}
        out: list[NodeChange] = []
        for change in changes:
            was = record.get(change.new.id) if change.kind == "added" and change.new else None
            if was is None or change.new is None:
                out.append(change)
            else:
                out += diff_nodes({was.id: was}, {change.new.id: change.new}, change.source)
        return out

    def _fire(self, changes: list[NodeChange]) -> list[HookResult]:
        results: list[HookResult] = []
        if changes and not self.leadership.held():
            return results  # the agent holding the automation lock fires them
        for change in changes:
            if not self._may_fire(change):
                continue
            results += self.hooks.fire(change)
            if change.new is not None and change.new.hooks:
                self._prompt_hook(change.new)
        return results

    def _may_fire(self, change: NodeChange) -> bool:
        """A change fires hooks only for a heading the person approved."""
        if self.approvals is None:
            return True
        if change.new is not None:
            return self.cleared(change.new)
        return change.old is not None and self.approvals.approved(self.content_hash(change.old))

    def _upsert_job(self, node: OrgNode, *, save: bool = True) -> None:
        try:
            job = make_job(node, self.classifier)
        except ValueError as err:
            problem = ScanProblem(node.file, str(err), node.heading)
            self._job_problems[node.id] = problem
            log.warning("cron job not loaded: %s", problem)
            self.scheduler.remove(node.id)
            return
        self._job_problems.pop(node.id, None)
        self.scheduler.upsert(job, save=save)

    def _prompt_hook(self, node: OrgNode) -> None:
        # Only a hook node that asks for a model tier spends anything on an edit.
        tier_text = node.properties.get("TIER")
        if not tier_text or self.model_hooks.intersection(node.hooks):
            return
        try:
            tier = Tier.parse(tier_text)
        except ValueError as err:
            self.events.record(Entry("hook", f"{node.heading!r}: {err}", level="warning",
                                     node_id=node.id, file=node.file))
            return
        if tier is not Tier.REFLEX:
            self.dispatcher.run_prompt(node.id, node.prompt, tier, "hook", node.file)

    # -- the heartbeat -------------------------------------------------------------------

    def on_heartbeat(self, tick: Tick | None = None) -> list[str]:
        """Run the due jobs; the ids of those started."""
        if not self.leadership.held():
            return []  # another agent on this state directory runs them
        now = self.scheduler.clock()
        started = []
        for job in self.scheduler.due(now):
            node = self.registry.node(job.id)
            if self.approvals is not None and (node is None or not self.cleared(node)):
                if node is not None:  # its approval went (a record tampered with): held
                    self._hold(node, None)
                else:
                    self.scheduler.remove(job.id)
                continue
            note = self.scheduler.start_run(job, now)
            started.append(job.id)
            self.dispatcher.run(job, note)
        return started

    # -- the watcher ---------------------------------------------------------------------

    def start_watcher(self) -> list[Path]:
        return self._watcher.start()

    def stop(self) -> None:
        self._watcher.stop()
        self.scheduler.close()
        self.seen.close()
        self.leadership.release()

    @property
    def watching(self) -> bool:
        return self._watcher.running


def _names(payload: Mapping[str, Any], node: OrgNode) -> bool:
    """True when an org-edit plist is about ``node`` (by id, else by title and outline)."""
    if payload.get("id"):
        return str(payload["id"]) == node.id
    outline = tuple(str(t) for t in (payload.get("outline") or []))
    return str(payload.get("heading") or "") == node.heading and outline == node.outline


__all__ = ["BootstrapReport", "Entry", "Held", "Orchestrator"]
