"""The gardener on a scratch memex: a broken id: link whose target lost its ID is
fixed through org-set-property (the gates allowing it), the rest is reported once in
events.org, private text is neither fixed nor reported, and no model is asked."""

from __future__ import annotations

from pathlib import Path

from background_agent import allow_rules, events_text, make_agent, run_job

from passepartout.background.gardener import examine
from passepartout.background.memex import read_memex

FILES = {
    "projects/alpha.org": (
        "* Alpha\n:PROPERTIES:\n:ID: alpha-1\n:END:\n"
        "The plan is in [[id:plan-7][Budget plan]]; the draft in [[file:drafts/gone.org]].\n"
        "Also [[file:beta.org::*Beta][Beta]] and [[id:nowhere-9][Lost]].\n"),
    "projects/beta.org": (
        "* Beta\n:PROPERTIES:\n:ID: beta-1\n:END:\nBack to [[id:alpha-1][Alpha]].\n"
        "* Budget plan\nThe numbers.\n"),
    "projects/twin.org": "* Twin\n:PROPERTIES:\n:ID: alpha-1\n:END:\n",
    "notes/lonely.org": "* A thought\nNobody links here, and it links nowhere.\n",
    "notes/old/gone.org": "* Moved draft\n",
    "notes/diary.org": ("* Diary                                                :@personal:\n"
                        "[[id:secret-3][Secret]] and [[file:hidden.org]]\n"),
}


def test_examine_finds_each_kind_and_proposes_only_the_unambiguous_fix(
        tmp_path: Path) -> None:
    memex = tmp_path / "memex"
    for name, text in FILES.items():
        (memex / name).parent.mkdir(parents=True, exist_ok=True)
        (memex / name).write_text(text)
    found = examine(read_memex(memex, "@personal", archives=True), memex)
    assert [(Path(f.file).name, f.address, f.ident) for f in found.fixes] == [
        ("beta.org", "Budget plan", "plan-7")]
    assert found.broken_ids == ["projects/alpha.org:5: id:plan-7",
                                "projects/alpha.org:6: id:nowhere-9"]
    assert found.broken_files == [
        f"projects/alpha.org:5: file:drafts/gone.org (a file of that name: "
        f"{memex / 'notes/old/gone.org'})"]
    assert found.duplicates == ["alpha-1: projects/alpha.org:1, projects/twin.org:1"]
    # twin.org holds an ID beta.org links to (the duplicate): it is not an orphan
    assert sorted(found.orphans) == ["notes/lonely.org", "notes/old/gone.org"]
    assert "secret" not in repr(found) and "hidden" not in repr(found)


def test_the_gardener_fixes_through_the_org_tools_and_reports_the_rest_once(
        tmp_path: Path, env: dict[str, str]) -> None:
    memex = Path(env["MEMEX_DIR"])
    allow_rules(Path(env["PASSEPARTOUT_CONFIG_DIR"]), memex, "org-set-property")
    agent = make_agent(tmp_path, env, FILES)
    try:
        result = run_job(agent, "gardener")
        assert result.startswith("1 fix(es) proposed, 2 broken id link(s), 1 broken file")
        beta = (memex / "projects" / "beta.org").read_text()
        assert "* Budget plan\n:PROPERTIES:\n:ID:       plan-7\n:END:\nThe numbers.\n" in beta
        log = events_text(env)
        assert "org-set-property done" in log
        assert "finding(s) in the memex" in log
        assert "id:nowhere-9" in log and "alpha-1: projects/alpha.org:1" in log
        assert "notes/lonely.org" in log and "secret" not in log
        # The fix made the link whole; the rest is as before and not reported again.
        again = run_job(agent, "gardener")
        assert again.startswith("0 fix(es) proposed, 1 broken id link(s)")
        assert not again.endswith("(as before; not reported again)")  # one less broken
        third = run_job(agent, "gardener")
        assert third.endswith("(as before; not reported again)")
        assert events_text(env).count("finding(s) in the memex") == 2
        assert agent.services["ledger"].calls() == []
    finally:
        agent.shutdown()


def test_ids_in_system_files_count_and_those_files_are_never_orphans(tmp_path: Path) -> None:
    memex = tmp_path / "memex"
    (memex / "system").mkdir(parents=True)
    (memex / "system" / "background.org").write_text(
        "* Scribe\n:PROPERTIES:\n:ID: passepartout-scribe\n:END:\n")
    (memex / "a.org").write_text("* A\nThe [[id:passepartout-scribe][scribe job]].\n")
    found = examine(read_memex(memex, "@personal", archives=True, skipped=()), memex)
    assert found.broken_ids == [] and found.orphans == []
