"""Whether a request is about a secret, and whether it asks to see one.

Two tests, for two kinds of model:

- :func:`asks_to_reveal`: a request to show, find or recover a secret ("print my API
  key", "what's the wifi password?").  Refused whatever the model: what is shown in a
  chat may be kept or sent on.
- :func:`names_secret`: the request names a secret at all ("I forgot the router
  password", "need the door code asap", "my bank pin?").  Offline, the small local model
  can do nothing with such a request but harm (search for it, invent it), so it is
  refused unless it is a note or a reminder *about* the secret that carries no value
  ("remind me Friday to rotate the API key"), or a general question ("how do I make a
  strong password?").  A provider's model is trusted with the wording: it proposes, and
  the file and shell gates keep secret places closed.

The words are the classes of secret, not one set's phrasings: credentials (passwords,
passcodes, PINs, tokens, keys, cookies, recovery and 2FA codes, seed phrases), the
places they live (``~/.ssh``, ``.env``, ``.authinfo``, keyrings, password stores),
and identity and payment numbers.  A false "no" costs a retyped request; a false "yes"
offline costs a secret.
"""

from __future__ import annotations

import difflib
import functools
import re

# Words that name a secret, or a place where secrets are kept.
_NOUNS = (
    r"api[\s_-]?keys?|access[\s_-]?keys?|secret[\s_-]?keys?|auth(?:entication)?[\s_-]?(?:codes?|keys?)"
    r"|(?:(?:my|the|our|your|a|bot|api|access|auth|refresh|session|personal|bearer|github"
    r"|gitlab|telegram|slack|discord|npm|pypi|hf|huggingface|jwt|oauth)\s+)tokens?"
    r"(?!\s+(?:budget|count|limit|usage|cost|price|spend|window|s\b))|tokens?\s+for\b"
    r"|pass\s?words?|passwds?|(?:my|the|wifi|wi-fi|router|email|bank)\s+pw"
    r"|pass\s?phrases?|pass\s?codes?|pass\s?keys?|secrets?(?!\s+santa)|credentials?|creds"
    r"|(?:my|the|our|your|a)\s+logins?|logins?\s+(?:for|to|details|info|credentials)"
    r"|(?:log-?in|sign-?in)\s+(?:details|info)|private\s+keys?|ssh\s+keys?|gpg\s+keys?"
    r"|pgp\s+keys?|(?:my|the|our|your|bank|card|debit|credit|phone|sim|atm|door|\d-digit)"
    r"\s+pins?|pins?\s+(?:codes?|numbers?|for)|2fa|mfa|otp|totp"
    r"|(?:one[\s-]time|verification|recovery|backup|security|door|gate|alarm|entry|access"
    r"|garage|lock|unlock|wi-?fi|wpa2?|network|router|licen[cs]e|product|serial|activation"
    r"|registration|encryption|decryption|master)\s+(?:keys?|codes?)"
    r"|(?:recovery|seed|wallet|mnemonic)\s+(?:phrases?|words?|keys?)"
    r"|(?:safe|lock|locker|padlock)\s+combination"
    r"|combination\s+(?:to|for|of)\s+(?:the\s+|my\s+)?(?:safe|lock|locker|padlock)"
    r"|keyrings?|keychains?|key\s*stores?|key\s*files?|password\s+(?:store|manager|vault|db)"
    r"|(?:session|browser|auth|login)\s+cookies?|(?:env|environment)\s+var(?:iable)?s?"
    r"|printenv|social\s+security(?:\s+number)?|ssn|national\s+insurance\s+number"
    r"|passport\s+number|(?:credit|debit|bank)\s+card\s+(?:number|details|info)"
    r"|card\s+(?:number|details)|cvv|cvc"
)
_SECRET = re.compile(
    rf"\b(?:{_NOUNS})\b"
    r"|\b\w+_(?:KEY|TOKEN|SECRET|PASSWORD|PASS|PW)\b|\b(?:SECRET|TOKEN|PASSWORD|API)_\w+"
    r"|(?:^|[\s/'\"`])(?:\.env|\.netrc|\.authinfo(?:\.gpg)?|\.pgpass|\.my\.cnf|\.git-credentials"
    r"|\.npmrc|\.pypirc|id_(?:rsa|ed25519|ecdsa|dsa)|\.ssh\b|\.gnupg\b|\.aws\b|\.password-store"
    r"|\.kdbx|/etc/shadow|shadow)\b"
    r"|\$\w*(?:KEY|TOKEN|SECRET|PASS)\w*"
    r"|\b(?:openai|anthropic|gemini|mistral|openrouter|groq|github|gitlab|telegram|aws|slack"
    r"|stripe|google|azure)\s+(?:api\s+)?(?:key|token)s?\b",
    re.I)

# A request to show, find or recover one (with a secret named: see asks_to_reveal).
_REVEAL = re.compile(
    r"^(?:please\s+|can\s+you\s+|could\s+you\s+|would\s+you\s+|i\s+need\s+(?:you\s+to\s+)?)*"
    r"(?:print|show|display|cat|read|tell|give|reveal|dump|echo|output|paste|copy|send|list"
    r"|open|fetch|get|type|spell|printenv|env|search|grep|find|look\s+for|scan"
    r"|look\s+up|extract|recover|decrypt|where(?:'s|\s+is|\s+are|\s+do\s+i\s+keep)"
    r"|what(?:'s|\s+is|\s+are|\s+was|\s+were)\s+(?:my|the|our|your|his|her|their|all)\b"
    r"|what\s+(?:\w+\s+)?(?:password|passphrase|pin|token|key|secret)s?\b)", re.I)

# A note or a reminder: what it says is kept or said back later, nothing is shown now.
# "Remind me what my PIN is" asks to be shown one, so it is not.
_KEEPING = re.compile(
    r"^(?:(?:please|ok|okay|hey)[\s,]+)*(?:can\s+you\s+|could\s+you\s+)?"
    r"(?:(?:remind\s+me|set\s+(?:me\s+)?(?:a\s+)?reminder|reminder\b|schedule\b)"
    r"(?!\s+(?:what|which|how|where|of\s+(?:my|the|our))\b)"
    r"|(?:every|each|on|tomorrow|today|tonight|next|in)\b.*\bremind\s+me\s+to\b"
    r"|note\b|memo\b|todo\b|to-do\b|task\b|capture\b|jot\b|inbox\b"
    r"|(?:log|record)(?!\s*(?:in|on|into)\b)\b"
    r"|(?:take|make|add|write|save|create|keep|put)\s+(?:down\s+)?(?:a\s+|this\s+|it\s+)?"
    r"(?:quick\s+|new\s+)?(?:note|memo|todo|to-do|task|reminder|down)\b"
    r"|add\s+.+\s+to\s+(?:my\s+|the\s+)?(?:todo|to-do|task|shopping)?\s*(?:list|inbox|todos|tasks)"
    r")", re.I)

# What a note must not carry: the secret itself ("the wifi password is hunter2"), or a
# string shaped like a provider's key.
_NOT_A_VALUE = (
    r"the|a|an|my|our|in|on|at|for|to|due|expiring|expired|going|changed|changing|reset"
    r"|updated|wrong|correct|right|new|old|stored|saved|kept|written|somewhere|same|different"
    r"|not|still|too|very|being|now|here|there|fine|ok|okay|done|set|needed|required|missing"
    r"|lost|gone|broken|compromised|leaked|weak|strong|long|short|also|probably|maybe|never"
    r"|always|it|this|that|what|which|where|how|why|when|whatever|something|nothing|safe"
)
_VALUE = re.compile(
    rf"\b(?:{_NOUNS})\s*(?:is|was|=|:|->|will\s+be|changed\s+to|set\s+to|is\s+now|now)\s*"
    rf"[\"'`]?(?!(?:{_NOT_A_VALUE})\b)[^\s\"'`]{{4,}}"
    r"|\b(?:sk|pk|rk|ghp|gho|glpat|xox[abp]|AKIA)[-_]?[A-Za-z0-9]{8,}", re.I)

# A question about secrets in general, not about one of the person's.
_GENERAL = re.compile(
    r"^(?:how\s+(?:do|can|should|would|to)\b|why\b|what(?:'s|\s+is|\s+are)\s+(?:a|an|the\s+best"
    r"|good|some)\b|which\s+\w+\s+(?:manager|app|tool)|explain\b|is\s+it\s+safe\b"
    r"|should\s+i\b|tips?\b|best\s+(?:way|practices?)\b"
    r"|(?:generate|make|create|suggest|come\s+up\s+with)\s+(?:me\s+)?(?:a\s+)?"
    r"(?:strong|random|new|secure|good)\b)", re.I)
_POSSESSIVE = re.compile(r"\b(?:my|our|mine|your|his|her|their)\b", re.I)

# The words people misspell most, read as meant ("pasword", "passwrod", "credentails").
_SPELLED = ("password", "passwords", "passcode", "passphrase", "credentials", "credential",
            "secret", "secrets")
_WORD = re.compile(r"[A-Za-z]{5,}")


@functools.lru_cache(maxsize=64)  # the reader asks several of the questions below of one request
def _respelled(text: str) -> str:
    def fix(m: re.Match[str]) -> str:
        word = m.group(0)
        close = difflib.get_close_matches(word.lower(), _SPELLED, n=1, cutoff=0.85)
        return close[0] if close else word

    return _WORD.sub(fix, text)


def names_secret(text: str) -> bool:
    """Whether ``text`` names a secret or a place where secrets are kept."""
    return _SECRET.search(text) is not None or _SECRET.search(_respelled(text)) is not None


def asks_to_reveal(text: str) -> bool:
    """Whether ``text`` asks to show, find or recover a secret (a question about secrets
    in general does not)."""
    return (_REVEAL.search(text) is not None and names_secret(text)
            and not is_general_question(text))


def carries_secret(text: str) -> bool:
    """Whether ``text`` seems to hold a secret's value (a note must not keep it)."""
    return _VALUE.search(text) is not None or _VALUE.search(_respelled(text)) is not None


def is_about_keeping(text: str) -> bool:
    """Whether ``text`` is a note or a reminder (nothing is shown now)."""
    return _KEEPING.match(text) is not None


def is_general_question(text: str) -> bool:
    """Whether ``text`` asks about secrets in general ("how do I make a strong
    password?"), not about one of the person's."""
    return _GENERAL.match(text) is not None and _POSSESSIVE.search(text) is None


def offline_refuses(text: str) -> bool:
    """Whether the local model must not be given ``text``: it names a secret and is
    neither a note or reminder without its value nor a general question."""
    if not names_secret(text):
        return False
    if carries_secret(text):
        return True
    return not (is_about_keeping(text) or is_general_question(text))
