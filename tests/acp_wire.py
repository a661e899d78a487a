"""Every message ``passepartout acp`` writes, checked against ACP's JSON schema.

Run as a program, this relays a spawned agent's stdio and records each line of either
side in a log (``relay LOG -- COMMAND...``); :func:`check_wire` then validates each line
the agent wrote with ``jsonschema``: a notification's or request's params against the
schema of its method, a response's result against the schema of the response to the
client's request of that id, an error against JSON-RPC's error object.  The schemas are
those of the ``acp`` SDK's models (generated from the protocol's ``schema.json``), as
JSON Schema with local ``$defs`` only: nothing is fetched.

The relay uses the standard library alone, so that it starts at once.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
from functools import cache
from pathlib import Path
from typing import IO, Any

AGENT, CLIENT = "agent", "client"

# what the agent sends to the client, and what it answers the client's requests with
_NOTIFICATIONS = {"session/update": "SessionNotification"}
_REQUESTS = {"session/request_permission": "RequestPermissionRequest"}
_RESPONSES = {
    "initialize": "InitializeResponse", "authenticate": "AuthenticateResponse",
    "session/new": "NewSessionResponse", "session/load": "LoadSessionResponse",
    "session/resume": "ResumeSessionResponse", "session/list": "ListSessionsResponse",
    "session/prompt": "PromptResponse", "session/set_mode": "SetSessionModeResponse",
}


def relay(log: Path, command: list[str]) -> int:
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    lock = threading.Lock()
    with log.open("a", encoding="utf-8") as out:

        def pump(source: IO[bytes], sink: IO[bytes], side: str) -> None:
            try:
                for line in iter(source.readline, b""):
                    with lock:
                        out.write(json.dumps({"from": side,
                                              "line": line.decode("utf-8", "replace")}) + "\n")
                        out.flush()
                    sink.write(line)
                    sink.flush()
            except (BrokenPipeError, ValueError):
                pass
            finally:
                with contextlib.suppress(OSError):
                    sink.close()

        threading.Thread(target=pump, args=(sys.stdin.buffer, child.stdin, CLIENT),
                         daemon=True).start()
        pump(child.stdout, sys.stdout.buffer, AGENT)
        return child.wait()


def relay_command(python: str, log: Path, *command: str) -> list[str]:
    return [python, str(Path(__file__)), "relay", str(log), "--", *command]


@cache
def _validator(model: str) -> Any:
    import acp.schema
    from jsonschema import Draft202012Validator

    schema = getattr(acp.schema, model).model_json_schema(by_alias=True, mode="validation")
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def _check(model: str, value: Any, where: str) -> None:
    errors = sorted(_validator(model).iter_errors(value), key=lambda e: list(e.path))
    if errors:
        shown = "; ".join(f"{'/'.join(map(str, e.path)) or '.'}: {e.message}"
                          for e in errors[:5])
        raise AssertionError(f"{where} is not a valid {model}: {shown}")


def read_wire(log: Path) -> list[tuple[str, dict[str, Any]]]:
    found: list[tuple[str, dict[str, Any]]] = []
    for record in log.read_text(encoding="utf-8").splitlines():
        entry = json.loads(record)
        line = entry["line"].strip()
        if line:
            message = json.loads(line) if entry["from"] == AGENT else _loose(line)
            found.append((entry["from"], message))
    return found


def _loose(line: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except ValueError:  # a client may send anything; only the agent's lines are checked
        return {}
    return value if isinstance(value, dict) else {}


def check_wire(log: Path) -> list[dict[str, Any]]:
    """Every line the agent wrote, validated (an AssertionError names the first bad
    one); they are returned."""
    asked: dict[Any, str] = {}  # the client's request ids -> methods
    sent: list[dict[str, Any]] = []
    for side, message in read_wire(log):
        if side == CLIENT:
            if "id" in message and isinstance(message.get("method"), str):
                asked[json.dumps(message["id"])] = message["method"]
            continue
        sent.append(message)
        where = f"the agent's message {json.dumps(message)[:300]}"
        assert message.get("jsonrpc") == "2.0", f"{where} is not JSON-RPC 2.0"
        method = message.get("method")
        if isinstance(method, str):
            if method.startswith("_"):  # an extension: its params are an object
                assert isinstance(message.get("params"), dict), where
            elif "id" in message:
                assert method in _REQUESTS, f"{where}: the agent may not ask {method}"
                _check(_REQUESTS[method], message.get("params"), where)
            else:
                assert method in _NOTIFICATIONS, f"{where}: no such notification {method}"
                _check(_NOTIFICATIONS[method], message.get("params"), where)
            continue
        answered = asked.get(json.dumps(message.get("id")))
        assert answered is not None or "error" in message, f"{where} answers no request"
        assert ("result" in message) != ("error" in message), where
        if "error" in message:
            _check("Error", message["error"], where)
        elif answered in _RESPONSES:
            _check(_RESPONSES[answered], message["result"], where)
        else:
            raise AssertionError(f"{where}: a result for {answered}, which has no schema here")
    return sent


if __name__ == "__main__":
    if len(sys.argv) < 4 or sys.argv[1] != "relay" or sys.argv[3] != "--":
        sys.exit("usage: acp_wire.py relay LOG -- COMMAND...")
    sys.exit(relay(Path(sys.argv[2]), sys.argv[4:]))
