"""The redacted copies the sandbox binds over private org files: made once per content,
made again when the file changes."""

from __future__ import annotations

from pathlib import Path

from passepartout.security.privacy.index import current
from passepartout.security.sandbox.views import private_views


def test_a_view_is_reused_while_the_file_is_unchanged_and_remade_after(tmp_path: Path) -> None:
    notes = tmp_path / "notes.org"
    notes.write_text("* Groceries\nmilk\n* Diary :@personal:\nfirst secret entry here\n")
    assert current().learn_file(notes)
    views = tmp_path / "views"
    (first, original), = [p for p in private_views(views, "@personal") if p[1] == str(notes)]
    assert original == str(notes)
    text = Path(first).read_text()
    assert "milk" in text and "first secret" not in text
    again = dict((o, v) for v, o in private_views(views, "@personal"))[str(notes)]
    assert again == first
    notes.write_text(notes.read_text() + "second secret entry here\n* Later\nbread\n")
    current().learn_file(notes)
    remade = dict((o, v) for v, o in private_views(views, "@personal"))[str(notes)]
    assert remade != first
    text = Path(remade).read_text()
    assert "bread" in text and "second secret" not in text and "first secret" not in text
    current().forget(str(notes))
