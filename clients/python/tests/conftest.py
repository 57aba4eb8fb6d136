"""What the tests share. The tests that need a relay read where it is from the environment, set by
the repository's test/clients/python*.test.ts, which start a simulator and relays and run these tests
against them (``npm test`` runs them): MARKET_RELAY_URL (or MARKET_RELAY_URLS and MARKET_RELAY_CONTROL
for failover), MARKET_RELAY_MARKET (an active market) and MARKET_RELAY_BOOK_RECORD (a file the depth-10
book's verified states are written to, for comparison with a JavaScript client's). Without them those
tests are skipped; the pure ones always run."""

import asyncio
import os
import sys
from pathlib import Path

import pytest

try:
    import market_relay  # noqa: F401 - installed (pip install ./clients/python)
except ImportError:  # a checkout without installing: test the source
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))


def env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.skip(f"{name} is not set: run through test/clients/python*.test.ts (npm test)")
    return value


def live_backoff():
    """Reconnects quickly: the live tests' relays run on this machine."""
    from market_relay import Backoff

    return Backoff(base=0.05, maximum=0.5, going_away_spread=0.1)


#: Generous: the relay polls every few tens of milliseconds, but the machine may be loaded.
DEADLINE = 8.0


async def until(what, condition, timeout=DEADLINE):
    """Waits for ``condition()`` to hold, failing with ``what`` after ``timeout`` seconds."""

    async def poll():
        while not condition():
            await asyncio.sleep(0.01)

    try:
        await asyncio.wait_for(poll(), timeout)
    except asyncio.TimeoutError:
        raise AssertionError(f"timed out waiting for {what}") from None


def summed_by_hand(bids, asks, step):
    """Levels summed into multiples of ``step`` (docs/protocol.md "Grouped books") with ``Decimal``,
    apart from the relay's code: bids rounded down, asks up, sizes added exactly and printed with the
    most decimal places of any level in the group, prices with 8 places. Returns (bids, asks)."""
    from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

    unit = Decimal(step)

    def side(levels, rounding):
        groups = {}
        for price, size in levels:
            key = (Decimal(price) / unit).to_integral_value(rounding=rounding) * unit
            groups.setdefault(key, []).append(size)
        ordered = sorted(groups.items(), reverse=rounding == ROUND_FLOOR)
        places = lambda text: len(text.split(".")[1]) if "." in text else 0  # noqa: E731
        return [
            [f"{key:.8f}", f"{sum(Decimal(s) for s in sizes):.{max(places(s) for s in sizes)}f}"]
            for key, sizes in ordered
        ]

    return side(bids, ROUND_FLOOR), side(asks, ROUND_CEILING)
