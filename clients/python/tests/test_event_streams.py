"""Events as ``async for`` streams (every one, in order, ending with the subscription), and event
names checked at run time."""

import asyncio
import gc

import pytest

from market_relay import StreamChange, apply_book_update, book_from_snapshot, connect
from market_relay.streams import BookSubscription, TradesSubscription
from market_relay.wildcards import WildcardSubscription
from test_stream_state import MARKET, SNAPSHOT, RecordingHost, book_message, run


def trades_message(kind, seq, ids):
    return {"type": kind, "channel": "trades", "market": MARKET, "epoch": "e1", "seq": seq,
            "data": {"trades": [{"activity_id": i, "price": "0.5", "size": "1"} for i in ids]}}


def test_async_for_over_trades_gets_each_trade_once_in_order_and_ends_with_the_subscription():
    async def scenario():
        trades = TradesSubscription(RecordingHost(), MARKET)
        seen = []

        async def consume():
            async for trade in trades.trades():
                seen.append(trade["activity_id"])

        consumer = asyncio.ensure_future(consume())
        await asyncio.sleep(0)  # the consumer is waiting before anything arrives
        trades.receive(trades_message("snapshot", 1, ["a", "b"]))
        trades.receive(trades_message("update", 2, ["c"]))
        trades.receive(trades_message("update", 3, ["c", "d"]))  # c again: announced once
        trades.unsubscribe()
        await asyncio.wait_for(consumer, 5)
        assert seen == ["a", "b", "c", "d"]

    run(scenario)


def test_changes_yield_every_verified_change_even_to_a_slow_loop():
    async def scenario():
        book = BookSubscription(RecordingHost(), MARKET, 10)
        changes = book.changes()
        state = book_from_snapshot(SNAPSHOT)
        book.receive(book_message("snapshot", 1, SNAPSHOT, state))
        for seq, size in ((2, "1"), (3, "2"), (4, "3")):
            update = {"bids": [["0.50000000", size]], "asks": []}
            state = apply_book_update(state, update)
            book.receive(book_message("update", seq, update, state))
        book.end("done")
        received = [change async for change in changes]
        assert all(isinstance(change, StreamChange) for change in received)
        assert [change.message["seq"] for change in received] == [1, 2, 3, 4]
        assert received[-1].state == book.state
        # A stream asked for after the end is empty at once.
        assert [change async for change in book.changes()] == []

    run(scenario)


def test_the_clients_events_end_when_it_closes():
    async def scenario():
        client = connect("ws://127.0.0.1:1/v1/ws")
        statuses = client.events("status")
        await client.close()
        assert "closed" in [status async for status in statuses]

    run(scenario)


def test_a_dropped_event_stream_stops_collecting():
    async def scenario():
        trades = TradesSubscription(RecordingHost(), MARKET)
        stream = trades.trades()
        assert len(trades._listeners["trade"]) == 1
        del stream
        gc.collect()
        trades.receive(trades_message("snapshot", 1, ["a"]))
        assert trades._listeners["trade"] == []

    run(scenario)


def test_an_event_name_an_object_does_not_emit_raises_value_error():
    async def scenario():
        book = BookSubscription(RecordingHost(), MARKET, 10)
        for name in ("stauts", "trade", "open"):
            with pytest.raises(ValueError, match=repr(name)):
                book.on(name, print)
        with pytest.raises(ValueError):
            book.events("snapshot", "listed")
        assert book.on("status", print)  # a known one is accepted
        trades = TradesSubscription(RecordingHost(), MARKET)
        trades.on("trade", print)
        client = connect("ws://127.0.0.1:1/v1/ws")
        with pytest.raises(ValueError, match="'snapshot'"):
            client.on("snapshot", print)
        with pytest.raises(ValueError):
            WildcardSubscription("price", client).on("update", print)
        await client.close()

    run(scenario)
