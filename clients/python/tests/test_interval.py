"""A paced subscription (docs/protocol.md "Per-subscription options"): against a real relay over the
ticking simulator (started by test/clients/python-interval.test.ts), a book asked with ``interval``
receives a snapshot, then conflated updates naming the ``seq`` they apply to (``prev_seq``, else the one before theirs), each
checksum-verified, with no resync, while the full book beside it gets every update; asking again with another interval paces the same object anew; bad values raise."""

import asyncio

import pytest

from conftest import env, live_backoff, until
from market_relay import connect
from market_relay.requests import checked_interval

FAST = live_backoff()



@pytest.mark.parametrize("interval", [0, 99, 60_001, "1000", True, 1.5, 36_000_000])
def test_an_interval_the_relay_would_refuse_raises(interval):
    with pytest.raises(ValueError, match=r"interval must be a whole number of ms from 100 to 60000"):
        checked_interval(interval)


def test_a_paced_book_gets_conflated_updates():
    url, market = env("MARKET_RELAY_URL"), env("MARKET_RELAY_MARKET")

    async def scenario():
        async with connect(url, backoff=FAST) as client:
            errors, resyncs, kinds = [], [], []
            client.on("error", errors.append)
            with pytest.raises(ValueError):
                client.subscribe_price(market, interval=50)
            full = client.subscribe_book(market)
            paced = client.subscribe_book(market, depth=10, interval=200)
            assert paced.interval == 200 and full.interval is None
            for book in (full, paced):
                book.on("resync", resyncs.append)
            paced.on("snapshot", lambda _: kinds.append("snapshot"))
            paced.on("update", lambda _: kinds.append("update"))
            await until("both books", lambda: full.state is not None and paced.state is not None)
            seq = full.seq
            await until("three paced updates", lambda: kinds.count("update") >= 3)
            assert full.seq > seq and kinds[0] == "snapshot" and "snapshot" not in kinds[1:]
            assert client.subscribe_book(market, depth=10, interval=1_000) is paced and paced.interval == 1_000
            count = len(kinds)
            await until("a message at the new pace", lambda: len(kinds) > count)
            listed = await client.subscriptions()
            entry = next(e for e in listed["subscriptions"] if e["channel"] == "book" and e.get("depth") == 10)
            assert entry["interval"] == 1_000
            assert resyncs == [] and errors == []

    asyncio.run(scenario())
