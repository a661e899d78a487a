"""Shared fixtures: an isolated configuration, the fake model server, a daemon's scratch
environment."""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from pathlib import Path

import hypothesis
import pytest

# Helper modules with asserts of their own, imported by the suites (llm_agent is also a
# plugin of some): rewritten like test modules, so that their asserts explain failures.
pytest.register_assert_rewrite("llm_agent", "fakellm", "wire_client", "daemon_proc", "agents")

import other_account  # noqa: E402
from daemon_proc import Daemons, daemons_under, scratch_daemons  # noqa: E402
from fakellm import FakeLLM, fake_llm  # noqa: E402,F401  (the fixture, shared by every suite)

from passepartout.config import Config  # noqa: E402
from passepartout.security import logs  # noqa: E402

# Log records leave this process as the daemon's do: masked and escaped (what a test
# captures may quote hostile text, and a report must still cross to its worker's parent).
logs.install()

# litellm must never fetch its cost map from the network in tests.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

# A property holds or not whatever the machine's load: no example has a time limit
# (hypothesis's default of 200 ms failed a test on a busy machine).
hypothesis.settings.register_profile("suite", deadline=None)
hypothesis.settings.load_profile("suite")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A minimal environment whose state, config and memex live in ``tmp_path``."""
    for name in ("home", "config", "memex/projects", "memex/system"):
        (tmp_path / name).mkdir(parents=True)
    return {
        "PASSEPARTOUT_HOME": str(tmp_path / "home"),
        "PASSEPARTOUT_CONFIG_DIR": str(tmp_path / "config"),
        "MEMEX_DIR": str(tmp_path / "memex"),
        "HEARTBEAT_INTERVAL": "3600",
    }


@pytest.fixture
def config(env: dict[str, str]) -> Config:
    return Config.from_mapping(env, config_dir=Path(env["PASSEPARTOUT_CONFIG_DIR"]))


@pytest.fixture(autouse=True, scope="session")
def _another_accounts_daemon() -> Iterator[None]:
    """The run shares the machine with another account's daemon, as on any workstation:
    run as root, a listener of ``nobody`` in a closed directory of its own (an
    unprivileged run gets root's, from tests/attacks-as-user)."""
    if other_account.given() is not None or os.geteuid() != 0:
        yield
        return
    listener = other_account.start()
    os.environ[other_account.ENV] = str(listener.socket)
    try:
        yield
    finally:
        os.environ.pop(other_account.ENV, None)
        listener.stop()


@pytest.fixture
def daemons(tmp_path: Path, fake_llm: FakeLLM) -> Iterator[Daemons]:  # noqa: F811
    """The daemon suites' one fixture: an environment of its own for ``passepartout
    daemon`` (state, config, memex, runtime directory under the test's scratch place),
    its model the fake server; nothing is started until the test says
    ``daemons.start()``, and every daemon is stopped at the end. A suite that needs
    more (one daemon for the module, files in place before the start) calls
    ``scratch_daemons`` itself."""
    yield from scratch_daemons(tmp_path, fake_llm.base_url)


@pytest.fixture(autouse=True, scope="module")
def _fresh_private_index() -> Iterator[None]:
    """Each module starts with an empty privacy index, as each daemon does.  The index
    is the process's (a daemon serves one memex), but a worker of the suite runs the
    agents of many modules, each on a memex of its own: what one module's memex holds
    private ("** Weekly review" under a private heading) was otherwise withheld from a
    later module's requests, where the same words are public.  Which modules share a
    worker depends on the machine's load.  Module-wide, not per test: a module's one
    agent (a module fixture) learns its memex once, at its start."""
    from passepartout.security.privacy import index

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(index, "_current", index.PrivateIndex())
        yield


@pytest.fixture(autouse=True, scope="module")
def _collect_after_module() -> Iterator[None]:
    """What a module's tests left for the garbage collector is collected here, at a
    quiet moment: a model stream left open and collected later, inside httpcore's pool
    lock on the thread of another test's call, waits on that lock for ever."""
    yield
    gc.collect()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A daemon a test started must not outlive the run: stop any left behind, and say
    so (the run fails), so that the test that leaked it gets fixed."""
    import contextlib
    import signal
    import time

    factory = getattr(session.config, "_tmp_path_factory", None)
    if factory is None or hasattr(session.config, "workerinput"):
        return  # a worker of ``-n``: its scratch places are under the main process's
    root = str(factory.getbasetemp())
    deadline = time.monotonic() + 5.0  # one told to stop may still be saving memory
    while (leaked := daemons_under(root)) and time.monotonic() < deadline:
        time.sleep(0.2)
    for pid in leaked:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    if leaked:
        print(f"\n{len(leaked)} daemon(s) left running by the tests were killed: "
              f"pids {leaked}; some test did not stop what it started")
        session.exitstatus = 1
