"""A ``price`` threshold (docs/protocol.md "Per-subscription options"): against a real relay whose
upstream prices this test sets (test/clients/python-threshold.test.ts starts them), half-tick moves of
the best bid reach a one-tick subscriber as whole ticks and the final state, as conflated updates, no resync;
``update`` changes and clears the threshold in place and ``subscriptions()`` shows it; bad values raise."""

import asyncio
import json
import urllib.request
from decimal import Decimal

import pytest

from conftest import env, live_backoff, until
from market_relay import connect
from market_relay.requests import checked_threshold

FAST = live_backoff()



def prices(half_ticks):
    """Best bid ``half_ticks`` half ticks of 0.01 above 0.50, the ask 0.60, the midpoint between."""
    bid = Decimal("0.50") + Decimal("0.005") * half_ticks
    ask = Decimal("0.60")
    return {"best_bid": f"{bid:.8f}", "best_ask": f"{ask:.8f}", "midpoint_price": f"{(bid + ask) / 2:.8f}"}


def set_prices(market, half_ticks):
    body = json.dumps({"market": market, "prices": prices(half_ticks)}).encode()
    request = urllib.request.Request(env("MARKET_RELAY_SCRIPT_URL"), data=body, method="POST")
    request.add_header("content-type", "application/json")
    urllib.request.urlopen(request, timeout=5).close()


@pytest.mark.parametrize("threshold", ["0", "0.000", "-0.01", "1.00000001", "2", "0.000000001", "1e-2", ".5", "", 0.01, True])
def test_a_threshold_the_relay_would_refuse_raises(threshold):
    with pytest.raises(ValueError, match=r"threshold must be a decimal string above 0"):
        checked_threshold(threshold)


def test_a_price_threshold_sends_whole_ticks_and_the_final_state():
    url, market = env("MARKET_RELAY_URL"), env("MARKET_RELAY_MARKET")

    async def scenario():
        async with connect(url, backoff=FAST) as raw_client, connect(url, backoff=FAST) as client:
            errors, resyncs, kinds, bids = [], [], [], []
            client.on("error", errors.append)
            raw = raw_client.subscribe_price(market)
            gated = client.subscribe_price(market, threshold="0.01")
            assert gated.threshold == "0.01" and raw.threshold is None
            gated.on("resync", resyncs.append)
            gated.on("snapshot", lambda _: (kinds.append("snapshot"), bids.append(gated.state["best_bid"])))
            gated.on(
                "update",
                lambda change: (
                    kinds.append("update"),
                    bids.append(gated.state["best_bid"]),
                ),
            )
            first = prices(0)["best_bid"]
            await until("both first states", lambda: raw.state is not None and gated.state is not None)
            assert gated.state["best_bid"] == first
            start = len(bids)
            for step in (1, 2, 3):
                await asyncio.to_thread(set_prices, market, step)
                expected = prices(step)["best_bid"]
                await until(f"the relay at {expected}", lambda: raw.state["best_bid"] == expected)
            final = prices(3)["best_bid"]
            await until("the final state", lambda: gated.state["best_bid"] == final)
            assert bids[start:] == [prices(2)["best_bid"], final]
            assert kinds[-2:] == ["update", "update"]

            async def listed():
                return [e.get("threshold") for e in (await client.subscriptions())["subscriptions"]]

            assert await listed() == ["0.01"]
            with pytest.raises(ValueError):
                await gated.update(threshold="0")
            await gated.update(threshold="0.05", interval=500)
            assert (gated.threshold, gated.interval) == ("0.05", 500)
            assert await listed() == ["0.05"]
            await gated.update(threshold=None)
            assert gated.threshold is None and gated.interval == 500
            assert await listed() == [None]
            assert resyncs == [] and errors == []

    asyncio.run(scenario())
