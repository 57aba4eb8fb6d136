"""What the client logs under ``market_relay``: a listener that raises, with its traceback; a relay it
cannot reach and the retries; a stream it resynchronises."""

import asyncio
import logging

from market_relay import book_from_snapshot, connect
from test_client_fake_relay import DATA, FAST, MARKET, ScriptedRelay, book_message, free_port
from test_live_relay import until


def records_of(caplog, text):
    return [r for r in caplog.records if r.name.startswith("market_relay") and text in r.getMessage()]


def test_a_listener_that_raises_is_logged_with_its_traceback(caplog):
    caplog.set_level(logging.DEBUG, logger="market_relay")

    def broken_listener(change):
        raise RuntimeError("the bot's own bug")

    async def broken_coroutine(change):
        raise KeyError("an async bug")

    async def scenario():
        relay = ScriptedRelay()
        await relay.start()
        try:
            async with connect(relay.url, backoff=FAST) as client:
                book = client.subscribe_book(MARKET, depth=10)
                book.on("snapshot", broken_listener)
                book.on("snapshot", broken_coroutine)
                errors = []
                client.on("error", errors.append)
                await until("the subscribe", lambda: len(relay.requests) == 1)
                await relay.send(book_message("snapshot", 1, DATA, book_from_snapshot(DATA)))
                await until("both listeners' errors", lambda: len(errors) == 2)
                assert book.status == "live"  # the client carried on
                assert [e.code for e in errors] == ["listener_threw", "listener_threw"]
        finally:
            await relay.close()

    asyncio.run(scenario())
    raised = records_of(caplog, "a listener of 'snapshot'")
    assert len(raised) == 2 and all(r.levelno == logging.ERROR and r.exc_info for r in raised)
    assert "Traceback" in caplog.text and 'raise RuntimeError("the bot\'s own bug")' in caplog.text
    assert "KeyError: 'an async bug'" in caplog.text


def test_an_unreachable_relay_is_logged_and_so_are_the_retries(caplog):
    caplog.set_level(logging.INFO, logger="market_relay")

    async def scenario():
        gone = f"ws://127.0.0.1:{free_port()}/v1/ws"
        client = connect(gone, backoff=FAST)
        retries = []
        client.on("reconnecting", retries.append)
        await until("two retries", lambda: len(retries) >= 2)
        await client.close()

    asyncio.run(scenario())
    failed = records_of(caplog, "could not connect to ws://127.0.0.1:")
    assert failed and all(r.levelno == logging.WARNING for r in failed)
    assert records_of(caplog, "reconnecting to ws://127.0.0.1:")


def test_a_resync_is_logged(caplog):
    caplog.set_level(logging.INFO, logger="market_relay")

    async def scenario():
        relay = ScriptedRelay()
        await relay.start()
        try:
            async with connect(relay.url, backoff=FAST) as client:
                book = client.subscribe_book(MARKET, depth=10)
                await until("the subscribe", lambda: len(relay.requests) == 1)
                state = book_from_snapshot(DATA)
                await relay.send(book_message("snapshot", 1, DATA, state))
                await relay.send(book_message("update", 3, {"bids": [], "asks": []}, state))
                await until("the resync", lambda: book.status == "resyncing")
        finally:
            await relay.close()

    asyncio.run(scenario())
    assert records_of(caplog, "resynchronising (gap): update seq 3 after seq 1")
    assert records_of(caplog, "connected to ws://127.0.0.1:")


def test_a_stream_going_stale_is_a_warning_and_live_again_an_info(caplog):
    caplog.set_level(logging.INFO, logger="market_relay")

    async def scenario():
        relay = ScriptedRelay()
        await relay.start()
        try:
            async with connect(relay.url, backoff=FAST) as client:
                book = client.subscribe_book(MARKET, depth=10)
                await until("the subscribe", lambda: len(relay.requests) == 1)
                state = book_from_snapshot(DATA)
                await relay.send(book_message("snapshot", 1, DATA, state))
                await until("live", lambda: book.status == "live")
                assert not records_of(caplog, "is stale") and not records_of(caplog, "is live again")
                status = {"type": "status", "channel": "book", "market": MARKET, "depth": 10}
                await relay.send({**status, "state": "stale", "reason": "upstream unavailable"})
                await until("stale", lambda: book.status == "stale")
                await relay.send({**status, "state": "live"})
                await until("live again", lambda: book.status == "live")
        finally:
            await relay.close()

    asyncio.run(scenario())
    stale = records_of(caplog, f"book {MARKET} depth 10 is stale: upstream unavailable")
    live = records_of(caplog, f"book {MARKET} depth 10 is live again")
    assert [r.levelno for r in stale] == [logging.WARNING] and [r.levelno for r in live] == [logging.INFO]
    assert stale[0].name.startswith("market_relay.") and caplog.records.index(stale[0]) < caplog.records.index(live[0])


def test_a_lost_connection_makes_its_streams_stale_and_a_resume_live_again(caplog):
    caplog.set_level(logging.INFO, logger="market_relay")

    async def scenario():
        relay = ScriptedRelay()
        await relay.start()
        try:
            async with connect(relay.url, backoff=FAST) as client:
                price = client.subscribe_price(MARKET)
                await until("the subscribe", lambda: len(relay.requests) == 1)
                await relay.send({"type": "snapshot", "channel": "price", "market": MARKET, "epoch": "e1", "seq": 1,
                                  "ts": "2026-01-01T00:00:00.000Z", "rts": "2026-01-01T00:00:00.000Z",
                                  "data": {"best_bid": "0.52"}})
                await until("live", lambda: price.status == "live")
                await relay.connections[-1].close()
                await until("the resubscribe", lambda: len(relay.requests) == 2)
                resubscribe = relay.requests[-1]
                await relay.send({"type": "subscribed", "id": resubscribe["id"], "channel": "price",
                                  "markets": [MARKET], "recovered": {MARKET: True}})
                await until("live again", lambda: price.status == "live")
        finally:
            await relay.close()

    asyncio.run(scenario())
    assert [r.levelno for r in records_of(caplog, f"price {MARKET} is stale: connection lost")] == [logging.WARNING]
    assert [r.levelno for r in records_of(caplog, f"price {MARKET} is live again")] == [logging.INFO]
