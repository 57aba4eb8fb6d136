"""``replay`` and ``since`` against a relay that records (started by test/clients/python-history.test.ts
with a temporary --data-dir over a moving simulator): a replay of the recorded book from inside the
stream gives, at every step, the book (levels and checksum) the live client held after the message
with the same seq, at "max" and at speed 10; ``subscribe_book`` and ``subscribe_price`` with ``since``
stitch to live with the client's own seq and checksum checks (no ``resync``); a relay that records
nothing (MARKET_RELAY_PLAIN_URL) refuses ``since`` and ``replay`` clearly."""

import asyncio
from datetime import datetime, timedelta, timezone

import pytest

from conftest import env, live_backoff, until
from market_relay import RelayClientError, connect


def key(message):
    return message["epoch"], message["seq"]


def watch(stream):
    """Every snapshot and update of ``stream`` as (message, state after it), and every resync."""
    steps, resyncs = [], []
    stream.on("snapshot", lambda change: steps.append((change.message, change.state)))
    stream.on("update", lambda change: steps.append((change.message, change.state)))
    stream.on("resync", resyncs.append)
    return steps, resyncs


def parse(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def iso(at):
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def test_replay_and_since_give_the_live_book_at_every_step():
    url, market = env("MARKET_RELAY_URL"), env("MARKET_RELAY_MARKET")

    async def scenario():
        async with connect(url, backoff=live_backoff()) as live:
            book, _ = watch(live.subscribe_book(market))
            price, _ = watch(live.subscribe_price(market))
            await until("a changing book", lambda: len(book) >= 40 and len(price) >= 5)
            sent = list(book)
            # ``from`` falls strictly between two live messages, inside the stream.
            at = next(
                i
                for i in range(10, len(sent) - 1)
                if parse(sent[i + 1][0]["rts"]) > parse(sent[i][0]["rts"]) + timedelta(milliseconds=1)
            )
            from_ = iso(parse(sent[at][0]["rts"]) + timedelta(milliseconds=1))
            to = iso(parse(sent[-1][0]["rts"]) + timedelta(milliseconds=1))
            held = {key(message): (message, state) for message, state in sent}

            for speed in ("max", 10):
                replay = live.replay("book", [market], from_, to, speed=speed)
                items = [item async for item in replay]
                assert [item for item in items if item.type != "message"] == [], speed
                assert [key(item.message) for item in items] == [key(message) for message, _ in sent[at:]]
                assert items[0].message["type"] == "snapshot"
                for item in items:
                    message, state = held[key(item.message)]
                    assert item.state == state
                    assert item.message.get("checksum") == message.get("checksum")
                assert replay.result is not None and replay.result["messages"] == len(items)

        async with connect(url, backoff=live_backoff()) as reader:
            since_book = reader.subscribe_book(market, since=from_)
            since_price = reader.subscribe_price(market, since=from_)
            read_book, book_resyncs = watch(since_book)
            read_price, price_resyncs = watch(since_price)
            await until("the history read", lambda: len(read_book) > len(sent) - at and read_price)
            assert book_resyncs == [] and price_resyncs == []
            for stream in (since_book, since_price):
                assert stream.history == {"from": from_, "complete": True}
            # The state at the time, then every step the live client took after it.
            assert [key(message) for message, _ in read_book[: len(sent) - at]] == [key(m) for m, _ in sent[at:]]
            for message, state in read_book[: len(sent) - at]:
                assert state == held[key(message)][1]
            # The state at the time is that of the last message at or before it (docs/history.md).
            first_price = [m for m, _ in price if parse(m["rts"]) <= parse(from_)][-1]
            assert key(read_price[0][0]) == key(first_price)

    asyncio.run(scenario())


def test_a_relay_that_records_nothing_refuses_since_and_replay():
    url, market = env("MARKET_RELAY_PLAIN_URL"), env("MARKET_RELAY_MARKET")

    async def scenario():
        async with connect(url, backoff=live_backoff()) as client:
            since = datetime.now(timezone.utc) - timedelta(minutes=1)
            book = client.subscribe_book(market, since=since)
            errors = []
            book.on("error", errors.append)
            await until("the refusal", lambda: errors)
            assert errors[0].code == "bad_request" and "records nothing" in str(errors[0])
            with pytest.raises(RelayClientError) as refused:
                async for _item in client.replay("book", [market], since, speed="max"):
                    pass
            assert refused.value.code == "out_of_retention" and "history off" in str(refused.value)

    asyncio.run(scenario())
