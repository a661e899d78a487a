"""``passepartout doctor`` reads the configuration the agent reads: the environment and
the config directory's ``.env``; it checks the key and the endpoint found there, and
says where each setting came from (never a key's value)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from fakellm import FakeLLM
from wire_client import PYTHON, ROOT

from passepartout.llm.models import PROVIDER_DEFAULTS


def _doctor(env: dict[str, str], **extra: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items()
            if k not in {var for var, _ in PROVIDER_DEFAULTS}
            and not k.startswith(("PASSEPARTOUT", "OPENAI"))}
    return subprocess.run([PYTHON, "-m", "passepartout", "doctor"], cwd=ROOT,
                          env={**base, **env, "PYTHONPATH": str(ROOT), **extra},
                          capture_output=True, text=True, timeout=120)


def test_the_key_and_endpoint_in_the_config_env_are_found_and_checked(
    env: dict[str, str], fake_llm: FakeLLM
) -> None:
    dotenv = Path(env["PASSEPARTOUT_CONFIG_DIR"]) / ".env"
    dotenv.write_text("PASSEPARTOUT_MODEL=openai/fake-model\nOPENAI_API_KEY=sk-in-dotenv\n"
                      f"OPENAI_BASE_URL={fake_llm.base_url}\n")
    fake_llm.reply("ok")
    result = _doctor(env, PASSEPARTOUT_EMBEDDINGS="off")
    out = result.stdout
    assert "is not set" not in out, out
    assert "[ok  ] provider key: openai/fake-model: a key is set" in out
    assert "[ok  ] provider endpoint: openai/fake-model answered" in out
    assert fake_llm.request_count == 1
    assert f"[ok  ] setting OPENAI_API_KEY: is set (from {dotenv})" in out
    assert f"[ok  ] setting OPENAI_BASE_URL: = {fake_llm.base_url} (from {dotenv})" in out
    assert f"[ok  ] setting PASSEPARTOUT_MODEL: = openai/fake-model (from {dotenv})" in out
    assert "sk-in-dotenv" not in out + result.stderr


def test_the_environment_wins_and_says_so(env: dict[str, str], fake_llm: FakeLLM) -> None:
    dotenv = Path(env["PASSEPARTOUT_CONFIG_DIR"]) / ".env"
    dotenv.write_text("OPENAI_API_KEY=sk-in-dotenv\nOPENAI_BASE_URL=http://127.0.0.1:9/v1\n")
    fake_llm.reply("ok")
    result = _doctor(env, PASSEPARTOUT_EMBEDDINGS="off", PASSEPARTOUT_MODEL="openai/fake",
                     OPENAI_BASE_URL=fake_llm.base_url)
    out = result.stdout
    assert f"setting OPENAI_BASE_URL: = {fake_llm.base_url} (from the environment)" in out
    assert f"setting OPENAI_API_KEY: is set (from {dotenv})" in out
    assert "[ok  ] provider endpoint: openai/fake answered" in out, out


def test_a_missing_key_names_both_places(env: dict[str, str]) -> None:
    result = _doctor(env, PASSEPARTOUT_EMBEDDINGS="off",
                     PASSEPARTOUT_MODEL="anthropic/claude-haiku-4-5")
    config = Path(env["PASSEPARTOUT_CONFIG_DIR"]) / ".env"
    assert (f"[FAIL] provider key: anthropic/claude-haiku-4-5: ANTHROPIC_API_KEY is not set "
            f"(neither in the environment nor in {config})") in result.stdout
    assert result.returncode == 1
