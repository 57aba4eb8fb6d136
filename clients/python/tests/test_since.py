"""History since a time (docs/protocol.md "History since a time"): against a real relay over the
simulator (started by test/clients/python-since.test.ts), ``subscribe_trades(market, since=…)`` announces
every trade upstream's own activity pages list since then, oldest first, each once; bad values raise
before anything is sent; an unknown ``activity_id`` ends the subscription with an error.
``subscribe_candles(…, since=…)`` holds, in its ``history`` event and its state, every trade of the range."""

import asyncio
import json
import urllib.request
from datetime import datetime, timedelta, timezone

import pytest

from conftest import env, live_backoff, until
from market_relay import connect
from market_relay.requests import checked_candles_since, checked_since

FAST = live_backoff()


def upstream_listing(upstream, market):
    """Upstream's activity pages read directly, oldest first (the order read from the entries' times)."""
    entries, offset = [], 0
    while True:
        with urllib.request.urlopen(f"{upstream}/api/markets/{market}/activity?limit=100&offset={offset}") as response:
            page = json.load(response)
        entries += page["activity"]
        offset += len(page["activity"])
        if not page["pagination"]["hasMore"] or not page["activity"]:
            break
    newest_first = len(entries) > 1 and entries[0]["activity_timestamp"] > entries[-1]["activity_timestamp"]
    return entries[::-1] if newest_first else entries


@pytest.mark.parametrize(
    "since",
    ["2025-06-01T12:00", "2025-06-01", 42, "", "x" * 129, datetime(2025, 6, 1)],
)
def test_a_since_the_relay_would_refuse_raises(since):
    with pytest.raises(ValueError, match=r"since"):
        checked_since(since)


def test_since_bounds():
    now = datetime(2026, 1, 1, 12, tzinfo=timezone.utc)
    assert checked_since("2026-01-01T11:30:00.123456789Z", now) == "2026-01-01T11:30:00.123456789Z"
    assert checked_since(now - timedelta(minutes=5), now) == "2026-01-01T11:55:00.000Z"
    assert checked_since("some-trade-id", now) == "some-trade-id"
    # Past upstream's 24 hours: a relay that records answers it, one that does not refuses it.
    assert checked_since("2025-12-31T11:59:59+00:00", now) == "2025-12-31T11:59:59+00:00"
    with pytest.raises(ValueError, match=r"future"):
        checked_since("2026-01-01T12:00:01Z", now)


def test_candles_take_a_time_of_any_source():
    now = datetime(2026, 1, 1, 12, tzinfo=timezone.utc)
    assert checked_candles_since("2026-01-01T11:30:00Z", now) == "2026-01-01T11:30:00Z"
    assert checked_candles_since(None, now) is None
    for bad in ("some-trade-id", "2026-01-01T12:00:01Z"):
        with pytest.raises(ValueError, match=r"since"):
            checked_candles_since(bad, now)


def test_every_trade_since_then_once_oldest_first():
    url, upstream, market = env("MARKET_RELAY_URL"), env("MARKET_RELAY_UPSTREAM"), env("MARKET_RELAY_MARKET")

    async def scenario():
        async with connect(url, backoff=FAST) as client:
            errors, announced = [], []
            client.on("error", errors.append)
            since = datetime.now(timezone.utc) - timedelta(minutes=30)
            trades = client.subscribe_trades(market, since=since)
            trades.on("trade", lambda trade: announced.append(trade["activity_id"]))
            await until("the history", lambda: trades.state is not None)
            cut = since.isoformat(timespec="milliseconds").replace("+00:00", "Z")
            expected = [e["activity_id"] for e in upstream_listing(upstream, market) if e["activity_timestamp"] >= cut]
            assert announced[: len(expected)] == expected and len(expected) > 100
            assert len(set(announced)) == len(announced)
            missing = client.subscribe_trades(env("MARKET_RELAY_OTHER"), since="no-such-trade")
            await until("the unknown id's subscription to end", lambda: missing.closed)
            assert [e.code for e in errors] == ["bad_request"]

    asyncio.run(scenario())


def test_candles_since_then_hold_every_trade_of_the_range():
    url, upstream, market = env("MARKET_RELAY_URL"), env("MARKET_RELAY_UPSTREAM"), env("MARKET_RELAY_MARKET")

    async def scenario():
        async with connect(url, backoff=FAST) as client:
            errors, histories = [], []
            client.on("error", errors.append)
            since = datetime.now(timezone.utc) - timedelta(minutes=30)
            candles = client.subscribe_candles(market, "1m", "trades", since=since)
            candles.on("history", histories.append)
            await until("the history", lambda: candles.state is not None)
            assert len(histories) == 1 and all(candle["final"] for candle in histories[0])
            # Candles start at whole minutes: the range starts at the minute `since` falls in.
            start = since.replace(second=0, microsecond=0).isoformat(timespec="milliseconds").replace("+00:00", "Z")
            listed = [e for e in upstream_listing(upstream, market) if e["activity_timestamp"] >= start]
            held = [c for c in histories[0] + list(candles.state) if c["start"] >= start]
            assert sum(candle["trades"] for candle in held) == len(listed) > 100
            assert errors == []

    asyncio.run(scenario())
