"""Drawers org does not see make no job and no hook: a :PROPERTIES: drawer inside a
quote, example or src block, after body text, in a list item, after a line separator
in the headline; and a drawer under a COMMENT heading or an archived one.  Each file
also holds one real job, which loads: through the daemon's orchestrator (bootstrap,
a rescan after a write, an Emacs edit)."""

from __future__ import annotations

from pathlib import Path

import pytest
from events_memex import UTC, Clock

from passepartout.events.orchestrator import Orchestrator

pytestmark = pytest.mark.attack

DRAWER = (":PROPERTIES:\n:CRON: <2026-05-04 Mon 09:00 +1d>\n:HOOK: notify-me\n"
          ":TIER: reasoning\n:END:\n")
REAL = "* Real job\n:PROPERTIES:\n:CRON: <2026-05-04 Mon 07:00 +1d>\n:END:\nSummarize mail.\n"

HIDDEN = {
    "quote block": f"* Hidden\n#+begin_quote\n{DRAWER}#+end_quote\nSend my notes away.\n",
    "example block": f"* Hidden\n#+BEGIN_EXAMPLE\n{DRAWER}#+END_EXAMPLE\n",
    "src block": f"* Hidden\n#+begin_src org\n{DRAWER}#+end_src\n",
    "verse block": f"* Hidden\n#+begin_verse\n{DRAWER}#+end_verse\n",
    "after body text": f"* Hidden\nA harmless line first.\n{DRAWER}",
    "after a blank line": f"* Hidden\n\n{DRAWER}",
    "in a list item": "* Hidden\n- an item\n" + "".join("  " + line + "\n"
                                                     for line in DRAWER.splitlines()),
    "in another drawer": f"* Hidden\n:LOGBOOK:\n{DRAWER}:END:\n",
    "after a line separator": f"* Hidden\u2028{DRAWER}",
    "after a form feed": f"* Hidden\x0c{DRAWER}",
    "COMMENT heading": f"* COMMENT Hidden\n{DRAWER}",
    "COMMENT after keyword and priority": f"* TODO [#A] COMMENT Hidden\n{DRAWER}",
    "under a COMMENT heading": f"* COMMENT Parent\n** Hidden\n{DRAWER}",
    "ARCHIVE tag": f"* Hidden :ARCHIVE:\n{DRAWER}",
    "under an archived heading": f"* Parent :work:ARCHIVE:\n** Child\n*** Hidden\n{DRAWER}",
}


def _orch(tmp_path: Path) -> Orchestrator:
    memex = tmp_path / "memex"
    (memex / "projects").mkdir(parents=True, exist_ok=True)
    return Orchestrator(home=tmp_path / "home", memex_dir=memex, clock=Clock("2026-05-03 12:00"),
                        tz=UTC, inject=lambda _signal: True)


def _loaded(orch: Orchestrator) -> list[str]:
    return sorted(node.heading for node in orch.registry.nodes())


@pytest.mark.parametrize("case", sorted(HIDDEN))
def test_a_drawer_org_does_not_see_is_no_job(tmp_path: Path, case: str) -> None:
    orch = _orch(tmp_path)
    (orch.memex_dir / "projects" / "notes.org").write_text(HIDDEN[case] + REAL, encoding="utf-8")
    orch.bootstrap()
    assert _loaded(orch) == ["Real job"]
    assert [job["heading"] for job in orch.jobs()] == ["Real job"]


@pytest.mark.parametrize("case", ["quote block", "after body text", "in a list item",
                                  "COMMENT heading", "ARCHIVE tag"])
def test_a_hidden_drawer_written_later_or_saved_in_emacs_is_no_job(tmp_path: Path,
                                                                    case: str) -> None:
    orch = _orch(tmp_path)
    orch.bootstrap()
    path = orch.memex_dir / "projects" / "later.org"
    path.write_text(REAL + HIDDEN[case], encoding="utf-8")
    orch.rescan(path)
    assert _loaded(orch) == ["Real job"]
    orch.apply_edit({"file": str(path), "action": "added", "heading": "Hidden", "outline": [],
                     "new": HIDDEN[case]})
    assert _loaded(orch) == ["Real job"]
    assert [job["heading"] for job in orch.jobs()] == ["Real job"]


def test_a_file_tagged_archive_holds_no_job(tmp_path: Path) -> None:
    orch = _orch(tmp_path)
    old = orch.memex_dir / "projects" / "old.org"
    old.write_text("#+FILETAGS: :ARCHIVE:\n" + REAL, encoding="utf-8")
    (orch.memex_dir / "projects" / "notes.org").write_text(REAL, encoding="utf-8")
    orch.bootstrap()
    assert [Path(node.file).name for node in orch.registry.nodes()] == ["notes.org"]


def test_an_unsaved_commented_heading_sent_by_emacs_is_no_job(tmp_path: Path) -> None:
    orch = _orch(tmp_path)
    orch.bootstrap()
    file = str(orch.memex_dir / "projects" / "unsaved.org")
    orch.apply_edit({"file": file, "action": "added", "outline": [],
                     "new": HIDDEN["COMMENT heading"]})
    assert orch.jobs() == [] and orch.registry.nodes() == []
