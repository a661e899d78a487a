"""The vault: secrets by name (only those declared in the config .env), injected at
execution, masked in every form it knows."""

from __future__ import annotations

import base64
import codecs
import functools
import logging
import time
import urllib.parse
from pathlib import Path

import pytest

from passepartout.security import logs
from passepartout.security import vault as vault_mod
from passepartout.security.vault import Vault, VaultError
from passepartout.security.vault.forms import MIN_FORM, forms_of
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


TOKEN = "Vx7Qm2Lp9Rt4Kw8Zs3Nd"  # 20 letters and digits: its halves are masked too


def _b32(raw: bytes) -> str:
    return base64.b32encode(raw).decode().rstrip("=")


def _b32_after(n: int, text: str) -> str:
    return _b32(b"k" * n + text.encode())


TRANSFORMS = {
    "raw": lambda t: t,
    "reversed": lambda t: t[::-1],
    "upper": str.upper,
    "lower": str.lower,
    "spaced": " ".join,
    "one per line": "\n".join,
    "one per CRLF line": "\r\n".join,
    "dashes": "-".join,
    "zero-width": "\u200b".join,
    "quoted list": lambda t: ", ".join(repr(c) for c in t),
    "rot13": lambda t: codecs.encode(t, "rot13"),
    "rot13 reversed upper": lambda t: codecs.encode(t[::-1], "rot13").upper(),
    "hex": lambda t: t.encode().hex(),
    "HEX spaced": lambda t: " ".join(f"{b:02X}" for b in t.encode()),
    "\\x escapes": lambda t: "".join(f"\\x{b:02x}" for b in t.encode()),
    "%-escapes": lambda t: "".join(f"%{b:02X}" for b in t.encode()),
    "\\u escapes": lambda t: "".join(f"\\u{ord(c):04x}" for c in t),
    "decimal codes": lambda t: " ".join(str(b) for b in t.encode()),
    "base64": lambda t: base64.b64encode(t.encode()).decode(),
    "base64 after 1 byte": lambda t: base64.b64encode(b"x" + t.encode()).decode(),
    "base64 folded at 8": lambda t: "\n".join(
        base64.b64encode(t.encode()).decode()[i : i + 8] for i in range(0, 28, 8)),
    **{f"base32 after {n} bytes": functools.partial(_b32_after, n) for n in range(5)},
    "base32 lower": lambda t: _b32(t.encode()).lower(),
    "fullwidth": lambda t: "".join(chr(ord(c) + 0xFEE0) for c in t),
    "first half": lambda t: t[:10],
    "second half": lambda t: t[10:],
    "longer piece of a cut at 7": lambda t: t[7:],
    "longer piece of a cut at 13": lambda t: t[:13],
    "reversed half": lambda t: t[::-1][:10],
}


@pytest.mark.attack
@pytest.mark.parametrize("how", sorted(TRANSFORMS))
def test_each_form_of_a_declared_secret_is_masked(how: str) -> None:
    vault = Vault({"API_TOKEN": TOKEN})
    form = TRANSFORMS[how](TOKEN)
    for text in (f"echo: {form} (done)", "lorem ipsum\n" * 2_000 + form + "\nend"):
        masked = vault.mask(text)
        assert "[secret:API_TOKEN]" in masked, (how, masked[-200:])
        assert form not in masked
        # What is left of the secret is less than half of it, in any of these forms.
        left = "".join(ch for ch in masked.replace("[secret:API_TOKEN]", "") if ch.isalnum())
        assert TOKEN[:10].lower() not in left.lower() and TOKEN[10:].lower() not in left.lower()


def test_every_form_is_masked_in_a_long_text(vault: Vault) -> None:
    filler = "lorem ipsum dolor sit amet\n" * 20_000  # long: searched around what was found
    raw = SECRET.encode()
    for form in (SECRET, SECRET[::-1], raw.hex(), base64.b64encode(raw).decode(),
                 " ".join(SECRET), SECRET.upper()):
        masked = vault.mask(filler + form + filler)
        assert form not in masked and masked.count("[secret:") == 1
        assert len(masked) == 2 * len(filler) + len("[secret:GITHUB_TOKEN]")
    assert vault.mask(filler) is filler


def test_what_stays_out_of_reach_is_not_masked() -> None:
    """Pieces shorter than half the secret, and compositions of transformations, are
    not recognised (the README says so); ordinary text is left alone."""
    vault = Vault({"API_TOKEN": TOKEN})
    for third in (TOKEN[:7], TOKEN[7:14], TOKEN[14:]):  # one a message, or out of order
        assert vault.mask(f"part: {third}") == f"part: {third}"
    shuffled = f"{TOKEN[7:14]} {TOKEN[:7]} {TOKEN[14:]}"
    assert vault.mask(shuffled) == shuffled
    composed = base64.b64encode(TOKEN[::-1].encode()).decode()
    assert vault.mask(composed) == composed
    prose = "Vx7 is a model number; nothing secret here."
    assert vault.mask(prose) is prose


def test_masking_a_megabyte_stays_fast() -> None:
    vault = Vault({"API_TOKEN": TOKEN, "GITHUB_TOKEN": SECRET, "DB_PASSWORD": "hunter2-long"})
    text = "plain text without anything to escape " * 27_000
    hit = text[: len(text) // 2] + TOKEN + text[len(text) // 2 :]
    for sample in (text, hit):
        started = time.process_time()
        for _ in range(5):
            vault.mask(sample)
        assert (time.process_time() - started) / 5 < 0.05  # about 3 ms (7 with a hit)


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
    assert all(len(f) >= MIN_FORM for f in forms_of("abcdefgh"))
    # A secret with few letters and digits is still masked where it stands exactly.
    symbols = Vault({"ODD_PASSWORD": "#!a%$b&*"})
    assert symbols.mask("pw #!a%$b&* ok") == "pw [secret:ODD_PASSWORD] ok"


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


@pytest.mark.attack
def test_the_process_environment_is_masked_but_never_resolved(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("API_TOKEN=declared-token-1\nPASSEPARTOUT_SECRETS=MY_DSN\n")
    environ = {"OPENAI_API_KEY": "sk-provider-key-42", "MY_DSN": "postgres://u:pw@db/x",
               "HOME": "/home/someone", "PASSEPARTOUT_TOKEN": "epc-token-123"}
    v = Vault.from_config_dir(tmp_path, environ)
    assert v.names() == ["API_TOKEN"]
    for name in ("OPENAI_API_KEY", "MY_DSN", "PASSEPARTOUT_TOKEN", "HOME"):
        assert not v.knows(name)
        with pytest.raises(VaultError, match=name):
            v.inject(f"echo {{{{secret:{name}}}}}")
    assert v.inject("{{secret:API_TOKEN}}") == "declared-token-1"
    text = "sk-provider-key-42 postgres://u:pw@db/x epc-token-123 /home/someone"
    assert v.mask(text) == (
        "[secret:OPENAI_API_KEY] [secret:MY_DSN] [secret:PASSEPARTOUT_TOKEN] /home/someone"
    )


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
    logs.install()
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
