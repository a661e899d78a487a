"""``passepartout serve`` with a scripted ``think``, for the wire tests.

The real server (:func:`passepartout.server.serve.run_server`), only the model is a script:
``stream: a b c`` streams the words as chunks; ``reply: text`` answers without
streaming; ``wait`` streams one chunk and waits to be cancelled; ``tool`` proposes the
high-impact ``wire-touch`` tool and reports what became of it; ``fail`` raises the
ConfigError a missing model gives; ``env: NAME`` tells an environment variable;
``elisp: CODE`` proposes the emacs-eval tool.
"""

from __future__ import annotations

import os
import time

from passepartout.config import Config
from passepartout.errors import ConfigError
from passepartout.loop.actions import Action, Thought
from passepartout.loop.events import Chunk
from passepartout.server.serve import exit_process, run_server


def scripted_think(thought: Thought) -> list[Action]:
    signal = thought.signal
    if signal.sensor == "loop-error":
        return []  # the error itself has been reported; nothing to explain
    if signal.sensor == "tool-output":
        result = (signal.payload.get("results") or [{}])[0]
        return [Action("chat", text=f"tool ok={result.get('ok')}: {result.get('output')}")]
    if thought.gate_trace:
        return [Action("chat", text="refused: " + thought.gate_trace[-1])]
    text = str(signal.payload.get("text", ""))
    if text.startswith("stream:"):
        words = text.removeprefix("stream:").split()
        for word in words:
            thought.emit(Chunk(word + " "))
        return [Action("chat", text="".join(w + " " for w in words))]
    if text.startswith("reply:"):
        return [Action("chat", text=text.removeprefix("reply:").strip())]
    if text == "wait":
        thought.emit(Chunk("waiting"))
        deadline = time.monotonic() + 20
        while not thought.cancel.is_set() and time.monotonic() < deadline:
            thought.cancel.wait(0.05)
        return []
    if text.startswith("env:"):  # what a tool's subprocess would inherit
        name = text.removeprefix("env:").strip()
        return [Action("chat", text=f"env: {os.environ.get(name)}")]
    if text == "fail":
        raise ConfigError("no model is configured: set PASSEPARTOUT_MODEL",
                          variable="PASSEPARTOUT_MODEL")
    if text.startswith("elisp:"):
        code = text.removeprefix("elisp:").strip()
        return [Action("tool", name="emacs-eval", args={"code": code}, call_id="e1")]
    if text == "tool":
        return [Action("tool", name="wire-touch", args={"label": "x"}, call_id="c1")]
    return [Action("chat", text=f"echo: {text}")]


if __name__ == "__main__":
    exit_process(run_server(Config.load(), think=scripted_think))
