"""`Bus`: handlers by event name, run synchronously by `emit`."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable

Handler = Callable[..., Any]


@dataclass(eq=False)
class Subscription:
    """What `Bus.on` returns; `cancel()` removes the handler (idempotent)."""

    bus: "Bus"
    event: str
    handler: Handler
    once: bool = False
    active: bool = field(default=True)

    def cancel(self) -> None:
        if self.active:
            self.active = False
            self.bus._remove(self)


class Bus:
    def __init__(self) -> None:
        self._subs: dict[str, list[Subscription]] = defaultdict(list)

    def on(self, event: str, handler: Handler) -> Subscription:
        sub = Subscription(self, event, handler)
        self._subs[event].append(sub)
        return sub

    def once(self, event: str, handler: Handler) -> Subscription:
        """Like `on`, but the handler is removed after its first call."""
        sub = Subscription(self, event, handler, once=True)
        self._subs[event].append(sub)
        return sub

    def _remove(self, sub: Subscription) -> None:
        subs = self._subs.get(sub.event)
        if subs and sub in subs:
            subs.remove(sub)

    def handlers(self, event: str) -> list[Handler]:
        return [s.handler for s in self._subs.get(event, ())]

    def emit(self, event: str, *args: Any, **kwargs: Any) -> int:
        """Call every handler of `event` in subscription order; returns how many ran."""
        ran = 0
        for sub in self._subs.get(event, ()):
            if not sub.active:
                continue
            if sub.once:
                sub.cancel()
            sub.handler(*args, **kwargs)
            ran += 1
        return ran
