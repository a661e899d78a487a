"""The vault: secrets by name, injected at execution, masked in every form."""

from __future__ import annotations

import base64
import logging
import urllib.parse
from pathlib import Path

import pytest

from passepartout.security import vault as vault_mod
from passepartout.security.vault import Vault, VaultError, encoded_forms
from passepartout.signals import Keyword

SECRET = "s3cr3t-Value_with+odd/chars=42"


@pytest.fixture
def vault() -> Vault:
    return Vault({"GITHUB_TOKEN": SECRET, "DB_PASSWORD": "hunter2-long"})


def test_raw_hex_and_url_forms_are_masked(vault: Vault) -> None:
    raw = SECRET.encode()
    for form in (SECRET, raw.hex(), raw.hex().upper(), urllib.parse.quote(SECRET, safe="")):
        masked = vault.mask(f"before {form} after")
        assert form not in masked
        assert masked == "before [secret:GITHUB_TOKEN] after"


def test_every_form_is_masked_in_a_long_text(vault: Vault) -> None:
    filler = "lorem ipsum dolor sit amet\n" * 20_000  # past the quick check's length
    for form in vault._owner:
        masked = vault.mask(filler + form + filler)
        assert form not in masked and masked.count("[secret:") == 1
    assert vault.mask(filler) is filler


@pytest.mark.parametrize("prefix", [b"", b"a", b"ab", b"abc", b"user:"])
@pytest.mark.parametrize("encode", [base64.b64encode, base64.urlsafe_b64encode])
def test_base64_at_any_alignment_is_masked(vault: Vault, prefix: bytes, encode: object) -> None:
    blob = encode(prefix + SECRET.encode() + b"\ntrailing")  # type: ignore[operator]
    text = blob.decode()
    masked = vault.mask(f"Authorization: Basic {text}")
    assert "[secret:GITHUB_TOKEN]" in masked
    assert text not in masked
    # At most a few boundary characters of the encoding are left on each side.
    left, right = masked.removeprefix("Authorization: Basic ").split("[secret:GITHUB_TOKEN]")
    assert len(left) <= len(encode(prefix)) + 3  # type: ignore[operator]
    assert len(right) <= len(text) - len(encode(prefix + SECRET.encode())) + 4  # type: ignore[operator]


def test_short_values_are_not_masked() -> None:
    v = Vault({"PIN_TOKEN": "123"})
    assert v.mask("call 123 now") == "call 123 now"
    assert all(len(f) >= 6 for f in encoded_forms("abcdefgh"))


def test_inject_resolves_placeholders_and_refuses_unknown_names(vault: Vault) -> None:
    assert vault.inject("curl -H 'X: {{secret:GITHUB_TOKEN}}'") == f"curl -H 'X: {SECRET}'"
    assert vault.inject_args({"cmd": ["{{secret:DB_PASSWORD}}"]}) == {"cmd": ["hunter2-long"]}
    with pytest.raises(VaultError, match="NOPE"):
        vault.inject("{{secret:NOPE}}")


def test_from_env_takes_credential_names_and_listed_ones() -> None:
    v = Vault.from_env(
        {
            "OPENAI_API_KEY": "sk-abcdefgh",
            "PASSEPARTOUT_TOKEN": "epc-token-123",
            "PASSEPARTOUT_MODEL": "openai/gpt-4o",
            "MY_THING": "plain-but-listed",
            "PASSEPARTOUT_SECRETS": "MY_THING",
            "HOME": "/home/someone",
        }
    )
    assert v.names() == ["MY_THING", "OPENAI_API_KEY", "PASSEPARTOUT_TOKEN"]


def test_from_config_dir_reads_dotenv(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("STRIPE_SECRET=sk_live_xyz123\nPASSEPARTOUT_MODEL=m\n")
    v = Vault.from_config_dir(tmp_path, {})
    assert v.get("STRIPE_SECRET") == "sk_live_xyz123"
    assert "m" not in v.names()


def test_mask_value_keeps_structure_and_keywords(vault: Vault) -> None:
    data = {"sensor": Keyword("tool-output"), "results": [{"output": f"x {SECRET}", "ok": True}]}
    masked = vault.mask_value(data)
    assert isinstance(masked["sensor"], Keyword)
    assert masked["results"][0] == {"output": "x [secret:GITHUB_TOKEN]", "ok": True}


def test_log_records_are_masked_for_every_handler(
    vault: Vault, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    previous = vault_mod.get_vault()
    vault_mod.set_vault(vault)
    vault_mod.install_log_masking()
    log_file = tmp_path / "log.txt"
    handler = logging.FileHandler(log_file)
    logger = logging.getLogger("passepartout.test.vault")
    logger.addHandler(handler)
    try:
        with caplog.at_level(logging.INFO):
            logger.info("token is %s", SECRET)
            try:
                raise RuntimeError(f"failed with {SECRET.encode().hex()}")
            except RuntimeError:
                logger.exception("boom")
    finally:
        logger.removeHandler(handler)
        handler.close()
        vault_mod.set_vault(previous)
    written = log_file.read_text() + caplog.text
    assert "[secret:GITHUB_TOKEN]" in written
    assert SECRET not in written and SECRET.encode().hex() not in written


def test_process_wide_mask_uses_the_installed_vault(vault: Vault) -> None:
    previous = vault_mod.get_vault()
    try:
        vault_mod.set_vault(vault)
        assert vault_mod.mask(f"a {SECRET}") == "a [secret:GITHUB_TOKEN]"
    finally:
        vault_mod.set_vault(previous)
