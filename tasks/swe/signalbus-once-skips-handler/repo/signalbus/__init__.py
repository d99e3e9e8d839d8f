"""A synchronous in-process event bus."""

from signalbus.bus import Bus, Subscription

__all__ = ["Bus", "Subscription"]
