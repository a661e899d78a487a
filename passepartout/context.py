"""Context assembly: the seeds' foveal-peripheral rendering of org memory, and the fit to
CONTEXT_MAX_TOKENS.

The prompt is a stable prefix (instructions, skills' augments; the tools go beside it)
that providers can cache, then the conversation, then the variable context attached to
the current input.  The fovea is the heading the person is at, in full; its ancestors,
siblings and children are headlines; related nodes come from the memory store's
similarity search when it has one.

To fit the budget, the least useful goes first: related nodes, siblings, then the oldest
turns (whole turns, so a tool call never loses its result), then the ancestors and the
fovea, then older tool outputs of the current turn are condensed.  The prefix and the
current input are never cut: if they alone do not fit, that is a clear error.
"""

from __future__ import annotations

import logging
import re
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from passepartout.errors import PipelineError
from passepartout.llm.tokens import MESSAGE_OVERHEAD, REPLY_PRIMING, content_text
from passepartout.org.entry import entry_lines
from passepartout.org.heading import heading_line
from passepartout.security.privacy import DEFAULT_TAG as DEFAULT_PRIVATE_TAG
from passepartout.security.privacy import node_is_private

log = logging.getLogger(__name__)

Message = dict[str, Any]
SIBLINGS_SHOWN = 12
CHILDREN_SHOWN = 20
RELATED_SHOWN = 5
RELATED_THRESHOLD = 0.75  # the original's cut for semantic relevance (embeddings only)
FOCUS_BODY_MAX = 4000  # characters of a focused heading's text that Emacs sent
JOB_ORIGINS = ("cron", "hook")
CONDENSED = "[output condensed to fit the context window: {n} tokens left out]"

# Drop order: lower ranks go first; turns are dropped at rank TURNS.
RANK_RELATED, RANK_SIBLINGS, TURNS, RANK_ANCESTORS, RANK_FOCUS = 0, 1, 2, 3, 4


@dataclass(frozen=True)
class Focus:
    """Where the person is: an org id, and what Emacs said about the heading (its
    text too, bounded, for the many headings memory does not know by id)."""

    id: str | None = None
    file: str | None = None
    heading: str | None = None
    outline: str | None = None
    body: str | None = None

    @classmethod
    def from_service(cls, value: Any) -> Focus | None:
        """Read ``agent.services["focus"]`` defensively (a dict, plist or object)."""
        if value is not None and not isinstance(value, Mapping) and callable(
                getattr(value, "get", None)):
            value = value.get()  # a holder that the bridge keeps up to date
        if value is None:
            return None
        if isinstance(value, Focus):
            return value

        def pick(name: str) -> str | None:
            raw = value.get(name) if isinstance(value, Mapping) else getattr(value, name, None)
            if isinstance(raw, list | tuple):  # an outline path
                raw = " / ".join(str(part) for part in raw)
            return str(raw) if raw not in (None, "", [], (), False) else None

        body = value.get("body") if isinstance(value, Mapping) else getattr(value, "body", None)
        body = body[:FOCUS_BODY_MAX] if isinstance(body, str) and body.strip() else None
        focus = cls(pick("id"), pick("file"), pick("heading"), pick("outline"), body)
        return focus if any((focus.id, focus.heading, focus.outline)) else None


@dataclass(frozen=True)
class Section:
    """One piece of peripheral context."""

    name: str
    text: str
    rank: int


def _headline(node: Any, level: int) -> str:
    return heading_line(level, node.title, getattr(node, "todo", None) or None,
                        tuple(getattr(node, "tags", ()) or ()))


def render_node(node: Any, level: int) -> str:
    """A node in full, as org text (for the model's context, not a file: as stored)."""
    return "\n".join(entry_lines(
        level,
        node.title,
        keyword=getattr(node, "todo", None) or None,
        tags=tuple(getattr(node, "tags", ()) or ()),
        planning=getattr(node, "planning", "") or "",
        properties=dict(getattr(node, "properties", {}) or {}),
        body=(getattr(node, "body", "") or "").rstrip(),
        line=lambda key, value: f":{key}: {value}",
    ))


def _near(items: list[Any], index: int, limit: int) -> list[Any]:
    """Up to ``limit`` items around ``index`` (the focused one's neighbours first)."""
    start = max(0, min(index - limit // 2, len(items) - limit))
    return items[start:start + limit]


def peripheral_sections(
    store: Any | None,
    focus: Focus | None,
    query: str = "",
    *,
    related: int = RELATED_SHOWN,
    private_tag: str = DEFAULT_PRIVATE_TAG,
) -> list[Section]:
    """The foveal-peripheral rendering of the person's place in org, as sections.

    Nothing inside a subtree tagged ``private_tag`` is shown: not the focused heading,
    not a neighbour, not a related note (the model never sees them)."""
    sections: list[Section] = []

    def private(node_id: str) -> bool:
        return store is not None and node_is_private(store, node_id, private_tag)

    node = store.get(focus.id) if store is not None and focus and focus.id else None
    if node is not None and private(node.id):
        return [Section("focus", "The person is at a private heading (not shown).", RANK_FOCUS)]
    seen: set[str] = set()
    if node is not None and store is not None:
        ancestors = list(store.ancestors(node.id))
        level = len(ancestors) + 1
        seen.update(a.id for a in ancestors)
        seen.add(node.id)
        if ancestors:
            path = "\n".join(_headline(a, i + 1) for i, a in enumerate(ancestors))
            sections.append(Section("ancestors", "Where it sits:\n" + path, RANK_ANCESTORS))
        text = render_node(node, level)
        children = [c for c in store.children(node.id) if private_tag not in c.tags]
        if children:
            text += "\n" + "\n".join(_headline(c, level + 1) for c in children[:CHILDREN_SHOWN])
            if len(children) > CHILDREN_SHOWN:
                text += f"\n({len(children) - CHILDREN_SHOWN} more children)"
        where = f" (in {focus.file})" if focus and focus.file else ""
        sections.append(Section("focus", f"The heading the person is at{where}:\n{text}",
                                RANK_FOCUS))
        siblings = store.children(node.parent)
        others = [s for s in siblings if s.id != node.id and private_tag not in s.tags]
        if others:
            index = next((i for i, s in enumerate(siblings) if s.id == node.id), 0)
            shown = _near(others, index, SIBLINGS_SHOWN)
            seen.update(s.id for s in shown)
            lines = "\n".join(_headline(s, level) for s in shown)
            sections.append(Section("siblings", "Beside it:\n" + lines, RANK_SIBLINGS))
    elif focus is not None and _focus_private(focus, private_tag):
        sections.append(Section("focus", "The person is at a private heading (not shown).",
                                RANK_FOCUS))
    elif focus is not None:
        where = f" (in {focus.file})" if focus.file else ""
        text = f"The heading the person is at{where}: {focus.heading or focus.id or ''}"
        if focus.outline:
            text += "\nUnder: " + focus.outline
        if focus.body:
            text += "\n" + focus.body.rstrip()
        sections.append(Section("focus", text, RANK_FOCUS))
    terms = salient(query)
    if store is not None and terms and related > 0:
        try:
            hits = store.search(terms, related + len(seen), threshold=RELATED_THRESHOLD)
        except Exception as err:  # search is a help, never a reason to fail the turn
            log.warning("memory search for context failed: %s", err)
            hits = []
        found = [f"- {h.title} (id {h.id})" for h in hits
                 if h.id not in seen and not private(h.id)][:related]
        if found:
            sections.append(Section("related", "Related notes:\n" + "\n".join(found),
                                    RANK_RELATED))
    return sections


def focus_for(signal: Any, services: Mapping[str, Any]) -> Focus | None:
    """The heading a turn's context is about: a cron job's or hook's own heading, the
    person's point for a chat turn, nothing for other background work (the person's
    point is no business of a job that runs while they work elsewhere)."""
    meta = getattr(signal, "meta", {}) or {}
    origin = str(meta.get("origin") or meta.get("source") or "")
    if origin in JOB_ORIGINS:
        node_id = str(meta.get("heading") or "")
        orchestrator = services.get("orchestrator")
        registry = getattr(orchestrator, "registry", None)
        node = registry.node(node_id) if node_id and registry is not None else None
        if node is None:
            return Focus(id=node_id) if node_id else None
        return Focus(node.id, node.file, node.heading, " / ".join(node.outline) or None)
    if getattr(signal, "session_id", None):
        return Focus.from_service(services.get("focus"))
    return None


def _focus_private(focus: Focus, tag: str) -> bool:
    """A heading Emacs reported without an id that memory knows: checked against its
    file with the org reader, and its titles against the private index."""
    from passepartout.security.privacy import heading_private_in_file
    from passepartout.security.privacy.index import current

    outline = tuple(part for part in (focus.outline or "").split(" / ") if part)
    index = current()
    if any(index.contains_private(t) for t in (focus.heading or "", *outline) if t):
        return True
    return bool(focus.file) and heading_private_in_file(
        str(focus.file), focus.heading, outline, tag)


_STOPWORDS = frozenset({
    "about", "after", "again", "also", "because", "been", "before", "being", "could", "does",
    "doing", "from", "have", "having", "here", "into", "just", "like", "make", "more", "most",
    "much", "must", "only", "other", "over", "same", "should", "some", "such", "than", "that",
    "their", "them", "then", "there", "these", "they", "this", "those", "through", "under",
    "very", "want", "what", "when", "where", "which", "while", "will", "with", "would", "your",
    "please", "tell", "know", "need", "next"
})


def salient(text: str, limit: int = 8) -> str:
    """The words of a request worth searching for (a full-text OR over every word,
    "the" and "what" included, matches most notes and is slow)."""
    words = re.findall(r"[^\W_]{4,}", text.lower())
    kept = list(dict.fromkeys(w for w in words if w not in _STOPWORDS))
    return " ".join(kept[:limit])


@dataclass
class Assembly:
    """The messages to send, what was left out, and the token count."""

    messages: list[Message]
    tokens: int
    dropped: list[Message] = field(default_factory=list)
    dropped_sections: list[str] = field(default_factory=list)
    condensed: int = 0


def _groups(messages: Sequence[Message]) -> list[tuple[int, int]]:
    """(start, end) of each turn: a user message and what follows it."""
    starts = [i for i, m in enumerate(messages) if m.get("role") == "user"] or [0]
    if starts[0] != 0:
        starts.insert(0, 0)
    ends = [*starts[1:], len(messages)]
    return list(zip(starts, ends, strict=True))


def assemble(
    prefix: Message,
    history: Sequence[Message],
    sections: Sequence[Section],
    *,
    max_tokens: int,
    count: Callable[[str], int],
    count_message: Callable[[Message], int] | None = None,
    fixed_tokens: int = 0,
) -> Assembly:
    """Fit prefix + history + sections under ``max_tokens`` (see the module's order).

    ``history`` ends with the current turn (from its user message on); ``fixed_tokens``
    is what goes beside the messages (the tool schemas).
    """
    def msg_tokens(m: Message) -> int:
        return MESSAGE_OVERHEAD + count(content_text(m.get("content")))

    measure = count_message or msg_tokens
    groups = _groups(history)
    users = [i for i, m in enumerate(history) if m.get("role") == "user"]
    current_start = users[-1] if users else 0
    older = [g for g in groups if g[1] <= current_start]
    current = list(history[current_start:])
    sizes = [measure(m) for m in history]
    base = measure(prefix) + fixed_tokens + REPLY_PRIMING + 8  # 8: the context wrapper
    kept_sections = sorted(sections, key=lambda s: s.rank)
    section_tokens = {s.name: count(s.text) + 2 for s in kept_sections}
    # Running sums, and turns taken from the front of a deque: a long history that
    # must lose many turns costs one pass, not one pass per turn dropped.
    turns = deque((group, sum(sizes[group[0]:group[1]])) for group in older)
    older_total = sum(tokens for _, tokens in turns)
    sections_total = sum(section_tokens[s.name] for s in kept_sections)
    current_tokens = sum(sizes[current_start:])

    def total() -> int:
        return (base + sections_total + older_total + current_tokens
                + (16 if dropped else 0))

    dropped: list[Message] = []
    dropped_sections: list[str] = []
    while total() > max_tokens:
        low = kept_sections[0] if kept_sections else None
        if low is not None and (low.rank < TURNS or not turns):
            kept_sections.pop(0)
            sections_total -= section_tokens[low.name]
            dropped_sections.append(low.name)
        elif turns:
            (a, b), tokens = turns.popleft()
            older_total -= tokens
            dropped.extend(history[a:b])
        else:
            break
    condensed = 0
    if total() > max_tokens:
        current, saved = _condense(current, measure)
        current_tokens -= saved
        condensed = saved
    if total() > max_tokens:
        raise PipelineError(
            f"The request does not fit in CONTEXT_MAX_TOKENS={max_tokens}: the instructions "
            f"and the current input alone take about {total()} tokens. Raise "
            "CONTEXT_MAX_TOKENS or shorten the input.",
            tokens=total(), max_tokens=max_tokens,
        )
    kept = [m for (a, b), _ in turns for m in history[a:b]]
    out: list[Message] = [prefix]
    if dropped:
        out.append({"role": "system", "content": (
            f"({len(dropped)} earlier messages of this conversation were left out to fit "
            "the context window; they are saved in memory.)")})
    out.extend(kept)
    out.extend(_attach(current, kept_sections))
    return Assembly(out, total(), dropped, dropped_sections, condensed)


def _attach(current: list[Message], sections: Sequence[Section]) -> list[Message]:
    """The context, in reading order, before the current turn's user message."""
    if not sections:
        return current
    order = {"focus": 0, "ancestors": 1, "siblings": 2, "related": 3}
    text = "\n\n".join(s.text for s in sorted(sections, key=lambda s: order.get(s.name, 9)))
    out = list(current)
    for i, m in enumerate(out):
        if m.get("role") == "user":
            body = content_text(m.get("content"))
            out[i] = {**m, "content": f"<context>\n{text}\n</context>\n\n{body}"}
            return out
    return [{"role": "user", "content": f"<context>\n{text}\n</context>"}, *out]


def _condense(current: list[Message], measure: Callable[[Message], int]) -> tuple[
        list[Message], int]:
    """Shorten the current turn's tool outputs, all but the latest step's."""
    last_assistant = max((i for i, m in enumerate(current) if m.get("role") == "assistant"),
                         default=len(current))
    out: list[Message] = []
    saved = 0
    for i, m in enumerate(current):
        if m.get("role") == "tool" and i < last_assistant:
            before = measure(m)
            short = {**m, "content": CONDENSED.format(n=before)}
            saved += max(0, before - measure(short))
            out.append(short)
        else:
            out.append(m)
    return out, saved
