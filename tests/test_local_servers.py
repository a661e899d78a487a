"""An Ollama or llama.cpp server on this machine: detected by doctor, offered by the
model picker (Emacs's ``models`` method and the terminal's ``/model``), under the
names litellm calls it by. Each test runs a fake of the protocol on 127.0.0.1 on a
free port, pointed at through litellm's own variables (OLLAMA_API_BASE,
LLAMAFILE_API_BASE), so nothing needs the default ports."""

from __future__ import annotations

import io
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_localserver import FakeLocalServer
from fakellm import FakeLLM
from llm_agent import make_config

from passepartout import protocol
from passepartout.cli.doctor import check_local_servers, provider_keys
from passepartout.config import Config
from passepartout.faces.terminal.chat import run_chat
from passepartout.llm import localserver
from passepartout.llm.provider import Provider
from passepartout.server.methods import METHODS, Bridge

pytest_plugins = ["llm_agent"]


def closed_port() -> str:
    """A local address nothing listens on (connections are refused at once)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def nothing_local(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Neither server answers; a test points one variable at its fake."""
    monkeypatch.setenv("OLLAMA_API_BASE", closed_port())
    monkeypatch.setenv("LLAMAFILE_API_BASE", closed_port())
    yield


def test_an_ollama_server_is_found_with_its_models(
    nothing_local: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeLocalServer("ollama", ["llama3.2:latest", "qwen2.5:0.5b"]) as fake:
        monkeypatch.setenv("OLLAMA_API_BASE", fake.base)
        found = localserver.detect()
    assert [(s.kind, s.base) for s in found] == [("ollama", fake.base)]
    assert found[0].models == ("ollama/llama3.2:latest", "ollama/qwen2.5:0.5b")
    assert fake.paths == ["/api/tags"]


def test_a_llamacpp_server_is_found_by_its_model_list_or_its_health(
    nothing_local: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeLocalServer("llama.cpp", ["qwen2.5-0.5b-instruct"]) as fake:
        monkeypatch.setenv("LLAMAFILE_API_BASE", fake.base + "/v1")  # as litellm takes it
        found = localserver.detect()
    assert [(s.kind, s.base, s.models) for s in found] == [
        ("llama.cpp", fake.base, ("llamafile/qwen2.5-0.5b-instruct",))]
    with FakeLocalServer("llama.cpp", health_only=True) as old:
        monkeypatch.setenv("LLAMAFILE_API_BASE", old.base)
        found = localserver.detect()
    assert [s.models for s in found] == [("llamafile/default",)]
    assert old.paths == ["/v1/models", "/health"]


def test_nothing_listening_is_no_server(nothing_local: None) -> None:
    assert localserver.detect() == []
    line = check_local_servers()[0].line()
    assert line.startswith("[ok  ] local model server: none answering")


@pytest.mark.attack
@pytest.mark.parametrize("body", [
    b"<html>It works!</html>",  # another web server on the port
    b'{"models": "all of them"}',
    b'{"models": [' + b'{"name": "m"},' * 100_000 + b'{"name": "m"}]}',  # over a megabyte
])
def test_something_else_on_the_port_is_no_server(
    nothing_local: None, monkeypatch: pytest.MonkeyPatch, body: bytes
) -> None:
    with FakeLocalServer("ollama", body=body) as fake:
        monkeypatch.setenv("OLLAMA_API_BASE", fake.base)
        assert localserver.detect() == []


@pytest.mark.attack
def test_names_that_are_not_model_names_are_left_out(
    nothing_local: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = ["llama3.2:latest", "x; rm -rf ~", "\x1b[2Jcleared", "a" * 300, "", "../../etc",
             "hf.co/bartowski/Qwen2.5-0.5B-GGUF:Q4_K_M"]
    with FakeLocalServer("ollama", names) as fake:
        monkeypatch.setenv("OLLAMA_API_BASE", fake.base)
        (server,) = localserver.detect()
    assert server.models == ("ollama/llama3.2:latest",
                             "ollama/hf.co/bartowski/Qwen2.5-0.5B-GGUF:Q4_K_M")


def test_doctor_names_the_server_and_how_to_choose_it(
    nothing_local: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeLocalServer("ollama", ["llama3.2:latest"]) as fake:
        monkeypatch.setenv("OLLAMA_API_BASE", fake.base)
        (check,) = check_local_servers()
    assert check.ok
    assert f"Ollama at {fake.base}: ollama/llama3.2:latest" in check.detail
    assert "PASSEPARTOUT_MODEL=ollama/llama3.2:latest" in check.detail
    # An Ollama model needs no key: litellm calls the default local port when unset.
    monkeypatch.delenv("OLLAMA_API_BASE")
    assert provider_keys("ollama/llama3.2:latest") == []


def test_the_emacs_picker_offers_the_servers_models(
    nothing_local: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = Config.from_mapping({"PASSEPARTOUT_MODEL": "openai/a"})
    with FakeLocalServer("ollama", ["llama3.2:latest"]) as ollama, \
            FakeLocalServer("llama.cpp", ["qwen"]) as llama:
        monkeypatch.setenv("OLLAMA_API_BASE", ollama.base)
        monkeypatch.setenv("LLAMAFILE_API_BASE", llama.base)
        listed = METHODS["models"].run(Bridge(config), None, protocol.Models())
    assert listed["servers"] == ["ollama/llama3.2:latest", "llamafile/qwen"]
    assert listed["all"] == ["openai/a", "local/smollm2", "ollama/llama3.2:latest",
                             "llamafile/qwen"]
    listed = METHODS["models"].run(Bridge(config), None, protocol.Models())  # the servers stopped
    assert listed["servers"] is None and listed["all"] == ["openai/a", "local/smollm2"]


def test_the_terminal_offers_and_accepts_a_servers_model(
    nothing_local: None, provider_env: FakeLLM, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch
) -> None:
    out = io.StringIO()
    with FakeLocalServer("ollama", ["my-own-finetune:7b"]) as fake:
        monkeypatch.setenv("OLLAMA_API_BASE", fake.base)
        assert run_chat(make_config(tmp_path),
                        stdin=io.StringIO("/model\n/model ollama/my-own-finetune:7b\n"),
                        stdout=out) == 0
    text = out.getvalue()
    assert f"on this machine: Ollama at {fake.base}: ollama/my-own-finetune:7b" in text
    assert (f"This chat now uses ollama/my-own-finetune:7b (served by the Ollama at "
            f"{fake.base}) for every tier.") in text
    assert provider_env.request_count == 0


def test_litellm_calls_a_llamacpp_model_by_the_offered_name(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    # llama.cpp's server speaks the OpenAI protocol, as the fake does.
    monkeypatch.setenv("LLAMAFILE_API_BASE", fake_llm.base_url)
    fake_llm.reply("hello from llama.cpp")
    result = Provider(max_tokens=8).complete(["llamafile/qwen"], [
        {"role": "user", "content": "hi"}], stream=False)
    assert "hello from llama.cpp" in str(result)
    assert fake_llm.last_request.model == "qwen"
