"""Policy rules as configuration: parsed arguments, scopes, deny > ask > allow."""

from __future__ import annotations

from pathlib import Path

import pytest

from passepartout.errors import ConfigError
from passepartout.security.policy import Policy, Rule, Subject, load_policy, plain_commands


def shell_subject(cmd: str, cwd: Path) -> Subject:
    commands, simple = plain_commands(cmd)
    return Subject("shell", {"cmd": cmd}, commands, simple, cwd=cwd)


def test_rules_match_parsed_commands_not_raw_strings(tmp_path: Path) -> None:
    policy = Policy([Rule("allow", "shell", ("git", "status"), scope=tmp_path)])
    assert policy.decide(shell_subject("git  status --short", tmp_path)) is not None
    assert policy.decide(shell_subject("'git' status", tmp_path)) is not None
    # Chained, substituted or redirected lines are not covered by the grant.
    for cmd in ("git status; rm -rf ~", "git status && curl x | sh", "git status > out",
                "git status $(id)", "echo git status", "git statusx"):
        assert policy.decide(shell_subject(cmd, tmp_path)) is None, cmd


def test_an_exact_rule_takes_no_more_words(tmp_path: Path) -> None:
    policy = Policy([Rule("allow", "shell", ("git", "push"), exact=True)])
    assert policy.decide(shell_subject("git push", tmp_path)) is not None
    for cmd in ("git push --force", "git push origin main", "git"):
        assert policy.decide(shell_subject(cmd, tmp_path)) is None, cmd


def test_scope_limits_a_rule_to_a_directory(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    policy = Policy([Rule("allow", "shell", ("git", "status"), scope=proj)])
    assert policy.decide(shell_subject("git status", proj / "sub")) is not None
    assert policy.decide(shell_subject("git status", tmp_path)) is None


def test_every_command_of_a_line_needs_an_allow(tmp_path: Path) -> None:
    policy = Policy([Rule("allow", "shell", ("git", "*")), Rule("allow", "shell", ("make",))])
    match = policy.decide(shell_subject("git pull && make test", tmp_path))
    assert match is not None and match.decision == "allow" and len(match.rules) == 2


def test_deny_beats_ask_beats_allow(tmp_path: Path) -> None:
    target = tmp_path / "k.pem"
    subject = Subject("write-file", {"path": str(target)}, paths=(target,))
    rules = [Rule("allow", "write-file"), Rule("ask", "*-file"), Rule("deny", path="*.pem")]
    assert Policy(rules).decide(subject).decision == "deny"  # type: ignore[union-attr]
    assert Policy(rules[:2]).decide(subject).decision == "ask"  # type: ignore[union-attr]
    assert Policy(rules[:1]).decide(subject).decision == "allow"  # type: ignore[union-attr]
    other = Subject("write-file", {"path": "x"}, paths=(tmp_path / "x.txt",))
    assert Policy([rules[2]]).decide(other) is None


def test_a_deny_rule_sees_every_command_of_a_line(tmp_path: Path) -> None:
    policy = Policy([Rule("deny", "shell", ("rm",))])
    match = policy.decide(shell_subject("ls && rm -rf build", tmp_path))
    assert match is not None and match.decision == "deny"


def test_argument_globs() -> None:
    policy = Policy([Rule("ask", "fetch-url", args=(("url", "http://*"),))])
    assert policy.decide(Subject("fetch-url", {"url": "http://x"})) is not None
    assert policy.decide(Subject("fetch-url", {"url": "https://x"})) is None


def test_load_policy_file(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    path.write_text(
        """
[[rule]]
decision = "allow"
tool = "shell"
command = "git status"
scope = "~/proj"

[[rule]]
decision = "deny"
tool = "write-file"
path = "*.pem"

[shell]
allow = ["make"]
[files]
protect = ["~/ledger"]
[dispatcher]
ask = ["send-mail"]
"""
    )
    policy = load_policy(path)
    assert [r.decision for r in policy.rules] == ["allow", "deny"]
    assert policy.rules[0].command == ("git", "status")
    assert policy.rules[0].scope == Path("~/proj").expanduser().resolve()
    assert policy.settings.shell_allow == ("make",)
    assert policy.settings.always_ask == ("send-mail",)
    assert load_policy(tmp_path / "absent.toml").rules == []


@pytest.mark.parametrize(
    "body",
    [
        '[[rule]]\ndecision = "maybe"\n',
        '[[rule]]\ndecision = "allow"\ncolour = "red"\n',
        '[[rule]]\ndecision = "allow"\ncommand = "unclosed \'quote"\n',
        "[[rule]\n",
        '[shell]\nallow = "make"\n',
        '[[rule]]\ndecision = "allow"\ncommand = "make"\nexact = "maybe"\n',
        '[[rule]]\ndecision = "allow"\ntool = "shell"\nexact = true\n',
    ],
)
def test_bad_policy_files_are_clear_errors(tmp_path: Path, body: str) -> None:
    path = tmp_path / "policy.toml"
    path.write_text(body)
    with pytest.raises(ConfigError) as err:
        load_policy(path)
    assert "policy.toml" in err.value.message
