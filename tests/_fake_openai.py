"""A local fake OpenAI-compatible chat server for tests (no network, no model).

`FakeOpenAIServer` listens on 127.0.0.1 (port 0: the OS picks one) in a
background thread and answers ``POST /v1/chat/completions`` and
``GET /v1/models`` with scripted replies, so a test can drive `LLMAgent` (or
anything that speaks the protocol) through success and error paths (``stream: true``
requests get the reply as server-sent chunks): HTTP
errors with headers (429 + ``Retry-After``), slow replies (client timeouts),
malformed bodies, dropped connections.

    with FakeOpenAIServer(["first reply", Reply(status=500), "third"]) as fake:
        agent = LLMAgent(model="fake", base_url=fake.base_url)
        ...
        fake.requests      # parsed JSON bodies received, in order
        fake.max_concurrent  # most chat requests in flight at once

Replies, in order of precedence for each chat request:

1. the next entry of ``replies`` (a `Reply`, a ``str`` = assistant content, or a
   callable ``(request_dict) -> Reply | str``);
2. ``responder(request_dict)`` when the script is exhausted;
3. otherwise HTTP 400 "fake server: no scripted reply left" (a test bug,
   which a client reports at once instead of retrying).

Token ids imitate a real engine. The fake renders the request's messages with
a toy chat template (`chatml`, or `chatml_strip_think` which drops
``<think>...</think>`` from earlier assistant turns like Qwen3's template and
is therefore NOT prefix-preserving) and tokenises characters (`tokenize`: one
id per Unicode code point, special tokens above 1,000,000). The response ids
are the content's ids plus the end-of-turn id. Which fields carry them follows
``mode``:

- ``"vllm"``: with ``return_token_ids``: top-level ``prompt_token_ids`` and
  ``choices[0].token_ids``; with ``logprobs`` + ``return_tokens_as_token_ids``
  the logprob entries' ``token`` strings are ``"token_id:<id>"``.
- ``"sglang"``: ``choices[0].prompt_token_ids`` (with
  ``return_prompt_token_ids``) and ``choices[0].token_ids`` (with
  ``return_token_ids``).
- ``"openai"``: no token ids (log-probs only when asked).

Log-probs (``logprobs: true``) are deterministic: ``-(i % 5 + 1) / 10`` for
the i-th response token.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

IM_START = 1_000_001
IM_END = 1_000_002  # end of a turn (what the model emits to stop)
SPECIAL = {"<|im_start|>": IM_START, "<|im_end|>": IM_END}
MODES = ("vllm", "sglang", "openai")
_THINK_RE = re.compile(r"<think>.*?</think>\s*", re.S)


def tokenize(text: str) -> list[int]:
    """Ids of `text`: special-token markers map to their ids, every other character to its code point."""
    out: list[int] = []
    i = 0
    while i < len(text):
        for mark, tid in SPECIAL.items():
            if text.startswith(mark, i):
                out.append(tid)
                i += len(mark)
                break
        else:
            out.append(ord(text[i]))
            i += 1
    return out


def _render_message(m: dict[str, Any], strip_think: bool) -> str:
    content = m.get("content") or ""
    if isinstance(content, list):  # content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    if strip_think and m.get("role") == "assistant":
        content = _THINK_RE.sub("", content)
    for call in m.get("tool_calls") or ():
        fn = call.get("function", {})
        content += f"<tool_call>{json.dumps({'name': fn.get('name'), 'arguments': fn.get('arguments')})}</tool_call>"
    return f"<|im_start|>{m.get('role')}\n{content}<|im_end|>\n"


def chatml(messages: Sequence[dict[str, Any]]) -> str:
    """Prefix-preserving ChatML-like template (with the generation prompt)."""
    return "".join(_render_message(m, False) for m in messages) + "<|im_start|>assistant\n"


def chatml_strip_think(messages: Sequence[dict[str, Any]]) -> str:
    """Like `chatml` but earlier assistant turns lose their ``<think>`` blocks (not prefix-preserving)."""
    return "".join(_render_message(m, True) for m in messages) + "<|im_start|>assistant\n"


@dataclass
class Reply:
    """One scripted answer of the fake server.

    Args:
        content: assistant message text (None with tool calls only).
        tool_calls: ``[{"name": ..., "arguments": {...} | "json"}]``; rendered in
            OpenAI's shape (ids, ``type``, arguments as a JSON string).
        status: HTTP status; a non-200 status answers ``body`` or an OpenAI error object.
        headers: extra response headers (e.g. ``{"Retry-After": "0.05"}``).
        body: raw response body (overrides everything else: malformed JSON tests).
        delay: seconds to wait before answering (client timeouts, concurrency).
        drop: close the connection without any response.
        finish_reason: reported finish reason.
        reasoning: a ``reasoning_content`` field (like reasoning parsers add).
        logprobs: force these log-probs (else the deterministic ones when asked).
    """

    content: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: str | bytes | None = None
    delay: float = 0.0
    drop: bool = False
    finish_reason: str | None = None
    reasoning: str | None = None
    logprobs: list[float] | None = None


class FakeOpenAIServer:
    """Scripted OpenAI-compatible server on 127.0.0.1 in a daemon thread (a context manager).

    Args:
        replies: the script (see the module docstring); more can be queued with `add`.
        responder: fallback ``(request) -> Reply | str`` once the script is exhausted.
        mode: which token-id fields to return: ``"vllm"``, ``"sglang"`` or ``"openai"``.
        template: ``(messages) -> prompt text`` used for prompt token ids.
        model: the id ``/v1/models`` lists and replies carry.
    """

    def __init__(self, replies: Iterable[Any] = (), *, responder: Callable[[dict[str, Any]], Any] | None = None,
                 mode: str = "vllm", template: Callable[[Sequence[dict[str, Any]]], str] = chatml,
                 model: str = "fake-model"):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}")
        self.mode = mode
        self.template = template
        self.model = model
        self.responder = responder
        self.requests: list[dict[str, Any]] = []  # parsed bodies of chat requests, arrival order
        self.headers: list[dict[str, str]] = []  # their request headers
        self.count = 0  # chat requests received
        self.in_flight = 0
        self.max_concurrent = 0
        self._script: list[Any] = list(replies)
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> FakeOpenAIServer:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    fake._send(self, 200, {"object": "list", "data": [{"id": fake.model, "object": "model"}]})
                else:
                    fake._send(self, 404, {"error": {"message": "not found", "code": 404}})

            def do_POST(self) -> None:
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    fake._send(self, 404, {"error": {"message": "not found", "code": 404}})
                    return
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                fake._chat(self, raw)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        # a timed-out client leaves the handler writing into a closed socket: not an error here
        self._server.handle_error = lambda request, client_address: None  # type: ignore[method-assign]
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-openai", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self._closing.set()  # wakes handlers sleeping on a delay
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("server not started")
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1`` (what an OpenAI client takes as base URL)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def add(self, *replies: Any) -> None:
        """Queue more scripted replies."""
        with self._lock:
            self._script.extend(replies)

    @property
    def pending(self) -> int:
        """Scripted replies not yet used."""
        with self._lock:
            return len(self._script)

    # ------------------------------------------------------------------ helpers for tests

    def prompt_ids(self, messages: Sequence[dict[str, Any]]) -> list[int]:
        """The prompt ids this server reports for `messages`."""
        return tokenize(self.template(messages))

    @staticmethod
    def response_ids(content: str) -> list[int]:
        """The response ids this server reports for a reply with `content` (plus end of turn)."""
        return tokenize(content) + [IM_END]

    # ------------------------------------------------------------------ request handling

    def _send(self, h: BaseHTTPRequestHandler, status: int, payload: Any,
              headers: dict[str, str] | None = None) -> None:
        data = payload if isinstance(payload, bytes) else (
            payload.encode() if isinstance(payload, str) else json.dumps(payload).encode())
        try:
            h.send_response(status)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                h.send_header(k, v)
            h.end_headers()
            h.wfile.write(data)
        except OSError:
            pass  # the client gave up (timeout): nothing to answer

    def _next_reply(self, request: dict[str, Any]) -> Reply:
        with self._lock:
            item = self._script.pop(0) if self._script else None
        if item is None and self.responder is not None:
            item = self.responder
        if item is None:
            return Reply(status=400, body=json.dumps({"error": {
                "message": "fake server: no scripted reply left", "code": 400}}))
        if callable(item) and not isinstance(item, Reply):
            item = item(request)
        return Reply(content=item) if isinstance(item, str) else item

    def _chat(self, h: BaseHTTPRequestHandler, raw: bytes) -> None:
        try:
            request = json.loads(raw)
        except ValueError:
            self._send(h, 400, {"error": {"message": "fake server: request is not JSON", "code": 400}})
            return
        with self._lock:
            self.count += 1
            self.requests.append(request)
            self.headers.append(dict(h.headers.items()))
            self.in_flight += 1
            self.max_concurrent = max(self.max_concurrent, self.in_flight)
        # a request stops counting as in flight before its reply is written: the client
        # may send its next request as soon as it has read this one's reply
        done = False
        try:
            reply = self._next_reply(request)
            if reply.delay:
                self._closing.wait(reply.delay)
            self._leave()
            done = True
            if reply.drop:
                h.close_connection = True
                try:
                    h.connection.shutdown(2)
                except OSError:
                    pass
                return
            if reply.body is not None:
                self._send(h, reply.status, reply.body, reply.headers)
            elif reply.status != 200:
                self._send(h, reply.status, {"error": {"message": f"fake error {reply.status}",
                                                       "type": "fake", "code": reply.status}}, reply.headers)
            elif request.get("stream"):
                self._send_stream(h, self._completion(request, reply), request, reply.headers)
            else:
                self._send(h, 200, self._completion(request, reply), reply.headers)
        finally:
            if not done:
                self._leave()

    def _send_stream(self, h: BaseHTTPRequestHandler, completion: dict[str, Any], request: dict[str, Any],
                     headers: dict[str, str] | None = None) -> None:
        """The completion as server-sent ``chat.completion.chunk`` events (``stream: true``):
        the role and content, the tool calls, the finish reason, the usage when
        ``stream_options.include_usage`` asks, then ``data: [DONE]``."""
        choice = completion["choices"][0]
        message = choice["message"]
        base = {k: completion[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return base | {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        events = [chunk({"role": "assistant", "content": message.get("content") or ""})]
        for i, call in enumerate(message.get("tool_calls") or ()):
            events.append(chunk({"tool_calls": [{"index": i, **call}]}))
        events.append(chunk({}, choice["finish_reason"]))
        if (request.get("stream_options") or {}).get("include_usage"):
            events.append(base | {"choices": [], "usage": completion["usage"]})
        data = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
        try:
            h.send_response(200)
            h.send_header("Content-Type", "text/event-stream")
            h.send_header("Cache-Control", "no-cache")
            for k, v in (headers or {}).items():
                h.send_header(k, v)
            h.end_headers()
            h.wfile.write(data.encode())
            h.wfile.flush()
            h.close_connection = True  # the end of the stream is the end of the connection (HTTP/1.0)
        except OSError:
            pass

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _completion(self, request: dict[str, Any], reply: Reply) -> dict[str, Any]:
        content = reply.content
        calls = None
        if reply.tool_calls:
            calls = [{"id": f"call_{self.count}_{i}", "type": "function",
                      "function": {"name": c["name"],
                                   "arguments": c["arguments"] if isinstance(c.get("arguments"), str)
                                   else json.dumps(c.get("arguments", {}))}}
                     for i, c in enumerate(reply.tool_calls)]
        assistant = {"role": "assistant", "content": content, "tool_calls": calls}
        prompt_ids = self.prompt_ids(request.get("messages", []))
        # what the model "sampled": the assistant turn as the template renders it, minus the
        # framing the template adds (role header) and the newline after the end-of-turn token
        rendered = _render_message(assistant, False)
        body = rendered[len("<|im_start|>assistant\n"):-1]
        response_ids = tokenize(body)
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = calls
        if reply.reasoning is not None:
            message["reasoning_content"] = reply.reasoning
        finish = reply.finish_reason or ("tool_calls" if calls else "stop")
        choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": finish}
        if request.get("logprobs"):
            lps = reply.logprobs if reply.logprobs is not None else [
                -((i % 5) + 1) / 10 for i in range(len(response_ids))]
            as_ids = self.mode == "vllm" and request.get("return_tokens_as_token_ids")
            choice["logprobs"] = {"content": [
                {"token": f"token_id:{t}" if as_ids else _piece(t), "logprob": lp, "bytes": None,
                 "top_logprobs": []}
                for t, lp in zip(response_ids, lps)]}
        out: dict[str, Any] = {"id": f"chatcmpl-{self.count}", "object": "chat.completion",
                               "created": int(time.time()), "model": request.get("model") or self.model,
                               "choices": [choice],
                               "usage": {"prompt_tokens": len(prompt_ids), "completion_tokens": len(response_ids),
                                         "total_tokens": len(prompt_ids) + len(response_ids)}}
        if self.mode == "vllm" and request.get("return_token_ids"):
            out["prompt_token_ids"] = prompt_ids
            choice["token_ids"] = response_ids
        elif self.mode == "sglang":
            if request.get("return_prompt_token_ids"):
                choice["prompt_token_ids"] = prompt_ids
            if request.get("return_token_ids"):
                choice["token_ids"] = response_ids
        return out


def _piece(tid: int) -> str:
    for mark, t in SPECIAL.items():
        if t == tid:
            return mark
    return chr(tid)
