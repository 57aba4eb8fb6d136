"""The client's options, typed (``connect`` takes them as keywords; ``RelayClient`` as one object)."""

from __future__ import annotations

import random as _random
from dataclasses import dataclass, field
from typing import Callable, Optional

from .backoff import Backoff


@dataclass(frozen=True)
class ClientOptions:
    #: Sent as ``Authorization: Bearer <api_key>`` on the upgrade, when the relay asks for keys.
    api_key: Optional[str] = None
    #: Seconds between the relay's heartbeats (its ``--heartbeat-ms``); sets the default ``dead_after``.
    heartbeat: float = 15.0
    #: Seconds without any message (not even a heartbeat) after which the connection counts as dead and
    #: is replaced; None: 2.5 heartbeats.
    dead_after: Optional[float] = None
    #: Reconnect delays (``Backoff``: ``base``, ``maximum``, ``going_away_spread``).
    backoff: Backoff = Backoff()
    #: Seconds one connection attempt (TCP, TLS, the WebSocket upgrade) may take before it counts as failed.
    open_timeout: float = 10.0
    #: Seconds ``await connect(...)`` waits for the first connection before it raises ``ConnectTimeout``
    #: (and closes the client); None waits as long as the client keeps retrying.
    timeout: Optional[float] = None
    #: Uniform in [0, 1): the jitter of reconnect delays (tests make it fixed).
    random: Callable[[], float] = field(default=_random.random, repr=False)

    def __post_init__(self) -> None:
        for name in ("heartbeat", "dead_after", "open_timeout", "timeout"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")

    @property
    def dead_after_seconds(self) -> float:
        return self.dead_after if self.dead_after is not None else self.heartbeat * 2.5
