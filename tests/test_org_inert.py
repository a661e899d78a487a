"""Nothing the agent writes into org runs: every writer's text passes org_escape, which
makes inert what org or Emacs would evaluate (agenda sexps anywhere in a line, babel
blocks, inline source and calls, keyword lines, evaluating links and abbreviations of
them, macros, file-local variables), and never opens a drawer, heading or keyword.

Proved three ways: a table of inputs and outputs; a property over random hostile text
(org's own regexps, transcribed, find nothing in the output, and org-element agrees on
a seeded sample in emacs --batch); and an attack: a payload holding every construct,
written through each real writer, then each file visited with org defaults, its file
variables allowed, and the agenda built over all of them in emacs --batch; the
payload's sexps write marker files, and none appears.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from passepartout.org.escape import ZWSP, inert, org_escape, org_json
from passepartout.org.eventlog import Entry, EventLog

from passepartout.events.headingedit import add_note, locate, set_child, set_property
from passepartout.llm.builtin_tools import SCHEDULE_FILE
from passepartout.loop.actions import Action, ApprovalRequest
from passepartout.security.approvals import ApprovalBook, parse
from passepartout.security.audit import AuditLog
from passepartout.signals import Keyword, Signal

ORACLE = Path(__file__).parent / "emacs" / "org_inert_oracle.el"
Z = ZWSP

# -- a table of inputs and what org_escape writes ----------------------------------------

TABLE = [
    ("line", "Meet <%%(diary-float t 4 2)>", f"Meet <%{Z}%(diary-float t 4 2)>"),
    ("line", "x [%%(pwn)] y", f"x [%{Z}%(pwn)] y"),
    ("body", "&%%(pwn)", f"&%{Z}%(pwn)"),
    ("body", "a %% (pwn)", f"a %{Z}% (pwn)"),
    ("line", "100%% sure", "100%% sure"),
    ("line", "src_sh{rm -rf ~} src_python[:var x=1]{x}",
     f"src{Z}_sh{{rm -rf ~}} src{Z}_python[:var x=1]{{x}}"),
    ("line", "call_pwn() call_pwn[:x 1](y)", f"call{Z}_pwn() call{Z}_pwn[:x 1](y)"),
    ("line", "src_dir and call_me are words", "src_dir and call_me are words"),
    ("line", "[[elisp:(kill-emacs)][ok]] <shell:ls> ELISP:x",
     f"[[{Z}elisp{Z}:(kill-emacs)][ok]] <shell{Z}:ls> ELISP{Z}:x"),
    ("line", "[[pwn:x]] [[pwn]] [[pwn][d]]", f"[[{Z}pwn:x]] [[{Z}pwn]] [[{Z}pwn][d]]"),
    ("line", "[[https://x.org][x]] [[file:a.org]] [[id:1]] [[*Heading]] [[#c]] [[Two words]]",
     "[[https://x.org][x]] [[file:a.org]] [[id:1]] [[*Heading]] [[#c]] [[Two words]]"),
    ("line", "{{{pwn(1)}}} -*- eval: (pwn) -*-",
     f"{{{Z}{{{{pwn(1)}}}}}} -*{Z}- eval: (pwn) -*{Z}-"),
    ("body", "# Local Variables:\n# eval: (pwn)\n# End:",
     f"# Local{Z} Variables:\n# eval: (pwn)\n# End:"),
    ("body", ":PROPERTIES:\n:CRON: <2026-01-01 Thu>\n:END:",
     ",:PROPERTIES:\n,:CRON: <2026-01-01 Thu>\n,:END:"),
    ("body", "#+CALL: pwn()\n #+begin_src sh\n#+HEADER: :var x=1\n#+SETUPFILE: x\n#+INCLUDE: y",
     ",#+CALL: pwn()\n ,#+begin_src sh\n,#+HEADER: :var x=1\n,#+SETUPFILE: x\n,#+INCLUDE: y"),
    ("body", "#+BIND: a 1\n#+PROPERTY: header-args :eval yes\n#+TBLFM: $1='(pwn)",
     ",#+BIND: a 1\n,#+PROPERTY: header-args :eval yes\n,#+TBLFM: $1='(pwn)"),
    ("body", "#+MACRO: m (eval (pwn))\n* heading", ",#+MACRO: m (eval (pwn))\n,* heading"),
    ("block", "#+end_src\n<%%(pwn)>", f",#+end_src\n<%{Z}%(pwn)>"),
]


@pytest.mark.parametrize(("where", "text", "written"), TABLE)
def test_escape_table(where: str, text: str, written: str) -> None:
    assert org_escape(text, where) == written  # type: ignore[arg-type]
    assert org_escape(written, where).replace(",", "") == written.replace(",", "")
    # It reads the same: only commas and zero-width spaces went in.
    assert written.replace(Z, "").replace(",", "") == text.replace(",", "")


# -- org's own regexps, transcribed: what would run -------------------------------------

EVALUATING = [
    re.compile(r"<%%\([^>\n]+\)[^\n>]*>"),  # org-agenda-get-timestamps, diary type
    re.compile(r"\[%%\("),
    re.compile(r"^&?%%\(", re.M),  # org-agenda-get-sexps, org-element diary-sexp
    re.compile(r"\bsrc_[^ \t\n\[{]+[{\[]"),  # org-element inline-src-block
    re.compile(r"\bcall_[^ \t\n\[(]+[(\[]"),  # org-element inline-babel-call
    re.compile(r"(elisp|shell):", re.I),
    re.compile(r"\[\[(?![\w+.-]*\u200b)[A-Za-z][\w+.-]*(?:\]|:)(?<!https:)(?<!http:)"
               r"(?<!file:)(?<!id:)(?<!mailto:)"),
    re.compile(r"\{\{\{"),
    re.compile(r"-\*-"),
    re.compile(r"Local Variables:", re.I),
    re.compile(r"^[ \t]*(#\+|:[^\s:]*:[ \t]*$|\*+ |(SCHEDULED|DEADLINE|CLOSED):)", re.M),
]
FRAGMENTS = [
    "<%%(", "[%%(", "%%(", "&%%(", "%", "%%", "(pwn)", ">", "]", "src_", "sh", "{", "}",
    "[", "(", "call_", "elisp", "shell", ":", "[[", "]]", "pwn", "https", "{{{", "}}}",
    "-*-", "-", "*", "Local", " ", "Variables:", "\n", "#+", "CALL", "PROPERTIES", "END",
    "SCHEDULED:", ",", "\u2028", "\r", "\t", "a", "\u200b",
]


def hostile() -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=2), max_size=16).map(
        "".join)


def evaluating(text: str) -> list[str]:
    return [m.group() for p in EVALUATING for m in p.finditer(text)]


@settings(max_examples=400, deadline=None, derandomize=True)
@given(text=hostile())
def test_no_escaped_text_holds_a_construct_org_evaluates(text: str) -> None:
    body = org_escape(text, "body")
    assert evaluating(body) == [], body
    line = org_escape(text, "line")
    assert evaluating(f"x {line}") == [], line
    assert org_escape(body, "body").replace(",", "") == body.replace(",", "")
    assert inert(inert(text)) == inert(text)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(value=st.recursive(
    st.none() | st.booleans() | st.integers() | hostile(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(hostile(), inner, max_size=3),
    max_leaves=8))
def test_an_action_block_reads_back_exactly_and_holds_nothing(value: object) -> None:
    text = org_json(value)
    assert json.loads(text) == json.loads(json.dumps(value))
    assert org_escape(text, "block") == text  # nothing left for the block to change
    assert [e for e in evaluating(text) if not e.startswith("#+")] == []


def _emacs() -> str:
    emacs = shutil.which("emacs")
    assert emacs is not None, "the org-mode check needs Debian's emacs"
    return emacs


def run_oracle(files: list[Path]) -> list[str]:
    out = subprocess.run([_emacs(), "--batch", "-Q", "-l", str(ORACLE), *map(str, files)],
                         capture_output=True, text=True, timeout=300, check=True)
    return [line for line in out.stdout.splitlines() if line.startswith("FOUND")]


def test_org_element_finds_nothing_in_escaped_text(tmp_path: Path) -> None:
    """A seeded sample of hostile text, escaped as a heading's title and body: org
    itself (org-element, the agenda, file variables) finds nothing that runs."""
    rng = random.Random(21)
    files = []
    for batch in range(4):
        parts = []
        for _ in range(60):
            text = "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 18)))
            parts.append(f"* {org_escape(text, 'line')}\n{org_escape(text, 'body')}\n")
        path = tmp_path / f"sample-{batch}.org"
        path.write_text("".join(parts), encoding="utf-8")
        files.append(path)
    assert run_oracle(files) == []


# -- the attack: every construct, through every writer ----------------------------------


def payload(marks: Path) -> str:
    def sexp(name: str) -> str:
        return f'(progn (write-region "x" nil "{marks / name}") t)'

    return (
        f"-*- eval: {sexp('prop-line')} -*-\n"
        "Plan:\n:PROPERTIES:\n:CRON: <2026-01-01 Thu 09:00 +1d>\n:HOOK: summarize\n:END:\n"
        f"* ALLOW everything\nSCHEDULED: <%%{sexp('scheduled')}>\n"
        f"#+CALL: pwn()\n#+BEGIN_SRC emacs-lisp :results silent\n{sexp('babel')}\n#+END_SRC\n"
        f"Meet <%%{sexp('agenda')}> or [%%{sexp('inactive')}]\n"
        f"%%{sexp('diary')}\n&%%{sexp('diary-amp')}\n"
        f"src_emacs-lisp{{{sexp('inline')}}} call_pwn() "
        f"[[elisp:{sexp('link')}][click]] elisp:{sexp('plain')} [[shell:touch x]] [[pwn:x]]\n"
        f"{{{{{{pwn(1)}}}}}}\n#+MACRO: pwn (eval {sexp('macro')})\n"
        "#+SETUPFILE: /tmp/evil.org\n#+INCLUDE: /etc/passwd\n#+BIND: x 1\n"
        f"#+PROPERTY: header-args :eval yes\n#+HEADER: :var x={sexp('header')}\n"
        f"#+TBLFM: $1='{sexp('tblfm')}\n#+LINK: pwn elisp:{sexp('abbrev')}\n"
        f"# Local Variables:\n# eval: {sexp('locals')}\n# End:\n"
    )


def one_line_payload(marks: Path) -> str:
    """What fits a property value (400 characters)."""
    sexp = f'(progn (write-region "x" nil "{marks / "property"}") t)'
    return f"<%%{sexp}> [[pwn:x]] src_elisp{{(pwn)}} {{{{{{pwn}}}}}} -*- x -*- [%%{sexp}]"


def signal() -> Signal:
    return Signal(payload={"sensor": Keyword("user-input"), "text": "x"},
                  meta={"source": Keyword("cron"), "session-id": "s", "origin": "cron"})


@pytest.mark.attack
def test_every_writer_writes_a_hostile_payload_that_runs_nothing(
        env: dict[str, str], tmp_path: Path) -> None:
    from passepartout.agent import Agent
    from passepartout.config import Config

    marks = tmp_path / "marks"
    marks.mkdir()
    evil = payload(marks)
    # The payload does run when written raw: the check below can see it.
    raw = tmp_path / "raw.org"
    raw.write_text("* TODO raw\n" + evil, encoding="utf-8")
    run_oracle([raw])
    assert {"agenda", "diary"} <= {p.name for p in marks.iterdir()}
    for mark in marks.iterdir():
        mark.unlink()

    memex = Path(env["MEMEX_DIR"])
    written = tmp_path / "written"
    written.mkdir()
    # The agent's tools: remember, schedule, and the org edits (note, heading, property).
    agent = Agent(Config.from_mapping({**env, "PASSEPARTOUT_EMBEDDINGS": "off"},
                                      config_dir=Path(env["PASSEPARTOUT_CONFIG_DIR"])))
    agent.boot(start_threads=False)
    try:
        assert agent.registry.exports("memory").memory_SERVICE.imported.wait(20)
        project = memex / "projects" / "plan.org"
        project.write_text("* TODO Plan the week\nSome text.\n", encoding="utf-8")
        for tool, args in [
            ("remember", {"title": evil, "body": evil}),
            ("schedule", {"name": evil, "timestamp": "2026-01-01 Thu 09:00 +1d",
                          "prompt": evil}),
            ("org-add-note", {"file": str(project), "heading": "Plan the week",
                              "note": evil}),
            ("org-set-property", {"file": str(project), "heading": "Plan the week",
                                  "key": "SUMMARY", "value": one_line_payload(marks)}),
            ("org-add-heading", {"file": str(project), "title": evil.replace("\n", " "),
                                 "body": evil}),
        ]:
            agent.tool(tool).run(args)
    finally:
        agent.shutdown()
    files = [memex / "agent" / "notes.org", project, *memex.glob("*/" + SCHEDULE_FILE)]
    # A Flight Plan, with its result; audit; events.org.
    book = ApprovalBook(written / "approvals.org", tmp_path / "state" / "flightplans.json",
                        mask=str)
    action = Action("tool", "shell", {"cmd": evil})
    plan = book.propose(ApprovalRequest(action, (evil,), signal()))
    book.mark(plan.id, "DONE", evil)
    assert parse((written / "approvals.org").read_text()).plans[0].action() == action
    audit = AuditLog(written / "audit.org", mask=str)
    audit.note("deny", "policy", evil, action, signal())
    audit.close()
    EventLog(written / "events.org").record(Entry("hook", evil, evil, "warning", evil, evil))
    # A hook's output: a note, a property and a child under the hooked heading.
    hooked = written / "hooked.org"
    hooked.write_text("* TODO Read the paper\n:PROPERTIES:\n:ID: paper\n:HOOK: summarize\n"
                      ":END:\nThe paper.\n", encoding="utf-8")
    for edit in (lambda t, p: add_note(t, p, evil, "[2026-01-01 Thu 09:00]"),
                 lambda t, p: set_property(t, p, "SUMMARY", evil),
                 lambda t, p: set_child(t, p, evil, evil)):
        text = hooked.read_text(encoding="utf-8")
        hooked.write_text(edit(text, locate(text, str(hooked), "paper")), encoding="utf-8")
    files += sorted(written.iterdir())
    assert len(files) == 7 and all(f.exists() for f in files), files

    found = run_oracle(files)
    assert found == []
    assert sorted(p.name for p in marks.iterdir()) == []
