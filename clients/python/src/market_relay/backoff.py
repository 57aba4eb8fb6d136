"""Reconnect delays: exponential backoff with full jitter (a uniformly random delay between 0 and the
capped exponential), so thousands of clients dropped by one relay do not return in lockstep. After a
1001 close ("relay shutting down", docs/protocol.md "Close codes") the first delay is a random part of
``going_away_spread`` instead. The same policy as the JavaScript SDK (src/client/connection/backoff.ts)."""

from __future__ import annotations

import math
import random as _random
from typing import Callable, NamedTuple, Optional

#: The relay is shutting down: reconnect, to another relay if there is one.
GOING_AWAY = 1001


class Backoff(NamedTuple):
    """Seconds. ``base``: upper bound of the first retry's delay; ``maximum``: of any delay;
    ``going_away_spread``: the window reconnects after a 1001 close are spread over."""

    base: float = 0.5
    maximum: float = 30.0
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
