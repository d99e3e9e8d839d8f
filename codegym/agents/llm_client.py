"""`ChatClient`: JSON requests to an OpenAI-compatible server, with retries and a concurrency gate.

HTTP through the standard library (no client package); the settings are a
`TransportSettings` (`codegym.agents.llm_settings`). Each attempt holds a process-wide semaphore per
``(base_url, max_concurrency)`` (collect runs several agents in threads; forks share
it). Timeouts, connection errors, 408/409/425/429/5xx and malformed 200 bodies are
retried with exponential backoff and jitter, honouring ``Retry-After``; other 4xx
fail at once (a subclass may resend once with another body: `_resend_body`). When
retries run out, `LLMError` says why. A proxy from the environment is never used
for a loopback server.
"""

from __future__ import annotations

import contextlib
import email.utils
import http.client
import json
import os
import random
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from codegym.agents.llm_settings import TransportSettings
from codegym.core.groups import GroupField

RETRY_STATUSES = frozenset({408, 409, 425, 429}) | frozenset(range(500, 600))
_BODY_EXCERPT = 500

_GATES_LOCK = threading.Lock()
_GATES: dict[tuple[str, int], threading.BoundedSemaphore] = {}


class LLMError(RuntimeError):
    """A chat request failed for good (a non-retryable 4xx, or retries ran out).

    Attributes: ``status`` (HTTP status or None for network errors), ``body``
    (excerpt of the response body), ``url``, ``attempts`` (requests made),
    ``reason`` (short cause: ``"http"``, ``"timeout"``, ``"connection"``, ``"malformed"``).
    """

    def __init__(self, message: str, *, status: int | None = None, body: str = "", url: str = "",
                 attempts: int = 0, reason: str = "http"):
        super().__init__(message)
        self.status = status
        self.body = body
        self.url = url
        self.attempts = attempts
        self.reason = reason


@dataclass
class Attempt:
    """Outcome of one HTTP attempt (recorded in ``last_turn["attempts"]``)."""

    status: int | None
    error: str | None
    delay: float = 0.0  # backoff slept after this attempt

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "error": self.error, "delay": self.delay}


def gate(base_url: str, limit: int | None) -> threading.BoundedSemaphore | None:
    """The semaphore that bounds requests in flight to `base_url` (None: unbounded)."""
    if not limit or limit <= 0:
        return None
    key = (base_url, int(limit))
    with _GATES_LOCK:
        sem = _GATES.get(key)
        if sem is None:
            sem = _GATES[key] = threading.BoundedSemaphore(int(limit))
        return sem


def retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta seconds, possibly fractional, or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time()) if when is not None else None


def is_loopback(host: str | None) -> bool:
    return host in ("localhost", "127.0.0.1", "::1") or bool(host and host.startswith("127."))


class ChatClient:
    """The HTTP side of an agent talking to one base URL (retry and gate policy above).

    Args:
        base_url: API root including ``/v1``.
        api_key: bearer token; None reads the environment variable ``api_key_env`` (None: no key).
        transport: concurrency, timeout, retries and backoff, headers (`TransportSettings`);
            its fields read (and set) as the client's attributes (``client.timeout``).
    """

    max_concurrency = GroupField("transport")
    timeout = GroupField("transport")
    max_retries = GroupField("transport")
    backoff_base = GroupField("transport")
    backoff_max = GroupField("transport")
    retry_after_max = GroupField("transport")
    headers = GroupField("transport")

    def __init__(self, base_url: str, *, api_key: str | None = None, api_key_env: str | None = "OPENAI_API_KEY",
                 transport: TransportSettings | None = None):
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"base_url must be an http(s) URL, not {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self.api_key_env = api_key_env
        self.transport = transport or TransportSettings()
        self._rng = random.Random()

    def _resend_body(self, status: int, text: str, body: dict[str, Any]) -> dict[str, Any] | None:
        """Another body to send once after a non-retryable `status` answer (None: fail)."""
        return None

    def _api_key_value(self) -> str | None:
        return self._api_key or (os.environ.get(self.api_key_env) if self.api_key_env else None) or None

    def _open(self, method: str, url: str, payload: bytes | None) -> tuple[int, dict[str, str], bytes]:
        headers = {"Accept": "application/json", "User-Agent": "codegym-llm-agent", **self.headers}
        if payload is not None:
            headers["Content-Type"] = "application/json"
        key = self._api_key_value()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        req = urllib.request.Request(url, data=payload, headers=headers, method=method)
        # a proxy from the environment must not capture a local server
        handlers = [urllib.request.ProxyHandler({})] if is_loopback(urllib.parse.urlsplit(url).hostname) else []
        opener = urllib.request.build_opener(*handlers)
        try:
            with opener.open(req, timeout=self.timeout) as resp:
                return resp.status, dict(resp.headers.items()), resp.read()
        except urllib.error.HTTPError as e:
            try:
                body = e.read()
            except (OSError, http.client.HTTPException):
                body = b""
            return e.code, dict(e.headers.items()) if e.headers else {}, body

    def _send(self, method: str, url: str, payload: bytes | None) -> tuple[int | None, dict[str, str], bytes,
                                                                           str | None, str]:
        """One attempt: (status, headers, body, network error or None, reason)."""
        try:
            status, hdrs, raw = self._open(method, url, payload)
            return status, hdrs, raw, None, "http"
        except TimeoutError as e:
            return None, {}, b"", f"timeout after {self.timeout:g}s ({e})", "timeout"
        except urllib.error.URLError as e:
            if isinstance(e.reason, (TimeoutError, socket.timeout)):
                return None, {}, b"", f"timeout after {self.timeout:g}s ({e.reason})", "timeout"
            return None, {}, b"", f"connection error: {e.reason}", "connection"
        except (ConnectionError, http.client.HTTPException, OSError) as e:
            return None, {}, b"", f"connection error: {type(e).__name__}: {e}", "connection"

    def _request(self, method: str, path: str, body: Mapping[str, Any] | None,
                 expect: str) -> tuple[dict[str, Any], list[Attempt]]:
        """JSON request with retries; `expect` is a key the answer must hold ("choices", "data")."""
        url = self.base_url + path
        payload = json.dumps(body).encode() if body is not None else None
        lock = gate(self.base_url, self.max_concurrency) or contextlib.nullcontext()
        attempts: list[Attempt] = []
        resent = False
        attempt = 0
        while True:
            with lock:
                status, hdrs, raw, error, reason = self._send(method, url, payload)
            text = raw.decode("utf-8", "replace")
            excerpt = text[:_BODY_EXCERPT] + ("..." if len(text) > _BODY_EXCERPT else "")
            wait_at_least = None
            if error is None and status == 200:
                data, error = _answer(text, expect)
                if data is not None:
                    attempts.append(Attempt(status, None))
                    return data, attempts
                reason = "malformed"
            elif error is None:
                error = f"HTTP {status}"
                if status in RETRY_STATUSES:
                    wait_at_least = retry_after(next((v for k, v in hdrs.items() if k.lower() == "retry-after"),
                                                     None))
                else:
                    attempts.append(Attempt(status, error))
                    other = None if resent or body is None else self._resend_body(status, text, dict(body))
                    if other is not None:
                        body, payload, resent = other, json.dumps(other).encode(), True
                        continue
                    raise LLMError(f"{method} {url} failed: HTTP {status}: {excerpt}", status=status,
                                   body=excerpt, url=url, attempts=len(attempts), reason="http")
            record = Attempt(status, error)
            attempts.append(record)
            if attempt >= self.max_retries:
                raise LLMError(f"{method} {url} failed after {len(attempts)} attempt(s): {error}"
                               + (f" (HTTP {status}): {excerpt}" if status is not None else ""),
                               status=status, body=excerpt, url=url, attempts=len(attempts), reason=reason)
            record.delay = self._backoff(attempt, wait_at_least)
            time.sleep(record.delay)  # outside the gate: a waiting worker does not block the others
            attempt += 1

    def _backoff(self, attempt: int, wait_at_least: float | None) -> float:
        delay = min(self.backoff_max, self.backoff_base * (2 ** attempt))
        delay = delay / 2 + self._rng.uniform(0, delay / 2)  # jitter: desynchronise parallel workers
        if wait_at_least is not None:
            delay = max(delay, min(wait_at_least, self.retry_after_max))
        return delay


def _answer(text: str, expect: str) -> tuple[dict[str, Any] | None, str | None]:
    """(the decoded answer, None) of a 200 body, or (None, why it is malformed)."""
    try:
        data = json.loads(text)
        if not isinstance(data, dict) or not data.get(expect):
            raise ValueError(f"no {expect!r} in the answer")
        if expect == "choices" and not isinstance((data["choices"][0] or {}).get("message"), dict):
            raise ValueError("choices[0] has no message")
        return data, None
    except (ValueError, TypeError, IndexError, KeyError) as e:
        return None, f"malformed response: {e}"
