"""The loop's ``think``: one model step of a chat turn.

For each step it records the input (the person's text, tool results, or the gates'
refusals as tool results), assembles the context under CONTEXT_MAX_TOKENS, checks the
budgets, calls the tier's cascade (streaming chunks to the chat, honouring cancel),
books the call in the ledger, and turns the answer into actions: tool calls (recorded in
the history before they run) or the final reply.
"""

from __future__ import annotations

import collections
import datetime as dt
import logging
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from passepartout.config import Config
from passepartout.context import (
    RANK_FOCUS,
    Assembly,
    Focus,
    Section,
    assemble,
    focus_for,
    peripheral_sections,
)
from passepartout.errors import BudgetError, PassepartoutError
from passepartout.llm import clienttools, models, tokens
from passepartout.llm.budget import Budgets
from passepartout.llm.choice import system_text
from passepartout.llm.ledger import Call, Ledger
from passepartout.llm.provider import CallResult, Cancelled, Provider
from passepartout.llm.sessions import SessionStore
from passepartout.llm.shown import model_keeps, model_messages
from passepartout.llm.translate import (
    REFUSED_STEP,
    Message,
    Reply,
    assistant_message,
    refusal_messages,
    repair_tool_pairs,
    result_messages,
    system_message,
    tool_actions,
    tool_message,
)
from passepartout.loop.actions import Action, Thought
from passepartout.loop.events import Chunk, Notice, ToolRequested
from passepartout.security.privacy import private_tag
from passepartout.signals import Signal
from passepartout.turn import Kept, TurnChoice

log = logging.getLogger(__name__)

EXPECTED_OUTPUT_TOKENS = 1024  # the budget's estimate of a reply when no max is set
BAD_ARGUMENT_RETRIES = 2

INSTRUCTIONS = """\
You are Passepartout, a personal agent that lives in the person's Emacs and org-mode.
Answer plainly and briefly; write org-mode markup when you format text.
Tool calls are proposals: deterministic gates check each one, and some are asked of the
person. When a tool result says it was refused, do not repeat the same call: tell the
person what was refused and why, and offer another way if there is one.
The <context> block before a message shows where the person is in their org files."""


def _setting(config: Config, name: str, default: float) -> float:
    raw = config.extra.get(name, "")
    try:
        return float(raw) if str(raw).strip() else default
    except ValueError:
        from passepartout.errors import ConfigError

        raise ConfigError(f"{name} must be a number, not {raw!r}", variable=name) from None


class ModelLayer:
    """The model layer of one agent (``agent.services["llm"]``)."""

    def __init__(self, agent: Any, *, ledger: Ledger | None = None,
                 sessions: SessionStore | None = None) -> None:
        self.agent = agent
        self.config: Config = agent.config
        cfg = self.config
        max_out = int(_setting(cfg, "PASSEPARTOUT_MAX_OUTPUT_TOKENS", 0)) or None
        self.provider = Provider(
            connect_timeout=_setting(cfg, "PASSEPARTOUT_CONNECT_TIMEOUT", 5.0),
            read_timeout=_setting(cfg, "PASSEPARTOUT_READ_TIMEOUT", 120.0),
            max_tokens=max_out,
        )
        self.expected_output = max_out or EXPECTED_OUTPUT_TOKENS
        self.stream = cfg.extra.get("PASSEPARTOUT_STREAM", "1").lower() not in ("0", "no", "false")
        self.ledger = ledger or Ledger.in_home(cfg.home)
        self.sessions = sessions or SessionStore.in_home(cfg.home)
        self.budgets = Budgets(self.ledger, cfg.budget_usd,
                               lambda: self.agent.services.memory)
        self.failures: collections.deque[str] = collections.deque(maxlen=20)
        self._privacy_watch = _watch_private_text(cfg)
        self._flushed: dict[str, int] = {}
        self._counts: dict[int, tuple[Message, str, int]] = {}
        self._lock = threading.Lock()

    def close(self) -> None:
        if self._privacy_watch is not None:
            self._privacy_watch.stop()
        self.sessions.close()
        self.ledger.wait_settled()  # a stream litellm is still closing gets booked
        self.ledger.close()

    # -- think -------------------------------------------------------------------------

    def think(self, thought: Thought) -> list[Action]:
        try:
            return self._think(thought)
        except PassepartoutError as err:
            self.failures.append(err.message)  # the chat skill need not explain these again
            raise

    def _think(self, thought: Thought) -> list[Action]:
        choice = thought.signal.turn.choice  # the face's model, tier, preset
        tier = thought.prompt.tier
        if choice.tier and tier != "reflex":
            tier = choice.tier
        route = models.route(self.config, tier, preferred=choice.model)
        if self._private_run(thought.signal):
            route = private_route(self.config, route)
        key, persistent = session_of(thought.signal)
        self._record_input(thought, key, persistent)
        outside: list[Action] = []
        bad: list[Any] = []
        for _ in range(BAD_ARGUMENT_RETRIES + 1):
            partial: list[str] = []
            try:
                result = self._call(thought, route, key, persistent, partial)
            except Cancelled:
                self._cancelled(thought, route, key, persistent, "".join(partial))
                return []
            reply = result.reply
            if not reply.tool_calls:
                return [self._final(reply, result, key, persistent)]
            good, bad = tool_actions(reply)
            self.sessions.append(key, assistant_message(reply), persistent=persistent)
            theirs = clienttools.names(thought.signal.turn.extra)
            if any(c.name in theirs for c in reply.tool_calls):
                return self._client_calls(thought, reply, result, key, persistent, theirs)
            # A tool outside the preset's list is not run, even if the gates would allow it.
            outside = [a for a in good if not choice.allows(a.name)]
            if not bad and not outside:
                with self._lock:
                    _proposed(thought.signal)[:] = good
                return good
            # Arguments that are not a JSON object: tell the model and ask again.
            fixes = [tool_message(c.id, f"not run: the arguments were not a JSON object "
                                        f"({c.arguments[:200]!r}); call it again", c.name)
                     for c in bad]
            fixes += [tool_message(a.call_id or "", "not run: resend it with the others",
                                   a.name) for a in good if choice.allows(a.name)]
            fixes += [tool_message(a.call_id or "", "not run: this turn's preset does not "
                                   "allow this tool", a.name) for a in outside]
            self.sessions.append(key, *fixes, persistent=persistent)
        if outside and not bad:
            return [Action("chat", text="The model kept asking for tools this turn's preset "
                                        "does not allow; choose another preset or rephrase "
                                        "the request.")]
        return [Action("chat", text="The model kept sending malformed tool calls; "
                                    "please rephrase the request.")]

    def _client_calls(self, thought: Thought, reply: Reply, result: CallResult, key: str,
                      persistent: bool, theirs: frozenset[str]) -> list[Action]:
        """The model asked for tools of the client's: the turn ends and the client gets
        the calls (it runs them and sends their results); none runs here, and a call of
        the agent's own in the same step is not run either (the model asks again)."""
        skipped = [tool_message(c.id, "not run: call it again once the client's tools "
                                      "have answered", c.name)
                   for c in reply.tool_calls if c.name not in theirs]
        if skipped:
            self.sessions.append(key, *skipped, persistent=persistent)
        for call in reply.tool_calls:
            if call.name in theirs:
                thought.emit(ToolRequested(call.name, call.arguments or "{}", call.id))
        if not reply.text:
            return []
        return [Action("chat", text=reply.text,
                       args={"streamed": result.streamed and bool(reply.text)})]

    def _record_input(self, thought: Thought, key: str, persistent: bool) -> None:
        signal = thought.signal
        if signal.sensor == "user-input" and not self.sessions.messages(
                key, persistent=persistent):
            # A client that brings its conversation (the OpenAI-compatible face) starts
            # the session with it; a session that has messages keeps its own.
            earlier = clienttools.history(signal.turn.extra)
            if earlier:
                self.sessions.append(key, *earlier, persistent=persistent)
        with self._lock:
            proposed = _proposed(signal)
            pending, proposed[:] = list(proposed), []
        if thought.gate_trace:
            if pending:
                messages = refusal_messages(pending, thought.gate_trace)
            else:
                messages = [{"role": "user", "content": REFUSED_STEP
                             + "; ".join(thought.gate_trace)}]
        elif signal.sensor == "tool-output":
            messages = result_messages(signal.payload.get("results"))
        else:
            messages = clienttools.results(signal.turn.extra)
            if thought.prompt.text:
                messages.append({"role": "user", "content": thought.prompt.text})
        self.sessions.append(key, *messages, persistent=persistent)
        model_keeps(signal)  # what the turn shows is in its session already

    def _final(self, reply: Reply, result: CallResult, key: str, persistent: bool) -> Action:
        text = reply.text or "(the model returned an empty answer)"
        self.sessions.append(key, {"role": "assistant", "content": text},
                             persistent=persistent)
        return Action("chat", text=text, args={"streamed": result.streamed and bool(reply.text)})

    def _private_run(self, signal: Signal) -> bool:
        """A cron or hook run of a node in a private subtree (marked by the dispatcher,
        and checked again here with this agent's tag)."""
        turn = signal.turn
        if turn.private:
            return True
        if turn.kind not in ("cron", "hook") or not turn.heading:
            return False
        orchestrator = self.agent.services.orchestrator
        check = getattr(orchestrator, "is_private", None)
        if check is None:
            return False
        return bool(check(turn.heading, private_tag(self.agent.services)))

    # -- one call ----------------------------------------------------------------------

    def assemble(self, thought: Thought, model: str, key: str, persistent: bool,
                 tools_schemas: list[dict[str, Any]]) -> Assembly:
        """The messages for this step, fitted under CONTEXT_MAX_TOKENS."""
        history = repair_tool_pairs(model_messages(self.sessions.messages(key,
                                                                          persistent=persistent)))
        extra = system_text(thought.signal.turn.choice)
        prefix = system_message("\n\n".join([INSTRUCTIONS, *thought.system, *extra]),
                                cache=_caches_prompts(model))
        count = tokens.counter(model)
        encoding = tokens.encoding_name(model)
        memory = self.agent.services.memory
        focus = focus_for(thought.signal, self.agent.services)
        query = thought.prompt.text if thought.signal.sensor == "user-input" else ""
        sections = peripheral_sections(memory, focus, query,
                                       private_tag=private_tag(self.agent.services))
        attached = thought.signal.turn.attached  # filtered by the bridge
        if attached:
            sections.append(Section("attached", attached, RANK_FOCUS))
        sections.append(Section("now", "Now: " + dt.datetime.now().astimezone()
                                .strftime("%A %Y-%m-%d %H:%M %Z"), 5))
        assembly = assemble(
            prefix, history, sections,
            max_tokens=self.config.context_max_tokens,
            count=count,
            count_message=lambda m: self._count_message(m, encoding, count),
            fixed_tokens=tokens.tools_tokens(tools_schemas, model),
        )
        if assembly.dropped and memory is not None:
            self._flush(memory, key, assembly.dropped)
        return assembly

    def _call(self, thought: Thought, route: models.Route, key: str, persistent: bool,
              partial: list[str]) -> CallResult:
        choice = thought.signal.turn.choice
        theirs = clienttools.schemas(thought.signal.turn.extra)
        names = {t["function"]["name"] for t in theirs}
        # A tool of the client's hides one of ours by the same name: its calls are the
        # client's to run.
        schemas = ([t.schema() for t in self.agent.tools()
                    if t.offered and choice.allows(t.name) and t.name not in names]
                   + theirs if thought.prompt.use_tools else [])
        assembly = self.assemble(thought, route.primary, key, persistent, schemas)
        signal = thought.signal
        session = signal.session_id
        heading = heading_of(signal, self.agent.services.focus)

        def before(model: str) -> None:
            self.ledger.wait_settled()  # the last call's cost is in before any check
            estimate = tokens.price(model).cost(assembly.tokens, self.expected_output)
            self.budgets.check(session=session, heading=heading, estimate=estimate)
            self._check_turn_budget(thought, choice, estimate)

        def on_text(text: str) -> None:
            partial.append(text)
            thought.emit(Chunk(text))

        def on_fallback(failed: str, next_model: str, why: str) -> None:
            thought.emit(Notice(f"{failed} failed ({why}); trying {next_model}"))

        result = self.provider.complete(
            route.models, assembly.messages, tools=schemas or None, stream=self.stream,
            on_text=on_text, cancel=thought.cancel, before_attempt=before,
            on_fallback=on_fallback,
        )
        if signal.turn.state is not None:
            signal.turn.state.answered(result.model)
        if result.settled is None:
            self._book(result.model, result.provider, result.reply, assembly.tokens, thought)
        else:
            self._book_when_settled(result, result.settled, assembly.tokens, thought)
        return result

    def _book_when_settled(self, result: CallResult, settled: Future[Reply], sent_tokens: int,
                           thought: Thought) -> None:
        """Book a stream litellm is still closing once its usage is in; the ledger's
        readers (budgets, the usage Emacs shows) wait for it."""
        self.ledger.expect()

        def book(done: Future[Reply]) -> None:
            try:
                try:
                    reply = done.result()
                except Exception as err:  # the reply was whole: book an estimate of it
                    log.warning("the stream of %s failed after its reply: %s", result.model, err)
                    reply = result.reply
                self._book(result.model, result.provider, reply, sent_tokens, thought)
            except Exception:
                log.exception("booking a call of %s failed", result.model)
            finally:
                self.ledger.settle()

        settled.add_done_callback(book)

    def _check_turn_budget(self, thought: Thought, choice: TurnChoice,
                           estimate: float) -> None:
        if choice.budget is None:
            return
        state = thought.signal.turn.state
        spent = state.spent if state is not None else 0.0
        if spent + estimate > choice.budget:
            raise BudgetError(
                f"Budget reached: this turn has spent ${spent:.4f} of its preset's "
                f"${choice.budget:.4f}; the next call would cost about ${estimate:.4f}, "
                "so it was not sent.",
                remaining=max(choice.budget - spent, 0.0), requested=estimate)

    def _cancelled(self, thought: Thought, route: models.Route, key: str, persistent: bool,
                   text: str) -> None:
        if text:
            self.sessions.append(key, {"role": "assistant", "content": text + " [cancelled]"},
                                 persistent=persistent)
        # What was sent was probably billed: book an estimate of it.
        try:
            messages = self.sessions.messages(key, persistent=persistent)
            sent = tokens.count_tokens(messages, route.primary)
        except Exception:
            sent = 0
        self._book(route.primary, "", Reply(text), sent, thought)

    def _book(self, model: str, provider: str, reply: Reply, sent_tokens: int,
              thought: Thought) -> None:
        usage = reply.usage
        estimated = not usage.reported
        tokens_in = usage.prompt_tokens if usage.reported else sent_tokens
        tokens_out = usage.completion_tokens if usage.reported else tokens.count_tokens(
            reply.text + "".join(c.name + c.arguments for c in reply.tool_calls), model)
        cost = tokens.price(model).cost(tokens_in, tokens_out, usage.cached_tokens)
        signal = thought.signal
        if signal.turn.state is not None:  # a preset's :budget caps its turn
            signal.turn.state.spend(cost)
        self.ledger.record(Call(
            model=model,
            provider=provider or _provider_name(model),
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            tokens_cached=usage.cached_tokens,
            cost=cost,
            tier=thought.prompt.tier,
            origin=signal.turn.kind,
            session=signal.session_id,
            heading=heading_of(signal, self.agent.services.focus),
            estimated=estimated,
        ))

    # -- helpers -----------------------------------------------------------------------

    def _count_message(self, message: Message, encoding: str, count: Any) -> int:
        cached = self._counts.get(id(message))
        if cached is not None and cached[0] is message and cached[1] == encoding:
            return cached[2]
        n = tokens.message_tokens(message, count)
        if len(self._counts) > 200_000:
            self._counts.clear()
        self._counts[id(message)] = (message, encoding, n)
        return n

    def _flush(self, memory: Any, key: str, dropped: list[Message]) -> None:
        """Trimmed turns go to memory first (once per session and position)."""
        done = self._flushed.get(key, 0)
        fresh = dropped[done:]
        if not fresh:
            return
        try:
            from passepartout.memory.flush import Turn, flush_turns

            turns = [Turn.from_message(m, done + i) for i, m in enumerate(fresh)]
            flush_turns(memory, turns, key)
            self._flushed[key] = len(dropped)
        except Exception as err:  # losing the flush must not lose the turn
            log.warning("could not flush trimmed turns of %s to memory: %s", key, err)


# The calls the model proposed in a turn's last step, answered in its next one (in the
# turn's record: a turn that ends before its next step leaves none to the next turn).
_PROPOSED: Kept[list[Action]] = Kept("the model's last proposals", list)


def _proposed(signal: Signal) -> list[Action]:
    state = signal.turn.state
    return state.kept(_PROPOSED) if state is not None else []


PRIVATE_JOBS = ("refuse", "local")


def private_route(config: Config, route: models.Route) -> models.Route:
    """The models a private job may use: local ones only.

    PASSEPARTOUT_PRIVATE_JOBS=refuse (the default) runs it when its tier's model is the
    local one and refuses it otherwise; ``local`` runs it on the local model whatever
    the tier's model is.  A refusal is a clear error, noted in events.org."""
    from passepartout.errors import ConfigError, PipelineError
    from passepartout.llm.provider import is_local

    mode = str(config.extra.get("PASSEPARTOUT_PRIVATE_JOBS") or "refuse").strip().lower()
    if mode not in PRIVATE_JOBS:
        raise ConfigError(f"PASSEPARTOUT_PRIVATE_JOBS must be refuse or local, not {mode!r}",
                          variable="PASSEPARTOUT_PRIVATE_JOBS")
    local = tuple(m for m in route.models if is_local(m))
    if mode == "refuse" and not is_local(route.primary):
        raise PipelineError(
            f"refused: this job is in a private subtree and its model {route.primary} is "
            "remote (set PASSEPARTOUT_PRIVATE_JOBS=local to run such jobs on the local "
            "model)")
    if mode == "local" and not local:
        if not models.local_installed():
            raise PipelineError("refused: this job is in a private subtree and the local "
                                "model is not installed")
        local = (models.LOCAL_MODEL,)
    return models.Route(route.tier, local)


def _watch_private_text(config: Config) -> Any:
    """Scan the memex for private text in the background (a request waits for it at
    the provider) and follow its changes; the watcher, to stop at close."""
    from passepartout.security.privacy import DEFAULT_TAG
    from passepartout.security.privacy.index import current

    tag = str(config.extra.get("PASSEPARTOUT_PRIVATE_TAG") or DEFAULT_TAG)
    memex = Path(config.memex_dir).expanduser()
    index = current()
    index.scan_in_background([memex], tag)
    try:
        return index.watch([memex], tag)
    except Exception as err:  # no watcher: changes are learned when files are read
        log.warning("privacy: cannot watch %s: %s", memex, err)
        return None


def session_of(signal: Signal) -> tuple[str, bool]:
    """The conversation a signal belongs to, and whether it is kept across restarts."""
    if signal.session_id:
        return signal.session_id, True
    turn = signal.turn
    anchor = turn.turn_id or turn.heading or "background"
    return f"{turn.kind}:{anchor}", False


def heading_of(signal: Signal, focus: Any) -> str | None:
    """The org heading a call serves: the signal's own, else (for a chat) the focus."""
    heading = signal.turn.heading
    if heading:
        return heading
    if signal.session_id:
        found = Focus.from_service(focus)
        return found.id if found else None
    return None


def _caches_prompts(model: str) -> bool:
    """Providers that need an explicit cache marker (Anthropic's cache_control)."""
    lowered = model.lower()
    return lowered.startswith(("anthropic/", "claude")) or (
        "claude" in lowered and lowered.startswith(("bedrock/", "vertex_ai/")))


def _provider_name(model: str) -> str:
    return model.split("/", 1)[0] if "/" in model else "unknown"

