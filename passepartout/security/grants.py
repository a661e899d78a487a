"""Standing grants: the children of ``* Grants`` in the approvals file, each a policy
rule in its properties (``:DECISION:``, ``:TOOL:``, ``:COMMAND:``, ``:PATH:``,
``:SCOPE:``, ``:SECRET:``, ``:HOST:``), sealed by the agent when the person gave it.

A grant counts only with a valid ``:SEAL:`` (a MAC over its rule, made with the key only
the agent process reads): one appended by anything else (a tool, a command in the
sandbox) is left out and reported.  A grant that only tightens (``deny`` or ``ask``)
needs no seal.  The person gives grants with ``passepartout grant add`` in a terminal,
or writes them in the file and seals them with ``passepartout grant accept``; grants
already in the file at the agent's first start are sealed then (nothing has run yet).
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from passepartout.errors import ConfigError
from passepartout.org.drawer import STRICT_PROPERTY, drawer_lines, property_line
from passepartout.org.escape import drawer, property_value
from passepartout.org.escape import org_line as one_line
from passepartout.org.heading import heading_line
from passepartout.security.policy import Rule, rule_from_mapping
from passepartout.security.trust.seal import Seal

PURPOSE = "grant"
# A grant written before ``content``, ``heading`` and ``property`` existed seals none of
# them, and its seal still holds (they are left out of what it covers when absent).
KEYS = ("decision", "tool", "command", "exact", "path", "scope", "secret", "host",
        "content", "heading", "property")
# What an "always" answer pins for these tools now (see passepartout.security.approvals.standing).
# Such a grant from an earlier answer, without its pin, allowed more than was shown: it
# no longer counts, and the person is told (the next question can be answered again).
PINNED_BY_ALWAYS = {
    "write-file": ("content",), "org-set-property": ("heading", "property"),
    "org-set-todo": ("heading",), "org-archive": ("heading",),
    "org-add-note": ("never",), "org-capture": ("never",), "org-add-heading": ("never",),
    "org-refile": ("never",), "remember": ("never",), "schedule": ("never",),
}
ALWAYS_TITLE = "Allowed always"
_HEADING = re.compile(r"^\*\s+(.*?)\s*$")


@dataclass(frozen=True)
class Grant:
    """One child of ``* Grants`` as read: where it is, and its rule's properties."""

    title: str
    properties: dict[str, str]
    start: int  # its heading's line
    end: int  # the line after it

    def entry(self) -> dict[str, str]:
        """Its rule's keys, lower-cased, as written."""
        return {k.lower(): v for k, v in self.properties.items() if k.lower() in KEYS}

    def decision(self) -> str:
        return self.entry().get("decision", "allow").strip().lower()

    def rule(self) -> Rule:
        entry: dict[str, str] = {"decision": "allow", **self.entry()}
        return rule_from_mapping(entry, f"grant {one_line(self.title, 60)!r}")


def canonical(entry: Mapping[str, str]) -> str:
    """What a grant's seal covers: its rule's properties, as a reader gets them back."""
    return json.dumps({k: property_value(entry[k]) for k in KEYS if entry.get(k)},
                      sort_keys=True, ensure_ascii=False)


def sealed(grant: Grant, seal: Seal) -> bool:
    return seal.verify(grant.properties.get("SEAL"), PURPOSE, canonical(grant.entry()))


def is_grants_heading(line: str) -> bool:
    """``* Grants``, tags allowed (``* Grants :noexport:``), no TODO keyword."""
    match = _HEADING.match(line)
    return match is not None and match.group(1).split(" :")[0].strip().lower() == "grants"


def section(lines: list[str]) -> tuple[int, int] | None:
    """The lines of the ``* Grants`` subtree (heading included), if there is one."""
    heads = [i for i, line in enumerate(lines) if line.startswith("* ")]
    at = next((i for i in heads if is_grants_heading(lines[i])), None)
    if at is None:
        return None
    return at, next((i for i in heads if i > at), len(lines))


def read(lines: list[str]) -> list[Grant]:
    """The grants of an approvals file's lines."""
    found = section(lines)
    if found is None:
        return []
    start, end = found
    heads = [i for i in range(start + 1, end) if lines[i].startswith("** ")] + [end]
    grants = []
    for head, nxt in itertools.pairwise(heads):
        props: dict[str, str] = {}
        # A reading of its own: every property line of the entry counts, in the drawer
        # or not, so that no property a person sees there escapes the seal's check.
        for line in lines[head + 1 : nxt]:
            if (m := STRICT_PROPERTY.match(line)) is not None and m.group(1).upper() not in (
                "PROPERTIES", "END"
            ):
                props[m.group(1).upper()] = m.group(2)
        grants.append(Grant(lines[head][3:].strip(), props, head, nxt))
    return grants


def rules(grants: list[Grant], seal: Seal,
          refused: Callable[[Grant, str], None]) -> list[Rule]:
    """The rules of the grants that count; ``refused`` hears of each one left out."""
    out: list[Rule] = []
    for grant in grants:
        if grant.decision() == "allow" and not sealed(grant, seal):
            refused(grant, "it does not carry the agent's seal (not given by the person)")
            continue
        if (why := outgrown(grant)) is not None:
            refused(grant, why)
            continue
        try:
            out.append(grant.rule())
        except ConfigError as err:
            refused(grant, err.message)
    return out


def outgrown(grant: Grant) -> str | None:
    """Why an allowing grant an earlier "always" answer wrote covers more than the
    person was shown (``None``: it does not)."""
    entry = grant.entry()
    pins = PINNED_BY_ALWAYS.get(entry.get("tool", "").strip())
    if (grant.decision() != "allow" or not grant.title.startswith(ALWAYS_TITLE)
            or pins is None or all(entry.get(k) for k in pins)):
        return None
    return ("it was given by an \"always\" answer before such answers were bound to what "
            "was shown (it would allow other content, headings or properties); answer the "
            "next question again")


def entry_lines(rule: Rule, title: str, seal: Seal) -> list[str]:
    """A new sealed grant's heading and drawer."""
    props = {"DECISION": rule.decision, "TOOL": rule.tool}
    if rule.command:
        props["COMMAND"] = " ".join(rule.command)
        if rule.exact:
            props["EXACT"] = "true"
    if rule.path:
        props["PATH"] = rule.path
    if rule.scope:
        props["SCOPE"] = str(rule.scope)
    if rule.secret:
        props["SECRET"] = rule.secret
    if rule.host:
        props["HOST"] = rule.host
    if rule.content:
        props["CONTENT"] = rule.content
    if rule.heading is not None:
        props["HEADING"] = rule.heading
    if rule.prop:
        props["PROPERTY"] = rule.prop
    props["SEAL"] = seal.sign(PURPOSE, canonical({k.lower(): v for k, v in props.items()}))
    return [heading_line(2, one_line(title)), *drawer(props, "   ").rstrip("\n").splitlines()]


def add(lines: list[str], entry: list[str]) -> list[str]:
    """``lines`` with ``entry`` appended to the ``* Grants`` subtree (made if missing)."""
    found = section(lines)
    if found is None:
        return [*lines, "* Grants", *entry]
    _, end = found
    return [*lines[:end], *entry, *lines[end:]]


def seal_all(lines: list[str], grants: list[Grant], seal: Seal) -> list[str]:
    """``lines`` with a fresh ``:SEAL:`` on each of ``grants`` (which must be read from
    ``lines``): the person accepted them as they are written."""
    out = list(lines)
    for grant in sorted(grants, key=lambda g: g.start, reverse=True):
        mac = seal.sign(PURPOSE, canonical(grant.entry()))
        body = [line for line in out[grant.start + 1 : grant.end]
                if not ((m := STRICT_PROPERTY.match(line)) and m.group(1).upper() == "SEAL")]
        drawer_at = next((i for i, line in enumerate(body) if line.strip() == ":PROPERTIES:"),
                         None)
        end_at = next((i for i, line in enumerate(body)
                       if drawer_at is not None and i > drawer_at and line.strip() == ":END:"),
                      None)
        if drawer_at is None or end_at is None:
            body = [*drawer_lines([("SEAL", mac)], "   "), *body]
        else:
            indent = body[end_at][: len(body[end_at]) - len(body[end_at].lstrip())]
            body.insert(end_at, indent + property_line("SEAL", mac))
        out[grant.start + 1 : grant.end] = body
    return out
