"""``client.history(...)`` against a relay that records (started by test/clients/python-history.test.ts
with a temporary --data-dir over a moving simulator): the NDJSON export of a book, read as it streams,
holds every update the live client verified, with the same epoch, seq, data and checksum; a range
the relay refuses raises ``history_refused``."""

import asyncio
from datetime import datetime, timedelta, timezone

import pytest

from market_relay import RelayClientError, connect
from conftest import env, live_backoff, until


def test_the_export_holds_the_live_book_as_it_was_received():
    url, market = env("MARKET_RELAY_URL"), env("MARKET_RELAY_MARKET")

    async def scenario():
        start = datetime.now(timezone.utc) - timedelta(seconds=1)
        async with connect(url, backoff=live_backoff()) as client:
            book = client.subscribe_book(market)
            live = []
            book.on("snapshot", lambda change: live.append(change.message))
            book.on("update", lambda change: live.append(change.message))
            await until("a few updates", lambda: sum(m["type"] == "update" for m in live) >= 3)
            read = [message async for message in client.history("book", market, start)]
            assert read and all(m["channel"] == "book" and m["market"] == market for m in read)
            assert [m["seq"] for m in read] == sorted(m["seq"] for m in read)

            def shape(message):
                return message["epoch"], message["seq"], message["data"], message.get("checksum")

            recorded = {m["seq"]: shape(m) for m in read}
            updates = [m for m in live if m["type"] == "update" and m["seq"] <= read[-1]["seq"]]
            assert updates and [recorded.get(m["seq"]) for m in updates] == [shape(m) for m in updates]

            # Leaving early reads no further.
            async for message in client.history("book", market, start):
                assert message["seq"] == read[0]["seq"]
                break

            with pytest.raises(RelayClientError) as refused:
                async for _message in client.history("book", market, "2020-01-01T00:00:00Z", "2020-01-02T00:00:00Z"):
                    pass
            assert refused.value.code == "history_refused" and "400: out_of_retention" in refused.value.message

    asyncio.run(scenario())
