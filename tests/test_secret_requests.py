"""Which requests are about a secret: the classes of secret, what may still be said about
one (a note or a reminder without its value, a general question), and ordinary words that
only look like one ("token budget", "pin this note", "cookies", "secret santa")."""

from __future__ import annotations

import pytest

from passepartout.llm import intents
from passepartout.llm.secret_requests import (
    asks_to_reveal,
    carries_secret,
    names_secret,
    offline_refuses,
)

# Worded here for this test, in every class of secret and of asking.
REFUSED_OFFLINE = [
    "print my API key",
    "I lost the router password",
    "my atm pin??",
    "need the gate code for the garage asap",
    "what was the passcode on the old tablet",
    "dig up my github token from my notes",
    "i forgot the credentails for the nas",          # misspelt
    "whats the passwrod for the printer admin page",  # misspelt
    "list the recovery codes for my google account",
    "show me ~/.netrc",
    "type out the wallet seed words for me",
    "which combination opens the padlock on the shed? the combination for the padlock",
    "my ssn please",
    "the cvv on the visa",
    "read ~/.ssh/id_ed25519",
    "echo $GITHUB_TOKEN",
    "remind me what my netflix password is",
    "note: the wifi password is Tr0ub4dor&3",
    "remember my door code is 4471",
    "grep the repo for AWS_SECRET_ACCESS_KEY",
]
LEFT_ALONE = [
    "remind me on Friday to change the router password",
    "note: renewed the licence key for the scanner today",
    "todo: set up 2FA on the bank account",
    "every month on the 1st remind me to rotate the deploy token",
    "how do I make a strong passphrase?",
    "what's a good password manager for linux",
    "how many tokens did the last reply use",
    "what's the token budget for this chat",
    "pin this note to the top",
    "bake cookies for the fair on saturday",
    "buy tomato seeds",
    "who is in the secret santa draw this year",
    "search my vault for soup recipes",
    "run pwd",
    "log into my bank and pay the phone bill",
]


@pytest.mark.parametrize("text", REFUSED_OFFLINE)
def test_a_request_about_a_secret_is_refused_offline(text: str) -> None:
    assert offline_refuses(text), text


@pytest.mark.parametrize("text", LEFT_ALONE)
def test_a_note_a_reminder_or_a_word_that_only_looks_like_one_is_not(text: str) -> None:
    assert not offline_refuses(text), text


def test_asking_to_see_one_is_told_from_naming_one() -> None:
    assert asks_to_reveal("show me the wifi password")
    assert asks_to_reveal("what's my openai key?")
    assert not asks_to_reveal("I lost the router password")  # named, not asked to be shown
    assert names_secret("I lost the router password")
    assert not asks_to_reveal("what's the best password manager")  # a general question


def test_a_value_is_what_a_note_must_not_carry() -> None:
    assert carries_secret("the alarm code is 1906")
    assert carries_secret("key sk-proj4x9Qm2LrT7v")
    assert not carries_secret("the router password is on the back of the box")
    assert not carries_secret("my pin is expiring next month")


def test_the_reader_refuses_with_a_reason_and_keeps_the_notes_about_secrets() -> None:
    refused = intents.parse("I lost the router password")
    assert refused is not None and refused.kind == "secret" and "secret" in refused.reply
    shown = intents.parse("print my API key")
    assert shown is not None and shown.kind == "refuse"
    reminder = intents.parse("remind me on Friday at 9 to change the router password")
    assert reminder is not None and reminder.tool == "schedule"
    note = intents.parse("note: renewed the licence key for the scanner today")
    assert note is not None and note.tool == "remember"
