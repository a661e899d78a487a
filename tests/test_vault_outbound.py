"""Secrets are masked where they leave the process: every EPC frame (replies included)
and every message sent to a model provider, even text the person pasted."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import pytest
from fakellm import FakeLLM

from passepartout.llm.provider import Provider
from passepartout.security.vault import Vault, get_vault, set_vault
from passepartout.server.epc import frame
from passepartout.signals import Symbol

SECRET = "sk-live-0123456789abcdefXYZ"


@pytest.fixture
def vault() -> Iterator[Vault]:
    previous = get_vault()
    yield set_vault(Vault({"SERVICE_API_KEY": SECRET}))
    set_vault(previous)


def forms() -> list[str]:
    return [SECRET, SECRET.encode().hex(), base64.b64encode(SECRET.encode()).decode()[:24]]


def test_an_epc_reply_is_masked(vault: Vault) -> None:
    data = frame([Symbol("return"), 7, {"history": [f"my key is {SECRET}"]}]).decode()
    assert all(form not in data for form in forms())
    assert "[secret:SERVICE_API_KEY]" in data


def test_a_pasted_secret_never_reaches_the_provider(vault: Vault, fake_llm: FakeLLM) -> None:
    fake_llm.reply("noted")
    provider = Provider(extra={"api_base": fake_llm.base_url, "api_key": "sk-test"})
    messages = [{"role": "user", "content": f"remember {SECRET} and {SECRET.encode().hex()}"}]
    provider.complete(["openai/fake"], messages, stream=False)
    sent = str(fake_llm.requests[-1].body)  # what the server received
    assert "remember" in sent
    assert all(form not in sent for form in forms())
    assert messages[0]["content"].startswith("remember sk-live")  # the history keeps it
