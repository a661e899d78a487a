"""The org edits against org-mode itself: for every edit, on generated files, the file
after our edit is byte for byte the file after org's own command in ``emacs --batch``
(org-insert-heading, org-set-property, org-todo with its repeater rule and state note,
org-add-note, org-refile, org-archive-subtree, org-capture), the clock pinned by libfaketime."""

from __future__ import annotations

import difflib
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from passepartout.org.edits import NewHeading
from passepartout.org.escape import org_escape

from passepartout.org import edits
from tests.orgedit_gen import NOW, Generated, org_file, run_oracle

PER_OPERATION = 14


def _before_9_6(version: str) -> bool:
    major, minor = (int(x) for x in re.findall(r"\d+", version)[:2])
    return (major, minor) < (9, 6)


Ours = Callable[[dict[str, str], Path, bool], dict[str, str]]


def _cases(rng: random.Random) -> list[tuple[str, dict[str, Any], dict[str, str], Ours]]:
    """(operation, the oracle's case, the files before, our edit) for every case."""
    out: list[tuple[str, dict[str, Any], dict[str, str], Ours]] = []
    for _ in range(PER_OPERATION):
        gen = org_file(rng)
        spot = rng.choice(gen.spots)
        key = rng.choice(["EFFORT", "Owner", "ID", "COLOR"])
        value = rng.choice(["2:00", "Ann Smith", "new-id", "blue  green"])
        out.append(("set-property", {"address": spot.address, "key": key, "value": value},
                    {"a.org": gen.text},
                    lambda f, d, _l, a=spot.address, k=key, v=value:
                    {"a.org": edits.set_property(f["a.org"], a, k, v)}))

        gen = org_file(rng)
        repeated = [s for s in gen.spots if _repeats(gen, s)]
        spot = rng.choice(repeated or gen.spots)
        states = ["DONE", "TODO", None]
        if "#+TODO:" in gen.text:
            states += ["NEXT", "CANCELLED"]
        state = "DONE" if repeated and rng.random() < 0.7 else rng.choice(states)
        out.append(("set-todo", {"address": spot.address, "state": state}, {"a.org": gen.text},
                    lambda f, d, legacy, a=spot.address, s=state:
                    {"a.org": edits.set_todo(f["a.org"], a, s, NOW, NOW.tzinfo,
                                             legacy_catch_up=legacy)}))

        gen = org_file(rng)
        spot = rng.choice(gen.spots)
        note = rng.choice(["Called back.", "Two lines\nof note", "* not a heading\n:END:",
                           "Ünïcode — ok"])
        typed = org_escape(note, "body")  # what the person would type: the tool escapes
        out.append(("add-note", {"address": spot.address, "note": typed}, {"a.org": gen.text},
                    lambda f, d, _l, a=spot.address, n=note:
                    {"a.org": edits.add_note(f["a.org"], a, n, NOW)}))

        gen = org_file(rng)
        parent = rng.choice([None, *gen.spots])
        level = (parent.level if parent else 0) + rng.choice([1, 1, 2])
        new = NewHeading(
            title=rng.choice(["New task", "Read: a book", "Ünïcode title"]),
            tags=tuple(rng.sample(["a", "b", "@office"], rng.choice([0, 1, 2]))),
            properties=rng.choice([{}, {"EFFORT": "0:30"}, {"A": "1", "B_C": "two words"}]),
            body=rng.choice(["", "A body.", "Line one\n* not a heading"]),
            todo=rng.choice([None, "TODO"]),
        )
        address = parent.address if parent else None
        case = {"address": address, "title": new.title, "tags": list(new.tags),
                "properties": new.properties, "body": _escaped_body(new.body),
                "todo": new.todo, "level": level}
        out.append(("add-heading", case, {"a.org": gen.text},
                    lambda f, d, _l, a=address, n=new, lv=level:
                    {"a.org": edits.add_heading(f["a.org"], a, n, lv)}))

        gen = org_file(rng)
        spot = rng.choice(gen.spots)
        others = [s for s in gen.spots if not s.path.startswith(spot.path)]
        if rng.random() < 0.5:
            other = org_file(rng, prefix="O")
            target = rng.choice([None, *other.spots])
            taddr = target.address if target else None
            out.append(("refile", {"address": spot.address, "target": taddr,
                                   "target_file": "b.org"},
                        {"a.org": gen.text, "b.org": other.text},
                        lambda f, d, _l, a=spot.address, t=taddr: dict(
                            zip(["a.org", "b.org"],
                                edits.refile(f["a.org"], a, t, f["b.org"]), strict=True))))
        else:
            target = rng.choice([None, *others])
            taddr = target.address if target else None
            out.append(("refile", {"address": spot.address, "target": taddr},
                        {"a.org": gen.text},
                        lambda f, d, _l, a=spot.address, t=taddr:
                        {"a.org": edits.refile(f["a.org"], a, t)[0]}))

        gen = org_file(rng)
        spot = rng.choice(gen.spots)
        files = {"a.org": gen.text}
        if rng.random() < 0.4:
            files["a.org_archive"] = org_file(rng, prefix="X", keywords=False).text
        out.append(("archive", {"address": spot.address}, files,
                    lambda f, d, _l, a=spot.address: dict(
                        zip(["a.org", "a.org_archive"],
                            edits.archive(f["a.org"], a, str(d / "a.org"),
                                          f.get("a.org_archive"), NOW), strict=True))))
        gen = org_file(rng)
        new = NewHeading(title=rng.choice(["Buy milk", "Call Ann: re contract"]),
                         tags=tuple(rng.sample(["a", "@errand"], rng.choice([0, 1, 2]))),
                         body=rng.choice(["", "2 litres", "* not a heading"]))
        case = {"title": new.title, "tags": list(new.tags), "body": _escaped_body(new.body)}
        out.append(("capture", case, {"a.org": gen.text},
                    lambda f, d, _l, n=new:
                    {"a.org": edits.add_heading(f["a.org"], None, n, 1, capture=True)}))
    return out


def _repeats(gen: Generated, spot: Any) -> bool:
    title = spot.path.rsplit("/", 1)[-1]
    at = gen.text.find(f" {title}")
    end = gen.text.find("\n*", at)
    return bool(edits.REPEATED.search(gen.text[at:end if end >= 0 else None]))


def _escaped_body(body: str) -> str:
    return org_escape(body.strip("\n"), "body") if body.strip() else ""


@pytest.mark.emacs
@pytest.mark.parametrize("seed", [20261123, 7])
def test_every_edit_matches_org_mode(tmp_path: Path, seed: int) -> None:
    cases = _cases(random.Random(seed))
    oracle_cases = []
    for n, (op, case, files, _ours) in enumerate(cases):
        where = tmp_path / f"case{n:03d}"
        where.mkdir()
        for name, text in files.items():
            (where / name).write_text(text, encoding="utf-8")
        oracle_cases.append({"dir": str(where), "file": "a.org", "op": op, **case})
    version, status = run_oracle(tmp_path, oracle_cases)
    legacy = _before_9_6(version)
    mismatches: list[str] = []
    counted: dict[str, int] = {}
    for n, (op, case, files, ours) in enumerate(cases):
        where = tmp_path / f"case{n:03d}"
        if status.get(str(where)) != "OK":
            mismatches.append(f"--- {op} {case}: org said {status.get(str(where))}")
            continue
        mine = ours(files, where, legacy)
        for name, text in mine.items():
            theirs = (where / name).read_text(encoding="utf-8")
            if text != theirs:
                diff = difflib.unified_diff(theirs.splitlines(), text.splitlines(), "org",
                                            "ours", lineterm="")
                mismatches.append(f"--- {op} {case} in {name}:\n" + "\n".join(diff))
        counted[op] = counted.get(op, 0) + 1
    assert not mismatches, f"org {version}: {len(mismatches)} differ\n" + "\n".join(mismatches[:6])
    assert all(count == PER_OPERATION for count in counted.values()) and len(counted) == 7
