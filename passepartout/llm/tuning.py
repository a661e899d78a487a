"""litellm settings that cut its per-call overhead, measured by ``bench/litellm_overhead.py``.

Figures on this kind of machine (2 cores), litellm 1.106.2 against the in-process
fake server, a 100-word reply (about 100 SSE chunks), ms per call: the median wall
time of a quiet run (load average 1.5 to 2), and the CPU time of the whole process
over that run and four runs at a load average of 6 to 9 (where wall times swung by
2x and only CPU time compared):

=======================================  ======  =========  ======  ==========
variant                                  plain   plain CPU  stream  stream CPU
=======================================  ======  =========  ======  ==========
raw http.client (the floor)              0.6     0.4-0.5    3.2     2.5-2.9
litellm, defaults                        7.2     5.2-7.1    136     109-152
litellm, only disable_streaming_logging  6.3     5.4-7.0    76      51-76
litellm, FAST_SETTINGS                   6.8     5.5-6.8    50      56-93
litellm.acompletion, defaults            4.9     5.5-8.1    51      56-69
=======================================  ======  =========  ======  ==========

What costs the time, from cProfile:

- Streamed: about 1 ms of CPU per chunk. Half of it is the success logging litellm
  queues on a thread pool for every chunk, which ``disable_streaming_logging`` turns
  off (usage and cost of the whole stream are still assembled at its end). Most of
  the rest cannot be switched off: the OpenAI SDK builds a pydantic object per chunk,
  litellm rebuilds its own, and ``CustomStreamWrapper.__next__`` formats two
  ``print_verbose`` f-strings with the chunk's pydantic repr even when nothing is
  printed (about 18 % of the stream's time).
- Unstreamed: about 5 ms, spread over the cost calculator (model-info lookups), the
  OpenAI SDK's request transform, and the logging object; no flag changes it beyond
  noise.
- No measurable effect (so not set): ``turn_off_message_logging``,
  ``disable_add_transform_inline_image_block``, passing an explicit OpenAI ``client``
  (litellm caches its clients), a model name missing from the cost map.
- Not settings, for the record: the SDK-less ``hosted_vllm/`` provider took 3.7 to
  6.1 ms plain, 74 to 128 streamed (a gain at best within the noise);
  ``acompletion`` streams without the per-chunk thread-pool hand-off, so its streams
  cost about what ``FAST_SETTINGS`` gives the synchronous ones.
  ``litellm.logging`` and ``disable_end_user_cost_tracking`` are read by nothing on
  this path (the latter only by the Prometheus integration).
- Harmful: ``disable_token_counter`` makes ``litellm.token_counter`` return 0 for
  every text, which would blind context budgeting, for no gain.

Connections: the OpenAI SDK drops the connection of every stream it reads (it closes
at ``[DONE]`` before the body's last bytes), so each streamed call connected anew;
``litellm.client_session`` is given a client whose transport finishes such streams
(:mod:`passepartout.llm.keepalive`): 8 streamed calls, one connection.

Two more, measured on a whole chat turn (``bench/chat_turn.py``, ``bench/emacs_bridge.py``):

- ``EXPERIMENTAL_OPENAI_BASE_LLM_HTTP_HANDLER`` (an environment switch litellm reads
  at each call) sends OpenAI-protocol requests through litellm's own httpx handler
  instead of the OpenAI SDK, whose request transform walks every message and tool
  schema through ``typing`` introspection (about 4 of a turn's 17 ms with 16
  messages and 19 tools) and which builds a pydantic object per chunk.  Still
  litellm: the same routing, parameters, errors, usage and cost.
- litellm logs "completion() model=..." at INFO for every call: through our masking
  filter, the log file and stderr (which Emacs reads) on every turn.  Its logger is
  set to WARNING.

- The interpreter's switch interval (``sys.setswitchinterval``) is 0.5 ms instead of
  5 ms.  A stream read from a fast provider keeps the model call's worker thread busy
  (litellm's per-chunk work) without blocking; the session's thread, which shows
  each chunk, and the connection's writer then waited for the worker to be made to
  let go of the interpreter, up to 5 ms each time: the first chunk reached Emacs
  about 5 ms after litellm had it.

``suppress_debug_info`` does not change speed: it stops litellm printing a "Give
Feedback / Get Help" banner to stdout with every exception, which matters to a
server whose stdout is a protocol (epc reads the port from its first line).
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

log = logging.getLogger(__name__)

FAST_SETTINGS: dict[str, Any] = {
    # Per-chunk success logging on a thread pool: half of a stream's CPU time.
    "disable_streaming_logging": True,
    # No banner on stdout with each exception.
    "suppress_debug_info": True,
}


# Seconds a thread may hold the interpreter while another waits for it (Python: 0.005).
SWITCH_INTERVAL = 0.0005

# Environment switches litellm reads per call; one already set by the person stays.
FAST_ENVIRONMENT: dict[str, str] = {
    # OpenAI-compatible calls without the OpenAI SDK's per-request transform.
    "EXPERIMENTAL_OPENAI_BASE_LLM_HTTP_HANDLER": "true",
}


def configure_litellm_fast() -> None:
    """Applies ``FAST_SETTINGS`` to the litellm module (idempotent; imports litellm)."""
    for name, value in FAST_ENVIRONMENT.items():
        os.environ.setdefault(name, value)
    import litellm

    # Chunks are shown while the worker still reads (see above).
    sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL))
    # An INFO line per call otherwise (see above); warnings and errors still show.
    logging.getLogger("LiteLLM").setLevel(logging.WARNING)

    for name, value in FAST_SETTINGS.items():
        setattr(litellm, name, value)
    # Streamed calls keep their connection (see keepalive); a session set by whoever
    # embeds us is theirs to keep.
    if litellm.client_session is None:
        from passepartout.llm.keepalive import keepalive_client

        litellm.client_session = keepalive_client()
    log.debug("litellm tuned: %s", FAST_SETTINGS)
