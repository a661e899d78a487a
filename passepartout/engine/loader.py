"""Loading skills: one path for the skills that ship and the person's own.

Each skill file runs in its own module, ``passepartout.skills.<name>``; it exports only
the names that start with ``<name>_``.  A shipped skill is recognised by its pinned
hash (:mod:`~passepartout.engine.pinned`) and runs as the project's own code.  Any
other skill must pass the vetting allowlist, and runs only once the person trusted its
exact sha256 (:mod:`~passepartout.engine.trust`); it then runs with confined builtins
and its host (:class:`~passepartout.engine.skillhost.SkillHost`) does not give it the
agent.  Until then the catalog says it is waiting, and why.  What a skill file
registers through its host is applied when the engine starts it and taken back when it
stops it.  Loading has a timeout; a skill's failure
is recorded in the catalog and the others load.  Hot reload builds the new version
beside the old one and swaps only when it loaded cleanly (and, changed, was trusted).
"""

from __future__ import annotations

import contextvars
import enum
import logging
import sys
import threading
import time
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import passepartout.skills as skills_package
from passepartout.engine import discovery, literate, vetting
from passepartout.engine.asking import SkillAsker
from passepartout.engine.confine import skill_builtins
from passepartout.engine.pinned import SHIPPED, SHIPPED_SKILLS_DIR, is_pinned, sha256_of
from passepartout.engine.registry import Registry
from passepartout.engine.skill import Skill, _collector, _host
from passepartout.engine.skillhost import Registrations, SkillHost, for_agent
from passepartout.engine.trust import TrustStore
from passepartout.errors import BootError, SkillError

if TYPE_CHECKING:
    from passepartout.agent import Agent

log = logging.getLogger(__name__)

__all__ = ["SHIPPED_SKILLS_DIR", "CatalogEntry", "SkillLoader", "Status", "require"]


class Status(enum.StrEnum):
    DISCOVERED = "discovered"
    LOADING = "loading"
    READY = "ready"
    FAILED = "failed"
    BLOCKED = "blocked"
    WAITING = "waiting"  # for the person to trust this exact content


@dataclass
class CatalogEntry:
    """What the engine knows of one skill file."""

    name: str
    path: Path
    status: Status = Status.DISCOVERED
    error: str | None = None
    mandatory: bool = False
    load_seconds: float = 0.0
    skills: list[str] = field(default_factory=list)
    reloads: int = 0
    sha256: str = ""
    pinned: bool = False

    def describe(self) -> str:
        if self.status is Status.WAITING and self.error:
            return f"{self.name}: {self.error}"
        text = f"{self.name}: {self.status}"
        return f"{text} ({self.error})" if self.error else text


@dataclass
class _Loaded:
    module: types.ModuleType
    skills: list[Skill]
    exports: dict[str, Any]
    sha256: str = ""
    pinned: bool = False
    registrations: Registrations | None = None


class SkillLoader:
    """Discovers, orders, vets and loads skills into a :class:`Registry`."""

    def __init__(
        self,
        registry: Registry,
        dirs: Iterable[Path] = (SHIPPED_SKILLS_DIR,),
        *,
        mandatory: Iterable[str] = (),
        timeout: float = 5.0,
        host: Agent | None = None,
        trust: TrustStore | None = None,
    ) -> None:
        """``trust``: the person's trusted skills (default: the host's state directory;
        without host or trust, only the shipped skills load)."""
        self.registry = registry
        self.host = host
        self.dirs = [Path(d) for d in dirs]
        self.mandatory = tuple(mandatory)
        self.timeout = timeout
        self.catalog: dict[str, CatalogEntry] = {}
        self._lock = threading.RLock()
        config = getattr(host, "config", None)
        if trust is None and config is not None:
            trust = TrustStore(Path(config.home))
        self.trust = trust
        # Which skill holds each channel name (a second registration is an error).
        self.channel_owners: dict[str, str] = {}
        self._registrations: dict[str, Registrations] = {}
        # Told when a skill waits for the person (the engine's asking, see asking.py).
        self.on_waiting: Callable[[CatalogEntry], None] | None = None
        self.asker: SkillAsker | None = SkillAsker(host, self) if host is not None else None

    def load_all(self) -> dict[str, CatalogEntry]:
        """Load every skill in dependency order; a broken mandatory skill stops the boot."""
        files = discovery.discover(self.dirs)
        order, blocked = discovery.topological_order(files)
        for entry in files:
            self.catalog[entry.name] = CatalogEntry(
                entry.name, entry.path, mandatory=entry.name in self.mandatory
            )
        for name, reason in blocked.items():
            if name in self.catalog:
                self._set(self.catalog[name], Status.BLOCKED, reason)
        for entry in order:
            self._load_into_registry(entry.path, self.catalog[entry.name])
        self._check_mandatory()
        if self.asker is not None:
            self.asker.attach()
        return self.catalog

    def _check_mandatory(self) -> None:
        problems = []
        for name in self.mandatory:
            entry = self.catalog.get(name)
            if entry is None:
                where = ", ".join(str(d) for d in self.dirs)
                problems.append(f"mandatory skill {name!r} was not found in {where}")
            elif entry.status is not Status.READY:
                problems.append(f"mandatory skill {name!r} is {entry.status}: {entry.error}")
        if problems:
            raise BootError("cannot start safely: " + "; ".join(problems))

    def reload(self, name: str) -> CatalogEntry:
        """Load the skill's file again; a broken new version leaves the old one serving.
        The skills that depend on it load again after it, in order: what they set up
        lived in the services of the old one (an events skill's new orchestrator has
        none of the hook handlers and cron reflexes the others gave the old)."""
        with self._lock:
            entry = self._reload_one(name)
            if entry.status is Status.READY and not entry.error:
                self._reload_dependents(name)
            return entry

    def _reload_dependents(self, name: str) -> None:
        files = discovery.discover(self.dirs)
        order, _blocked = discovery.topological_order(files)
        by_name = {f.name: f for f in files}
        affected = {name}
        for found in order:  # a dependency comes before the skills that use it
            uses = {discovery.resolve(d, by_name) for d in found.depends_on}
            if found.name == name or not uses & affected:
                continue
            affected.add(found.name)
            entry = self.catalog.get(found.name)
            if entry is not None and entry.status is Status.READY:
                log.info("skill %s: loaded again after %s", found.name, name)
                self._reload_one(found.name)

    def _reload_one(self, name: str) -> CatalogEntry:
        with self._lock:
            entry = self.catalog.get(name)
            if entry is None:
                raise SkillError(f"no skill named {name!r}", skill=name)
            entry.reloads += 1
            previous = entry.status
            try:
                loaded = self.load_module(entry.path, name)
            except SkillError as err:
                if previous is Status.READY:
                    entry.error = f"reload failed, previous version still serving: {err.message}"
                else:
                    self._set(entry, _status_for(err), err.message)
                log.warning("skill %s: %s", name, entry.error)
                self._note_waiting(entry, err)
                return entry
            self._install(entry, loaded)
            return entry

    def add(self, path: Path) -> CatalogEntry:
        """Load a skill file that appeared since boot (a known name is reloaded)."""
        found = discovery.read_metadata(Path(path))
        with self._lock:
            if found.name in self.catalog:
                return self.reload(found.name)
            entry = self.catalog[found.name] = CatalogEntry(found.name, found.path)
            if found.error:
                self._set(entry, Status.BLOCKED, found.error)
                return entry
            files = {f.name: f for f in discovery.discover(self.dirs)}
            ready = {n for n, e in self.catalog.items() if e.status is Status.READY}
            missing = [d for d in found.depends_on if discovery.resolve(d, files) not in ready]
            if missing:
                self._set(entry, Status.BLOCKED, f"needs skills that are not ready: {missing}")
                return entry
            self._load_into_registry(found.path, entry)
            return entry

    def _load_into_registry(self, path: Path, entry: CatalogEntry) -> None:
        self._set(entry, Status.LOADING, None)
        started = time.perf_counter()
        try:
            loaded = self.load_module(path, entry.name)
        except SkillError as err:
            self._set(entry, _status_for(err), err.message)
            log.error("skill %s %s: %s", entry.name, entry.status, err.message)
            self._note_waiting(entry, err)
            return
        entry.load_seconds = time.perf_counter() - started
        self._install(entry, loaded)

    def _note_waiting(self, entry: CatalogEntry, err: SkillError) -> None:
        if err.fields.get("stage") != "trust":
            return
        entry.sha256 = str(err.fields.get("sha256", ""))
        if self.on_waiting is not None:
            try:
                self.on_waiting(entry)
            except Exception:  # asking must never break loading
                log.exception("asking the person about skill %s failed", entry.name)

    def waiting(self) -> list[CatalogEntry]:
        """The skills whose current file waits for the person's trust."""
        return [
            e for e in self.report()
            if e.status is Status.WAITING or "waiting for your approval" in (e.error or "")
        ]

    def _install(self, entry: CatalogEntry, loaded: _Loaded) -> None:
        self._stop(entry)
        for old in entry.skills:
            self.registry.remove(old)
        for skill in loaded.skills:
            skill.module = loaded.module.__name__
            skill.shipped = loaded.pinned
            self.registry.add(skill)
        self.registry.set_exports(entry.name, loaded.exports)
        if loaded.registrations is not None:
            self._registrations[entry.name] = loaded.registrations
        entry.skills = [s.name for s in loaded.skills]
        entry.sha256, entry.pinned = loaded.sha256, loaded.pinned
        sys.modules[loaded.module.__name__] = loaded.module
        setattr(skills_package, entry.name, loaded.module)
        self._set(entry, Status.READY, None)
        failed = self._start(entry)
        if failed is not None:  # a skill that cannot start does not serve half-started
            self._stop(entry)
            for name in entry.skills:
                self.registry.remove(name)
            entry.skills = []
            self._set(entry, Status.FAILED, failed)
            log.error("skill %s failed: %s", entry.name, failed)

    def _start(self, entry: CatalogEntry) -> str | None:
        """Apply what the file registered, then run the start of each of its skills; why
        one failed, or None."""
        registrations = self._registrations.get(entry.name)
        if registrations is not None:
            try:
                registrations.start()
            except SkillError as err:
                return err.message
        for name in entry.skills:
            skill = self.registry.get(name)
            if skill is None or skill.start is None:
                continue
            failure: list[BaseException] = []

            def run(start: Callable[[], None] = skill.start,
                    failure: list[BaseException] = failure) -> None:
                try:
                    start()
                except Exception as err:
                    failure.append(err)

            # Held to the load's time limit: a start that hangs must not hold up the boot.
            thread = threading.Thread(target=run, name=f"skill-start-{name}", daemon=True)
            thread.start()
            thread.join(self.timeout)
            if thread.is_alive():
                return f"did not start within {self.timeout:g} s"
            if failure:
                return f"raised {type(failure[0]).__name__} in its start: {failure[0]}"
        return None

    def _stop(self, entry: CatalogEntry) -> None:
        """Run the stop of each of the file's skills (a failing stop is logged)."""
        for name in reversed(entry.skills):
            skill = self.registry.get(name)
            if skill is None or skill.stop is None:
                continue
            try:
                skill.stop()
            except Exception:
                log.exception("skill %s failed in its stop", name)
        registrations = self._registrations.pop(entry.name, None)
        if registrations is not None:
            registrations.stop()

    def stop_all(self) -> None:
        """Stop every loaded skill, the last loaded first (the agent is stopping)."""
        with self._lock:
            for entry in reversed(list(self.catalog.values())):
                self._stop(entry)

    def load_module(self, path: Path, name: str) -> _Loaded:
        raw = _read_bytes(path, name)  # read once: what is hashed is what runs
        digest = sha256_of(raw)
        pinned = is_pinned(path.name, digest)
        source = _source(raw, path, name)
        try:
            code = compile(source, str(path), "exec", dont_inherit=True)
            findings = [] if pinned else vetting.vet(source, str(path))
        except SyntaxError as err:
            raise SkillError(
                f"syntax error at line {err.lineno}: {err.msg}", skill=name, stage="syntax"
            ) from None
        if not pinned and _is_shipped_place(path):
            raise SkillError(
                f"{path.name} changed since it shipped (sha256 {digest[:16]}...): restore it, "
                "or run `make pin-skills` after changing it on purpose",
                skill=name,
                stage="vetting",
            )
        if findings:
            raise SkillError("; ".join(map(str, findings)), skill=name, stage="vetting")
        if not pinned and (self.trust is None or not self.trust.is_trusted(name, digest)):
            raise SkillError(
                waiting_text(name, digest), skill=name, stage="trust", sha256=digest
            )
        module = types.ModuleType(f"passepartout.skills.{name}")
        module.__file__ = str(path)
        if not pinned:
            module.__dict__["__builtins__"] = skill_builtins()
        registrations = Registrations(name)
        host = None if self.host is None else for_agent(
            self.host, name, registrations, shipped=pinned, channel_owners=self.channel_owners)
        # While it runs the module is importable by its name (dataclasses looks it up).
        previous = sys.modules.get(module.__name__)
        sys.modules[module.__name__] = module
        try:
            collected = self._run_with_timeout(code, module, name, host)
        except SkillError:
            if previous is not None:
                sys.modules[module.__name__] = previous
            else:
                sys.modules.pop(module.__name__, None)
            raise
        prefix = f"{name}_"
        exports = {k: v for k, v in vars(module).items() if k.startswith(prefix)}
        module.__all__ = sorted(exports)  # type: ignore[attr-defined]
        return _Loaded(module, collected, exports, digest, pinned, registrations)

    def _run_with_timeout(
        self, code: types.CodeType, module: types.ModuleType, name: str,
        host: SkillHost | None,
    ) -> list[Skill]:
        collected: list[Skill] = []
        failure: list[BaseException] = []

        def run() -> None:
            _collector.set(collected)
            _host.set(host)
            try:
                exec(code, module.__dict__)
            except BaseException as err:  # anything a skill raises is its own failure
                failure.append(err)

        thread = threading.Thread(
            target=contextvars.Context().run, args=(run,), name=f"skill-load-{name}", daemon=True
        )
        thread.start()
        thread.join(self.timeout)
        if thread.is_alive():
            raise SkillError(
                f"did not finish loading within {self.timeout:g} s", skill=name, stage="timeout"
            )
        if failure:
            err = failure[0]
            raise SkillError(
                f"raised {type(err).__name__} while loading: {err}", skill=name, stage="load"
            ) from err
        return collected

    def _set(self, entry: CatalogEntry, status: Status, error: str | None) -> None:
        entry.status = status
        entry.error = error

    def report(self) -> list[CatalogEntry]:
        return [self.catalog[k] for k in sorted(self.catalog)]


def _status_for(err: SkillError) -> Status:
    stage = err.fields.get("stage")
    return {"vetting": Status.BLOCKED, "trust": Status.WAITING}.get(str(stage), Status.FAILED)


def waiting_text(name: str, digest: str) -> str:
    return (
        f"waiting for your approval (sha256 {digest[:16]}...): "
        f"run `passepartout skills trust {name}` or answer in Emacs"
    )


def _is_shipped_place(path: Path) -> bool:
    try:
        return path.name in SHIPPED and path.resolve().parent == SHIPPED_SKILLS_DIR
    except OSError:
        return False


def _read_bytes(path: Path, name: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as err:
        raise SkillError(f"cannot read {path}: {err}", skill=name, stage="read") from None


def _source(raw: bytes, path: Path, name: str) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise SkillError(f"cannot read {path}: {err}", skill=name, stage="read") from None
    if path.suffix == ".org":
        try:
            return literate.python_code(text)
        except ValueError as err:
            raise SkillError(f"malformed org file: {err}", skill=name, stage="syntax") from None
    return text


def require(registry: Registry, name: str) -> Any:
    """The exported names of a ready skill (for skills that depend on it)."""
    exports = registry.exports(name)
    if exports is None:
        raise SkillError(f"skill {name!r} is not loaded", skill=name)
    return exports
