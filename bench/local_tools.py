"""Tool calls from the bundled model: valid-call and correct-call rates on a fixed set.

Runs every request of ``bench/local_tools_prompts.json`` (its own set: tool requests
in varied phrasings, and some that want a plain answer) against the tools a default
agent offers, and prints for each way of answering:

- valid calls: of the tool calls made, how many are JSON naming an offered tool with
  arguments its schema accepts (``Tool.validate``);
- correct: of all requests, how many got the expected tool with the expected key
  arguments, or a plain answer when one was expected;
- the time per request.

Ways: the local model under the grammar with intent parsing on (what the agent
does), the same with intent parsing off, and the baseline: the same prompt without
the grammar (a plain completion whose JSON is parsed).  The model decodes greedily, so
a run is repeatable; dates are relative to Monday 2026-11-23 18:00 for both.

    .venv/bin/python bench/local_tools.py [--no-baseline] [--limit N] [--verbose]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from passepartout.errors import PipelineError
from passepartout.events.agenda import agenda_tool
from passepartout.llm import intents, local, toolprompt
from passepartout.llm.builtin_tools import builtin_tools
from passepartout.llm.local import LocalModelError
from passepartout.security.tools import file_tools, shell_tool
from passepartout.tools import Tool, make_tool

PROMPTS = Path(__file__).resolve().parent / "local_tools_prompts.json"
NOW = dt.datetime(2026, 11, 23, 18, 0).astimezone()


def remember(title: str, body: str = "") -> str:
    """Write a note into the agent's memory (and its org notes file in the memex).

    Args:
        title: the note's heading
        body: the note's text
    """
    return title  # the schema is what counts here: the same signature as the memory skill's


def default_tools() -> list[Tool]:
    """The tools a default agent offers (their schemas; nothing here runs them)."""
    stub = cast(Any, None)
    return [
        *builtin_tools(stub),
        make_tool(remember, name="remember"),
        agenda_tool(lambda: Path("/nonexistent")),
        *file_tools(stub),
        shell_tool(stub),
    ]


@dataclass
class Outcome:
    call: tuple[str, dict[str, Any]] | None  # None: a plain answer
    valid: bool  # a call the tool's schema accepts (an answer counts as valid)
    seconds: float
    text: str = ""


def check(tools: dict[str, Tool], name: str, args: Any) -> bool:
    tool = tools.get(name)
    if tool is None or not isinstance(args, dict):
        return False
    try:
        tool.validate(args)
    except PipelineError:
        return False
    return True


def ask_model(prompt: str, tools: dict[str, Tool], grammar: bool) -> Outcome:
    messages = [{"role": "user", "content": prompt}]
    params = {"tools": [t.schema() for t in tools.values()]}
    saved = local.grammar_for
    if not grammar:
        local.grammar_for = lambda tools: None  # type: ignore[assignment,return-value]
    started = time.monotonic()
    try:
        text, result = local.complete(messages, params)
    except LocalModelError as err:  # a call that is not valid JSON of an offered tool
        return Outcome(("?", {}), False, time.monotonic() - started, str(err))
    finally:
        local.grammar_for = saved
    seconds = time.monotonic() - started
    if result.tool_call is None:
        return Outcome(None, True, seconds, text)
    call = result.tool_call
    return Outcome((call.name, call.arguments), check(tools, call.name, call.arguments),
                   seconds, text)


def correct(expect: dict[str, Any] | None, outcome: Outcome) -> bool:
    if expect is None:
        return outcome.call is None
    if outcome.call is None or not outcome.valid or outcome.call[0] != expect["tool"]:
        return False
    args = outcome.call[1]
    return all(re.search(pattern, str(args.get(key, "")), re.IGNORECASE)
               for key, pattern in expect["args"].items())


def report(label: str, cases: list[dict[str, Any]], outcomes: list[Outcome]) -> None:
    calls = [o for o in outcomes if o.call is not None]
    valid = sum(o.valid for o in calls)
    right = sum(correct(c["expect"], o) for c, o in zip(cases, outcomes, strict=True))
    times = [o.seconds for o in outcomes]
    print(f"{label:<34} valid calls {valid:>3}/{len(calls):<3} "
          f"({100 * valid / max(1, len(calls)):5.1f} %)   correct {right:>3}/{len(cases):<3} "
          f"({100 * right / len(cases):5.1f} %)   {statistics.median(times):6.2f} s median, "
          f"{sum(times):6.1f} s in all")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--no-baseline", action="store_true", help="skip the run without grammar")
    parser.add_argument("--limit", type=int, default=0, help="only the first N requests")
    parser.add_argument("--verbose", action="store_true", help="print each request's outcome")
    opts = parser.parse_args()
    ok, why = local.local_model_available()
    if not ok:
        sys.exit(why)
    cases = json.loads(PROMPTS.read_text(encoding="utf-8"))["prompts"]
    if opts.limit:
        cases = cases[: opts.limit]
    tools = {t.name: t for t in default_tools()}
    toolprompt.today = NOW.date  # the model's prompt names the same day as the set
    print(f"{len(cases)} requests ({sum(c['expect'] is None for c in cases)} want a plain "
          f"answer), {len(tools)} tools offered, model {local.LOCAL_MODEL}")

    model = [ask_model(c["prompt"], tools, grammar=True) for c in cases]
    with_intents: list[Outcome] = []
    for case, fallback in zip(cases, model, strict=True):
        started = time.monotonic()
        intent = intents.parse(case["prompt"], NOW)
        if intent is None:
            with_intents.append(fallback)
        else:
            with_intents.append(Outcome((intent.tool, intent.args),
                                        check(tools, intent.tool, intent.args),
                                        time.monotonic() - started))
    parsed = sum(intents.parse(c["prompt"], NOW) is not None for c in cases)
    report("grammar + intent parsing", cases, with_intents)
    print(f"{'':<34} ({parsed} requests read by intent parsing, no model call)")
    report("grammar, intent parsing off", cases, model)
    if not opts.no_baseline:
        baseline = [ask_model(c["prompt"], tools, grammar=False) for c in cases]
        report("baseline: no grammar, no intents", cases, baseline)
    if opts.verbose:
        for case, outcome in zip(cases, with_intents, strict=True):
            mark = "ok " if correct(case["expect"], outcome) else "BAD"
            got = outcome.call if outcome.call is not None else f"answer {outcome.text[:60]!r}"
            print(f"{mark} {case['prompt'][:50]!r:<54} {got}")


if __name__ == "__main__":
    main()
