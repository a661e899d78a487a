"""A model's own tokenizer may load after the start: until it has, counting uses the
estimate (cl100k_base, what every model without a tokenizer of its own counts with)."""

from __future__ import annotations

import pytest

from passepartout.llm import tokens

# Text the two vocabularies cut differently.
TEXT = "Ünïcödé wörds 🙂, schön und größer; 東京の天気 " * 20


@pytest.fixture(autouse=True)
def fresh_state(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing loaded or put off by the layer of an earlier test in this process."""
    monkeypatch.setattr(tokens, "_loaded", set())
    monkeypatch.setattr(tokens, "_put_off", set())


def test_a_put_off_tokenizer_counts_with_the_estimate_until_it_has_loaded() -> None:
    exact = tokens._tiktoken("o200k_base")(TEXT)
    estimate = tokens._tiktoken(tokens.ESTIMATE)(TEXT)
    assert exact != estimate
    waiting = tokens.load_later("openai/gpt-4o", 60)
    assert waiting is not None
    try:
        assert tokens.counter("openai/gpt-4o")(TEXT) == estimate
    finally:
        waiting.cancel()
    tokens._put_off.discard("o200k_base")
    loading = tokens.load_later("openai/gpt-4o", 0)
    assert loading is not None
    loading.join(60)
    assert tokens.counter("openai/gpt-4o")(TEXT) == exact
    # A second model layer in the same process does not put off what is loaded.
    assert tokens.load_later("openai/gpt-4o", 60) is None
    assert tokens.counter("openai/gpt-4o")(TEXT) == exact


def test_a_model_counted_with_the_estimate_puts_nothing_off() -> None:
    assert tokens.load_later("openai/gpt-4", 0) is None
    assert tokens.load_later("mistral/mistral-large", 0) is None
