"""Hooks fire on node changes with old and new content; results become visible."""

from __future__ import annotations

import time
from pathlib import Path

import events_memex
import pytest
from events_memex import UTC, Clock

from passepartout.events.classify import default_classifier
from passepartout.events.hooks import HookEvent
from passepartout.events.jobs import Tier
from passepartout.events.orchestrator import Orchestrator
from passepartout.loop.actions import Verdict

GUARDED = "projects/deep/guarded.org"


@pytest.fixture
def notes() -> list[tuple[str, str]]:
    return []


@pytest.fixture
def orch(tmp_path: Path, notes: list[tuple[str, str]]) -> Orchestrator:
    memex = events_memex.build(tmp_path)
    o = Orchestrator(home=tmp_path / "home", memex_dir=memex, clock=Clock("2026-05-03 12:00"),
                     tz=UTC, notify=lambda level, text: notes.append((level, text)))
    o.bootstrap()
    return o


def edit(memex: Path, old: str, new: str) -> Path:
    path = memex / GUARDED
    path.write_text(path.read_text().replace(old, new))
    return path


def test_a_gate_and_an_action_run_with_old_and_new_content(
    orch: Orchestrator, notes: list[tuple[str, str]]
) -> None:
    seen: list[HookEvent] = []

    def keep_intact(event: HookEvent) -> Verdict:
        seen.append(event)
        if event.new is not None and "intact" not in event.new:
            return Verdict.deny("the notes lost their promise")
        return Verdict.allow("still intact")

    orch.register_hook("verify-integrity", keep_intact, kind="gate")
    orch.register_hook("notify-me", lambda e: f"{e.heading} was {e.change}")
    path = edit(orch.memex_dir, "Keep these notes intact.", "Keep these notes.")
    assert [c.kind for c in orch.rescan(path)] == ["changed"]
    assert len(seen) == 1
    event = seen[0]
    assert event.change == "changed" and event.node_id == "guard-1" and event.source == "disk"
    assert event.old is not None and "Keep these notes intact." in event.old
    assert event.new is not None and "Keep these notes." in event.new
    log_text = (orch.events.path).read_text()
    assert "verify-integrity on 'Guarded notes' (changed): keep_intact deny" in log_text
    assert "the notes lost their promise" in log_text
    assert "Guarded notes was changed" in log_text
    assert any(level == "warning" and "lost their promise" in text for level, text in notes)
    assert any(level == "info" and "Guarded notes was changed" in text for level, text in notes)


def test_hooks_fire_once_per_real_change(orch: Orchestrator) -> None:
    fired: list[str] = []
    orch.register_hook("notify-me", lambda e: fired.append(e.change))
    path = edit(orch.memex_dir, "intact", "whole")
    orch.rescan(path)
    orch.apply_edit({"file": str(path), "action": "changed", "id": "guard-1"})  # Emacs, late
    orch.rescan(path)
    assert fired == ["changed"]


def test_adding_and_removing_a_hook_name(orch: Orchestrator) -> None:
    fired: list[tuple[str, str]] = []
    orch.register_hook("verify-integrity", lambda e: fired.append((e.hook, e.change)))
    orch.register_hook("archive", lambda e: fired.append((e.hook, e.change)))
    path = edit(orch.memex_dir, ":HOOK: verify-integrity  notify-me", ":HOOK: archive")
    orch.rescan(path)
    assert sorted(fired) == [("archive", "added"), ("verify-integrity", "removed")]
    fired.clear()
    path.unlink()
    orch.rescan(path)
    assert fired == [("archive", "removed")]


def test_a_crashing_gate_denies_and_the_others_still_run(orch: Orchestrator) -> None:
    def broken(event: HookEvent) -> Verdict:
        raise RuntimeError("boom")

    ran: list[str] = []
    orch.register_hook("verify-integrity", broken, kind="gate")
    orch.register_hook("verify-integrity", lambda e: ran.append(e.hook))
    results = orch.apply_edit({"file": str(edit(orch.memex_dir, "intact", "safe"))})
    assert [(r.handler, r.ok, r.decision) for r in results] == [
        ("broken", False, "deny"), ("<lambda>", True, None)]
    assert "RuntimeError: boom" in results[0].text and ran == ["verify-integrity"]


def test_a_gate_without_a_verdict_denies(orch: Orchestrator) -> None:
    orch.register_hook("verify-integrity", lambda e: None, kind="gate")
    results = orch.apply_edit({"file": str(edit(orch.memex_dir, "intact", "ok"))})
    assert results[0].decision == "deny" and "no verdict" in results[0].text


def test_bad_registrations_are_refused(orch: Orchestrator) -> None:
    with pytest.raises(ValueError, match="gate or an action"):
        orch.register_hook("x", lambda e: None, kind="filter")
    with pytest.raises(ValueError, match="one word"):
        orch.register_hook("two words", lambda e: None)


def test_the_default_classifier_and_a_custom_one(orch: Orchestrator) -> None:
    assert default_classifier("Summarize the week") is Tier.COGNITION
    assert default_classifier("run shell cleanup") is Tier.REFLEX
    assert default_classifier("verify-integrity of the store") is Tier.REFLEX
    assert default_classifier("listen to the farm sounds") is Tier.REASONING
    assert default_classifier("Plan the architecture") is Tier.REASONING
    weekly = next(j for j in orch.jobs() if j["heading"] == "Weekly summary")
    assert weekly["tier"] == "cognition"
    orch.set_classifier(lambda text: "reasoning")
    weekly = next(j for j in orch.jobs() if j["heading"] == "Weekly summary")
    assert weekly["tier"] == "reasoning"
    integrity = next(j for j in orch.jobs() if j["id"] == "integrity-1")
    assert integrity["tier"] == "reflex"  # :TIER: wins over any classifier
    orch.set_classifier(lambda text: 42)  # type: ignore[arg-type,return-value]
    assert any("classifier" in p and "42" in p for p in orch.problems())
    assert "Weekly summary" not in [j["heading"] for j in orch.jobs()]


def test_first_news_of_a_file_fires_only_the_edited_node(orch: Orchestrator) -> None:
    fired: list[tuple[str, str]] = []
    orch.register_hook("audit", lambda e: fired.append((e.heading, e.change)))
    path = orch.memex_dir / "outside" / "notes.org"  # not under a scanned directory
    old = "* Two\n:PROPERTIES:\n:HOOK: audit\n:END:\nbefore\n"
    path.write_text("* One\n:PROPERTIES:\n:HOOK: audit\n:END:\n" + old.replace("before", "after"))
    orch.apply_edit({"file": str(path), "action": "changed", "heading": "Two", "outline": None,
                     "old": old, "new": old.replace("before", "after")})
    assert fired == [("Two", "changed")]
    assert sorted(n.heading for n in orch.registry.nodes() if n.file == str(path)) == [
        "One", "Two"]


def test_a_hook_hears_which_face_sent_the_edit(orch: Orchestrator) -> None:
    fired: list[tuple[str, str]] = []
    orch.register_hook("audit", lambda e: fired.append((e.heading, e.source)))
    path = orch.memex_dir / "outside" / "faces.org"
    text = "* One\n:PROPERTIES:\n:HOOK: audit\n:END:\nbefore\n"
    orch.apply_edit({"file": str(path), "action": "added", "heading": "One", "outline": None,
                     "new": text}, "tui")  # no file on disk: the sent text
    path.write_text(text.replace("before", "after"))
    orch.apply_edit({"file": str(path), "action": "changed", "heading": "One"})  # Emacs saved
    assert fired == [("One", "tui"), ("One", "emacs")]


def restart(orch: Orchestrator) -> Orchestrator:
    """The same home and memex, as the next start of the agent finds them."""
    orch.stop()
    return Orchestrator(home=orch.scheduler.state.path.parent.parent, memex_dir=orch.memex_dir,
                        clock=Clock("2026-05-03 13:00"), tz=UTC)


def test_edits_made_while_down_fire_at_the_next_start(orch: Orchestrator) -> None:
    memex = orch.memex_dir
    edit(memex, "Keep these notes intact.", "Keep these notes.")  # while nobody watches
    (memex / "projects" / "new.org").write_text(
        "* Fresh\n:PROPERTIES:\n:ID: fresh-1\n:HOOK: notify-me\n:END:\nnew\n")
    later = restart(orch)
    seen: list[tuple[str, str, str | None, str | None, str]] = []
    later.register_hook("notify-me", lambda e: seen.append(
        (e.node_id, e.change, e.old and e.old.splitlines()[-1],
         e.new and e.new.splitlines()[-1], e.source)))
    later.bootstrap()
    assert seen == []  # not before every skill has registered its handlers
    later.fire_missed()
    assert sorted(seen) == [
        ("fresh-1", "added", None, "new", "scan"),
        ("guard-1", "changed", "Keep these notes intact.", "Keep these notes.", "scan")]
    # Once only; and a node deleted while down is a removal at the start after.
    later.fire_missed()
    assert len(seen) == 2
    (memex / "projects" / "new.org").unlink()
    third = restart(later)
    third.register_hook("notify-me", lambda e: seen.append((e.node_id, e.change, None, None, "")))
    third.bootstrap()
    third.fire_missed()
    assert seen[2:] == [("fresh-1", "removed", None, None, "")]


def test_an_edit_during_the_start_scan_is_measured_against_the_record(
        orch: Orchestrator) -> None:
    """The watcher starts before the scan, so news of a file can come first, when the
    registry does not know the file yet: against the record of the last stop it is
    "changed" (it read "added"), and a file saved unchanged is no news at all."""
    memex = orch.memex_dir
    later = restart(orch)
    fired: list[tuple[str, str, str]] = []
    later.register_hook("notify-me", lambda e: fired.append((e.node_id, e.change, e.source)))
    later.rescan(memex / GUARDED)  # saved, unchanged
    assert fired == []
    later.rescan(edit(memex, "Keep these notes intact.", "Keep these notes."))
    assert fired == [("guard-1", "changed", "disk")]
    later.bootstrap()
    later.fire_missed()
    assert fired == [("guard-1", "changed", "disk")]  # once


def test_the_first_start_and_an_unreadable_record_fire_nothing(orch: Orchestrator) -> None:
    later = restart(orch)
    later.seen.path.write_text("{not json", encoding="utf-8")
    edit(orch.memex_dir, "intact", "whole")
    fired: list[str] = []
    later.register_hook("notify-me", lambda e: fired.append(e.change))
    later.bootstrap()
    later.fire_missed()
    assert fired == []
    assert later.seen.load() is not None  # the record was rewritten, whole


def test_files_outside_the_scan_dirs_come_back_at_start(orch: Orchestrator) -> None:
    path = orch.memex_dir / "outside" / "ideas.org"
    path.write_text("* Ponder\n:PROPERTIES:\n:ID: ponder-1\n:CRON: <2026-05-04 Mon +1d>\n"
                    ":END:\nThink.\n")
    orch.apply_edit({"file": str(path), "action": "added", "id": "ponder-1"})
    assert orch.job("ponder-1") is not None
    later = restart(orch)
    later.bootstrap()
    assert later.job("ponder-1") is not None
    assert "Not scanned" not in [j["heading"] for j in later.jobs()]  # never announced


def test_the_record_follows_changes_a_moment_later(orch: Orchestrator) -> None:
    orch.seen.delay = 0.01
    orch.rescan(edit(orch.memex_dir, "intact", "whole"))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        recorded = orch.seen.load()
        if recorded is not None and "whole" in recorded["guard-1"].body:
            break
        time.sleep(0.01)
    else:
        pytest.fail("the record never saw the change")
