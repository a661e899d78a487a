"""The OpenAI chat-completions wire format as the fake server speaks it.

Records (a scripted ``Reply``, a ``RecordedRequest``) and the builders of the JSON
body, the SSE chunks and the error body; ``fakellm.py`` serves them.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

ERROR_TYPES = {
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    409: "conflict_error",
    429: "rate_limit_error",
}


def new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:12]}"


@dataclass
class ToolCall:
    """One function call in a reply; ``arguments`` as a str is sent verbatim (bad JSON)."""

    name: str
    arguments: dict[str, Any] | str
    id: str = field(default_factory=new_call_id)

    def arguments_json(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments)


@dataclass
class Reply:
    """One scripted answer."""

    text: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    status: int = 200
    message: str = ""
    delay: float = 0.0  # before the first byte
    chunk_delay: float = 0.0  # between SSE chunks (and summed before a JSON body)
    usage: dict[str, int] | None = None
    finish_reason: str | None = None
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_json(cls, item: dict[str, Any]) -> Reply:
        """Builds a reply from the standalone script format."""
        calls = [
            ToolCall(c["name"], c.get("arguments", {}), c.get("id") or new_call_id())
            for c in item.get("tool_calls", [])
        ]
        status = int(item.get("error", 200))
        reply = cls(
            text=item.get("text"),
            tool_calls=calls,
            status=status,
            message=item.get("message", ""),
            delay=float(item.get("delay", 0.0)),
            chunk_delay=float(item.get("chunk_delay", 0.0)),
            usage=item.get("usage"),
            finish_reason=item.get("finish_reason"),
        )
        if status == 429:
            reply.headers["Retry-After"] = "0"
        return reply


@dataclass
class RecordedRequest:
    """What the server received: path, headers and the parsed JSON body."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))


def estimate_tokens(text: str) -> int:
    # Roughly what a BPE tokenizer gives for English: one token per 4 chars.
    return max(1, (len(text) + 3) // 4) if text else 0


def words(text: str) -> list[str]:
    """Splits text into stream pieces (a word with the spaces before it) that join back."""
    return re.findall(r"\s*\S+|\s+", text)


def usage_for(reply: Reply, request: RecordedRequest) -> dict[str, int]:
    prompt_text = json.dumps(request.messages)
    completion_text = (reply.text or "") + "".join(
        c.name + c.arguments_json() for c in reply.tool_calls
    )
    usage = {
        "prompt_tokens": estimate_tokens(prompt_text),
        "completion_tokens": estimate_tokens(completion_text),
    }
    usage.update(reply.usage or {})
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    return usage


def error_type(status: int) -> str:
    # litellm maps any error whose body says "invalid_request_error" to BadRequestError,
    # whatever the status, so only 400 and 422 say so (as OpenAI does).
    if status >= 500:
        return "server_error"
    return ERROR_TYPES.get(status, "invalid_request_error")


def finish_reason(reply: Reply) -> str:
    if reply.finish_reason:
        return reply.finish_reason
    return "tool_calls" if reply.tool_calls else "stop"


def completion_body(reply: Reply, request: RecordedRequest, cid: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments_json()},
            }
            for c in reply.tool_calls
        ]
    return {
        "id": cid,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason(reply)}],
        "usage": usage_for(reply, request),
    }


def stream_chunks(reply: Reply, request: RecordedRequest, cid: str) -> Iterator[dict[str, Any]]:
    """The SSE payloads of one streamed reply, in order."""
    base = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": request.model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    for piece in words(reply.text or ""):
        yield chunk({"content": piece})
    for index, call in enumerate(reply.tool_calls):
        head = {"index": index, "id": call.id, "type": "function"}
        yield chunk({"tool_calls": [{**head, "function": {"name": call.name, "arguments": ""}}]})
        args = call.arguments_json()
        half = len(args) // 2  # two deltas, so clients must concatenate
        for part in (args[:half], args[half:]):
            if part:
                yield chunk({"tool_calls": [{"index": index, "function": {"arguments": part}}]})
    yield chunk({}, finish_reason(reply))
    options = request.body.get("stream_options") or {}
    if options.get("include_usage"):
        yield {**base, "choices": [], "usage": usage_for(reply, request)}
