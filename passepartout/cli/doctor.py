"""``passepartout doctor``: each check ok or failed, and how to fix what failed."""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import importlib.util
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from passepartout import __version__
from passepartout.config import Config, read_dotenv
from passepartout.errors import PassepartoutError
from passepartout.llm import export_provider_settings
from passepartout.sqlitefile import set_aside_files

MIN_EMACS = (28, 1)
REQUIRED_PACKAGES = ("epc", "sexpdata", "orgparse", "watchdog", "litellm", "bashlex", "mcp")


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""

    def line(self) -> str:
        mark = "ok  " if self.ok else "FAIL"
        text = f"[{mark}] {self.name}: {self.detail}"
        return text if self.ok or not self.fix else f"{text}\n       fix: {self.fix}"


def check_python() -> list[Check]:
    checks = [
        Check(
            "python",
            sys.version_info >= (3, 11),
            sys.version.split()[0],
            "install Python 3.11 or newer",
        )
    ]
    for name in REQUIRED_PACKAGES:
        found = importlib.util.find_spec(name) is not None
        checks.append(
            Check(
                f"package {name}",
                found,
                "installed" if found else "missing",
                "run `make install` (or `pip install -e .` in the venv)",
            )
        )
    return checks


def check_emacs() -> list[Check]:
    emacs = shutil.which("emacs")
    if emacs is None:
        return [
            Check(
                "emacs",
                False,
                "not found on PATH",
                "apt-get install emacs-nox (or your system's Emacs 28.1+)",
            )
        ]
    try:
        out = subprocess.run(
            [
                emacs,
                "--batch",
                "--eval",
                '(princ (format "%s %s" emacs-version (require \'org) ))',
                "--eval",
                '(princ (format " %s" org-version))',
            ],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout.split()
    except (OSError, subprocess.SubprocessError) as err:
        return [Check("emacs", False, f"{emacs} did not run: {err}", "reinstall Emacs")]
    version = _version(out[0])[:2]
    org = out[-1] if out else "?"
    return [
        Check(
            "emacs",
            version >= MIN_EMACS,
            f"{emacs} {out[0]}",
            f"Emacs {MIN_EMACS[0]}.{MIN_EMACS[1]} or newer is needed",
        ),
        Check(
            "elisp dependencies",
            _version(org) >= (9, 5),
            f"org {org} (the EPC client ships with the package)",
            "install org-mode 9.5 or newer",
        ),
    ]


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split(".") if p.isdigit())


def check_dirs(config: Config) -> list[Check]:
    checks = []
    for name, path in (("config dir", config.config_dir), ("state dir", config.home)):
        try:
            path.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=path):
                pass
            checks.append(Check(name, True, f"{path} is writable"))
        except OSError as err:
            checks.append(
                Check(
                    name,
                    False,
                    f"{path}: {err.strerror}",
                    f"make {path} writable or set PASSEPARTOUT_HOME / PASSEPARTOUT_CONFIG_DIR",
                )
            )
    memex = config.memex_dir
    # Not an installation fault: chat works without a memex; automation needs one.
    detail = (
        str(memex)
        if memex.is_dir()
        else (
            f"{memex} does not exist yet: create it (or set MEMEX_DIR to your org directory) "
            "for :HOOK:/:CRON: automation and memory"
        )
    )
    checks.append(Check("memex", True, detail))
    for aside in set_aside_files(config.home):
        checks.append(Check("set aside", True, (
            f"{aside} was not a readable database, so a new one took its place; "
            f"`sqlite3 {aside} .recover` may get its rows back, or delete it")))
    return checks


def check_optional(name: str, module: str, function: str) -> list[Check]:
    """A check that a part of the package provides as ``function() -> (ok, text)``."""
    try:
        ok, detail = getattr(importlib.import_module(module), function)()
    except (ImportError, AttributeError) as err:
        return [Check(name, False, f"not available ({err})", "reinstall passepartout")]
    return [Check(name, bool(ok), detail, detail if not ok else "")]


def check_sandbox() -> list[Check]:
    """The sandbox every shell command runs in, probed: a failure means nothing is contained."""
    from passepartout.security.sandbox.probe import probe

    return [Check(f.name, f.ok, f.detail, f.fix) for f in probe()]


def check_skills(config: Config) -> list[Check]:
    from passepartout.agent import Agent

    # The memex import is no check, and racing the shutdown it logged a failure.
    quiet = dataclasses.replace(config, extra={**config.extra,
                                               "PASSEPARTOUT_MEMORY_IMPORT": "off"})
    agent = Agent(quiet)
    # What the boot warns of (another agent holding the automation lock) is no problem
    # of the installation; what a skill failed at is in the lines below.
    logging.disable(logging.WARNING)
    try:
        agent.boot(start_threads=False)
    except PassepartoutError as err:
        return [Check("skills", False, err.message, "restore the skills shipped with passepartout")]
    finally:
        agent.shutdown()
        logging.disable(logging.NOTSET)
    return [
        Check(
            f"skill {e.name}",
            e.status == "ready" and not e.error,
            e.describe().split(": ", 1)[1],
            f"see {e.path}",
        )
        for e in agent.loader.report()
    ]


# The settings the model layer reads besides PASSEPARTOUT_*: a provider's key and endpoint.
PROVIDER_SETTING = re.compile(r"[A-Z][A-Z0-9]*_(API_KEY|API_BASE|BASE_URL|API_VERSION)")


def setting_origins(config_dir: Path,
                    environ: Mapping[str, str] | None = None) -> dict[str, tuple[str, str]]:
    """Each setting's value and where it comes from, as the agent reads them: the
    environment wins over the config directory's ``.env`` (:meth:`Config.load`)."""
    dotenv = config_dir / ".env"
    origins = {name: (value, str(dotenv)) for name, value in read_dotenv(dotenv).items()}
    origins.update({name: (value, "the environment")
                    for name, value in (os.environ if environ is None else environ).items()})
    return origins


def check_settings(origins: Mapping[str, tuple[str, str]]) -> list[Check]:
    """One line for each model setting: its value (a key's never) and where it is set."""
    checks = []
    for name in sorted(origins):
        if not (name == "PASSEPARTOUT_MODEL" or name.startswith("PASSEPARTOUT_MODEL_")
                or PROVIDER_SETTING.fullmatch(name)):
            continue
        value, origin = origins[name]
        shown = "is set" if name.endswith("_KEY") else f"= {value}"
        checks.append(Check(f"setting {name}", True, f"{shown} (from {origin})"))
    return checks


def check_model(config: Config) -> list[Check]:
    if config.model:
        return [Check("model", True, f"PASSEPARTOUT_MODEL={config.model}")]
    return [
        Check(
            "model",
            True,
            "no provider configured: the local model answers "
            "(set PASSEPARTOUT_MODEL and the provider's key for a real one)",
        )
    ]


PROBE_CONNECT_TIMEOUT = 5.0
PROBE_READ_TIMEOUT = 20.0


def check_provider(config: Config) -> list[Check]:
    """The configured model's provider, for real: a key for it, and one tiny request."""
    from passepartout.llm.models import LOCAL_MODEL, default_model

    try:
        model = default_model(config)
    except PassepartoutError as err:
        return [Check("provider", False, err.message, "set PASSEPARTOUT_MODEL and its key")]
    if model == LOCAL_MODEL:
        return [Check("provider", True, f"{model}: the local model answers, offline "
                                        "(no key or endpoint to check)")]
    keys = provider_keys(model)
    if keys:
        return [Check("provider key", False, f"{model}: {' or '.join(keys)} is not set "
                      f"(neither in the environment nor in {config.config_dir / '.env'})",
                      f"set {keys[0]} in the environment or in "
                      f"{config.config_dir / '.env'}")]
    return [Check("provider key", True, f"{model}: a key is set"), probe_model(model)]


def check_local_servers() -> list[Check]:
    """An Ollama or llama.cpp server on this machine, whose models the picker offers."""
    from passepartout.llm.localserver import detect, llamacpp_base, ollama_base

    servers = detect()
    if not servers:
        return [Check("local model server", True,
                      f"none answering (Ollama at {ollama_base()}, llama.cpp server at "
                      f"{llamacpp_base()}); optional")]
    return [Check("local model server", True,
                  f"{s.line()} (offered by /model and the model picker"
                  + (f"; or set PASSEPARTOUT_MODEL={s.models[0]})" if s.models else ")"))
            for s in servers]


def provider_keys(model: str) -> list[str]:
    """The variables litellm misses to call ``model`` (empty when it has what it needs)."""
    from passepartout.llm.litellm_import import load_litellm

    try:
        found = load_litellm().validate_environment(model=model)
    except Exception as err:  # an unknown provider: the request below says more
        logging.getLogger(__name__).debug("validate_environment(%s): %s", model, err)
        return []
    missing = [] if found.get("keys_in_environment") else list(found.get("missing_keys") or [])
    # Unset, litellm calls Ollama on its default local port: not a missing key.
    return [k for k in missing if k != "OLLAMA_API_BASE"]


def probe_model(model: str, *, connect_timeout: float = PROBE_CONNECT_TIMEOUT,
                read_timeout: float = PROBE_READ_TIMEOUT) -> Check:
    """One request of one output token: does the endpoint answer, and if not, why."""
    from passepartout.llm.provider import Provider

    provider = Provider(connect_timeout=connect_timeout, read_timeout=read_timeout,
                        max_tokens=1)
    quiet = logging.getLogger("passepartout.llm.provider")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # the failure is this check's own line, not a log line
    try:
        result = provider.complete([model], [{"role": "user", "content": "Say ok."}],
                                   stream=False)
    except Exception as err:
        detail = getattr(err, "message", None) or f"{type(err).__name__}: {err}"
        return Check("provider endpoint", False, f"{model} did not answer: {detail}",
                     "check the key, PASSEPARTOUT_MODEL and the endpoint "
                     "(e.g. OPENAI_API_BASE), or the network")
    finally:
        quiet.setLevel(level)
    return Check("provider endpoint", True,
                 f"{model} answered in {result.seconds:.1f} s")


def run_checks(config: Config,
               origins: Mapping[str, tuple[str, str]] | None = None) -> list[Check]:
    """Every check, on ``config``; ``origins`` (:func:`setting_origins`) adds where each
    model setting came from."""
    groups: list[Callable[[], list[Check]]] = [
        check_python,
        check_emacs,
        lambda: check_dirs(config),
        lambda: check_settings(origins or {}),
        lambda: check_model(config),
        lambda: check_provider(config),
        check_local_servers,
        lambda: check_optional("local model", "passepartout.llm.local", "local_model_available"),
        check_sandbox,
        lambda: check_skills(config),
        lambda: [Check(*c) for c in _mcp_checks(config)],
        lambda: [Check(*c) for c in _messaging_checks(config)],
    ]
    return [check for group in groups for check in group()]


def _messaging_checks(config: Config) -> list[tuple[str, bool, str, str]]:
    from passepartout.faces.messaging.checks import messaging_checks

    return messaging_checks(config)


def _mcp_checks(config: Config) -> list[tuple[str, bool, str, str]]:
    from passepartout.mcp.probe import mcp_checks

    return mcp_checks(config)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quiet", action="store_true", help="print only the failures")


def run(args: argparse.Namespace) -> int:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    print(f"passepartout {__version__} ({Path(__file__).resolve().parent})")
    config = Config.load()
    origins = setting_origins(config.config_dir)
    # The providers' keys and endpoints of the config directory's .env, where litellm
    # reads them, as the agent does (the environment wins).
    export_provider_settings(config.config_dir / ".env")
    checks = run_checks(config, origins)
    for check in checks:
        if not (args.quiet and check.ok):
            print(check.line())
    failed = [c for c in checks if not c.ok]
    print(f"{len(checks) - len(failed)} ok, {len(failed)} to fix")
    return 1 if failed else 0
