"""A chat turn through ``passepartout acp`` beside the same turn over the EPC wire
Emacs speaks, against one warm daemon and the fake model, in the same run.

The daemon is started once (``passepartout daemon --detach``) in a scratch home, memex
and runtime directory; one ACP client (the official SDK's client side, spawning
``passepartout acp``) and one EPC client (``chat-send``, then the callbacks up to
``done``, as Emacs does) stay connected, and their turns alternate,
each in a session of its own, so that both see the same daemon, model and history
length.  A turn is timed from sending the prompt to the end of its reply (the ACP
``session/prompt`` response, the EPC done callback); the fake model answers with the
prompt, streamed.  Medians of N rounds; the ACP face should cost no more than the
Emacs face (target: the ACP median within 5 ms of the EPC median).

    .venv/bin/python bench/acp_turn.py [--rounds 30]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from acp import PROTOCOL_VERSION, text_block  # noqa: E402
from acp.stdio import spawn_agent_process  # noqa: E402
from fakellm import FakeLLM  # noqa: E402
from terminal_chat import cli, scratch_env, wait_ready  # noqa: E402

from passepartout import protocol  # noqa: E402
from passepartout.wire.client import DaemonClient, connect  # noqa: E402

TARGET_MS = 5.0


class QuietClient:
    """An ACP client that takes every update and answers no permission (none is asked)."""

    def __init__(self) -> None:
        self.updates = 0

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates += 1

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the bench's turns ask nothing")


def epc_turn(client: DaemonClient, n: int) -> float:
    start = time.perf_counter()
    client.request(protocol.ChatSend("bench-epc", f"t{n}", f"epc turn {n}", {}))
    client.wait_callback(protocol.DONE, timeout=60)
    took = time.perf_counter() - start
    client.callbacks.clear()
    return took


async def rounds(env: dict[str, str], count: int) -> tuple[list[float], list[float], int]:
    epc = connect(Path(env["PASSEPARTOUT_HOME"]), environ=env, client={"client": "bench"})
    if epc is None:
        raise SystemExit("no daemon to connect to")
    peer = QuietClient()
    acp_times: list[float] = []
    epc_times: list[float] = []
    with epc:
        async with spawn_agent_process(peer, sys.executable, "-m", "passepartout", "acp",
                                       env=env, cwd=ROOT,
                                       transport_kwargs={"stderr": None}) as (conn, _):
            await conn.initialize(protocol_version=PROTOCOL_VERSION)
            session = (await conn.new_session(cwd=str(ROOT))).session_id
            for n in range(count + 1):  # the first round of each warms up, unmeasured
                start = time.perf_counter()
                await conn.prompt(session_id=session, prompt=[text_block(f"acp turn {n}")])
                acp = time.perf_counter() - start
                epc_ = await asyncio.to_thread(epc_turn, epc, n)
                if n:
                    acp_times.append(acp)
                    epc_times.append(epc_)
    return acp_times, epc_times, peer.updates


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="passepartout-bench-acp-"))
    with FakeLLM(default="echo") as fake:
        env = scratch_env(tmp, fake)
        try:
            started = time.perf_counter()
            detach = cli(env, "daemon", "--detach")
            if detach.returncode != 0:
                raise SystemExit(f"the daemon did not start: {detach.stderr}")
            wait_ready(env)
            print(f"daemon started and booted in {time.perf_counter() - started:.1f} s")
            acp, epc, updates = asyncio.run(rounds(env, args.rounds))
        finally:
            cli(env, "stop")
            shutil.rmtree(env["XDG_RUNTIME_DIR"], ignore_errors=True)
            shutil.rmtree(tmp, ignore_errors=True)
    acp_ms, epc_ms = statistics.median(acp) * 1000, statistics.median(epc) * 1000
    print(f"{'EPC turn (the Emacs face)':<28} p50 {epc_ms:7.1f} ms   "
          f"p90 {_p90(epc):7.1f} ms   ({len(epc)} turns)")
    print(f"{'ACP turn (passepartout acp)':<28} p50 {acp_ms:7.1f} ms   "
          f"p90 {_p90(acp):7.1f} ms   ({len(acp)} turns, {updates} session updates)")
    gap = acp_ms - epc_ms
    print(f"ACP - EPC: {gap:+.1f} ms a turn; target within {TARGET_MS:.0f} ms: "
          f"{'met' if gap <= TARGET_MS else 'MISSED'}")
    return 0


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))] * 1000


if __name__ == "__main__":
    sys.exit(main())
