"""Reconnect delays: exponential backoff with full jitter (a uniformly random delay between 0 and the
capped exponential), so thousands of clients dropped by one relay do not return in lockstep. After a
1001 close ("relay shutting down", docs/protocol.md "Close codes") the first delay is a random part of
``going_away_spread`` instead. The same policy as the JavaScript SDK (packages/client/src/connection/backoff.ts)."""

from __future__ import annotations

import math
import random as _random
from typing import Callable, NamedTuple, Optional

#: The relay is shutting down: reconnect, to another relay if there is one.
GOING_AWAY = 1001


class Backoff(NamedTuple):
    """Reconnect delays, in seconds. Retry number ``n`` (0 for the first after a drop) waits a uniformly
    random time between 0 and ``min(maximum, base * 2**n)``; a connection that delivered a message
    starts again at ``n = 0``."""

    #: Upper bound of the first retry's delay; each further retry doubles it.
    base: float = 0.5
    #: Upper bound of any delay.
    maximum: float = 30.0
    #: After a 1001 close ("relay shutting down"), the first retry waits a random time up to this, so
    #: that the clients of a relay being restarted do not all reconnect at once.
    going_away_spread: float = 5.0


def backoff_delay(attempt: int, backoff: Backoff, random: Callable[[], float] = _random.random) -> float:
    """Delay before retry number ``attempt`` (0 for the first retry after a drop)."""
    ceiling = min(backoff.maximum, math.ldexp(backoff.base, min(attempt, 62)))
    return random() * ceiling


def reconnect_delay(
    attempt: int,
    close_code: Optional[int],
    backoff: Backoff,
    random: Callable[[], float] = _random.random,
) -> float:
    if attempt == 0 and close_code == GOING_AWAY:
        return random() * backoff.going_away_spread
    return backoff_delay(attempt, backoff, random)
