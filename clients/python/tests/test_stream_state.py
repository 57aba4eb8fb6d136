"""A stream's state machine without a relay: snapshots and updates applied in seq order, checksums
verified, and a resync asked for on a gap, a checksum mismatch, another epoch or a bad message."""

import asyncio
from decimal import Decimal

from market_relay import BookState, book_checksum, book_from_snapshot, apply_book_update
from market_relay.backoff import Backoff, backoff_delay, reconnect_delay
from market_relay.channels import apply_orders_update, apply_price_update, canonical_stream_id, orders_from_snapshot
from market_relay.streams import BookSubscription, TradesSubscription
from market_relay.subscription import StreamHost

MARKET = "3f2b8c1e-5d4a-4e6b-9c7d-1a2b3c4d5e6f"
SNAPSHOT = {"bids": [["0.52000000", "150"], ["0.51000000", "20.5"]], "asks": [["0.53000000", "75.25"]]}


class RecordingHost(StreamHost):
    def __init__(self):
        self.snapshots_requested = 0
        self.listener_errors = []

    def request_snapshot(self, stream):
        self.snapshots_requested += 1

    def release(self, stream):
        pass

    def report_listener_error(self, error):
        self.listener_errors.append(error)


def book_message(kind, seq, data, state_after, epoch="e1"):
    return {"type": kind, "channel": "book", "market": MARKET, "depth": 10, "epoch": epoch, "seq": seq,
            "data": data, "checksum": book_checksum(state_after)}


def run(scenario):
    return asyncio.run(scenario())


def test_updates_apply_in_order_and_gaps_epochs_and_bad_checksums_resync():
    async def scenario():
        host = RecordingHost()
        book = BookSubscription(host, MARKET, 10)
        resyncs = []
        book.on("resync", resyncs.append)
        state = book_from_snapshot(SNAPSHOT)
        book.receive(book_message("snapshot", 41, SNAPSHOT, state))
        assert book.status == "live" and book.seq == 41 and book.state == state

        change = {"bids": [["0.51000000", "0"]], "asks": []}
        after = apply_book_update(state, change)
        book.receive(book_message("update", 42, change, after))
        assert book.seq == 42 and book.state == after
        book.receive(book_message("update", 42, change, after))  # an old message: ignored
        assert resyncs == []

        book.receive(book_message("update", 44, change, after))
        assert [r.reason for r in resyncs] == ["gap"] and book.status == "resyncing"
        assert host.snapshots_requested == 1 and book.state == after  # the last verified state stays
        assert book.resume_point is None
        book.receive(book_message("update", 45, change, after))  # dropped while resyncing
        assert book.seq == 42

        book.receive(book_message("snapshot", 50, SNAPSHOT, state))
        assert book.status == "live" and book.seq == 50
        wrong = book_message("update", 51, change, after)
        wrong["checksum"] += 1
        book.receive(wrong)
        assert resyncs[-1].reason == "checksum" and book.seq == 50

        book.receive(book_message("snapshot", 52, SNAPSHOT, state))
        book.receive(book_message("update", 53, change, after, epoch="e2"))
        assert resyncs[-1].reason == "epoch"

        book.receive(book_message("snapshot", 7, SNAPSHOT, state, epoch="e2"))
        book.receive(book_message("update", 8, {"bids": [["not a price", "1"]], "asks": []}, after, epoch="e2"))
        assert resyncs[-1].reason == "malformed" and host.snapshots_requested == 4

    run(scenario)


def test_a_snapshot_in_a_new_epoch_is_reported_and_replaces_the_state():
    async def scenario():
        book = BookSubscription(RecordingHost(), MARKET, None)
        resyncs = []
        book.on("resync", resyncs.append)
        state = book_from_snapshot(SNAPSHOT)
        book.receive(book_message("snapshot", 3, SNAPSHOT, state))
        book.receive(book_message("snapshot", 1, {"bids": [], "asks": []}, BookState(), epoch="e9"))
        assert [r.reason for r in resyncs] == ["epoch"] and book.state == BookState() and book.epoch == "e9"

    run(scenario)


def test_the_iterator_yields_the_latest_verified_state_and_ends_when_closed():
    async def scenario():
        book = BookSubscription(RecordingHost(), MARKET, 10)
        seen = []

        async def consume():
            async for state in book:
                seen.append(state)

        consumer = asyncio.ensure_future(consume())
        await asyncio.sleep(0)
        state = book_from_snapshot(SNAPSHOT)
        book.receive(book_message("snapshot", 1, SNAPSHOT, state))
        await asyncio.sleep(0)
        book.end("done")
        await asyncio.wait_for(consumer, 1)
        assert seen == [state] and book.status == "closed"

    run(scenario)


def test_a_listener_that_raises_is_reported_not_propagated():
    async def scenario():
        host = RecordingHost()
        book = BookSubscription(host, MARKET, 10)

        def broken(_):
            raise RuntimeError("listener bug")

        book.on("snapshot", broken)
        book.receive(book_message("snapshot", 1, SNAPSHOT, book_from_snapshot(SNAPSHOT)))
        assert book.status == "live" and [str(e) for e in host.listener_errors] == ["listener bug"]

    run(scenario)


def test_trades_are_announced_once_across_epochs():
    async def scenario():
        trades = TradesSubscription(RecordingHost(), MARKET)
        announced = []
        trades.on("trade", lambda trade: announced.append(trade["activity_id"]))

        def message(kind, seq, ids, epoch):
            return {"type": kind, "channel": "trades", "market": MARKET, "epoch": epoch, "seq": seq,
                    "data": {"trades": [{"activity_id": i, "price": "0.5", "size": "1"} for i in ids]}}

        trades.receive(message("snapshot", 1, ["a", "b"], "e1"))
        trades.receive(message("update", 2, ["c"], "e1"))
        trades.receive(message("snapshot", 1, ["b", "c", "d"], "e2"))  # a relay restart repeats b and c
        assert announced == ["a", "b", "c", "d"]
        assert [t["activity_id"] for t in trades.state] == ["b", "c", "d"]

    run(scenario)


def test_price_and_orders_updates():
    assert apply_price_update({"best_bid": "0.5", "spread": "0.1"}, {"best_bid": "0.6", "spread": None}) == {
        "best_bid": "0.6"
    }
    bids, asks = orders_from_snapshot(
        {"bids": [{"id": "o1", "price": "0.5", "size": "1"}, {"id": "o2", "price": "0.4", "size": "2"}],
         "asks": [{"id": "o3", "price": "0.6", "size": "3"}]}
    )
    bids, asks = apply_orders_update(
        (bids, asks),
        {"removes": ["o2"], "upserts": [{"side": "bid", "id": "o1", "price": "0.5", "size": "0.5"},
                                        {"side": "bid", "id": "o3", "price": "0.55", "size": "3"}]},
    )
    assert list(bids) == ["o1", "o3"] and bids["o1"]["size"] == "0.5" and list(asks) == []


def test_stream_ids_are_checked_and_lower_cased():
    assert canonical_stream_id("book", MARKET.upper()) == MARKET
    assert canonical_stream_id("oracle", "0xABC") == "0xabc"
    for channel, bad in (("book", "not-a-uuid"), ("oracle", "abc"), ("probabilities", "ALL")):
        try:
            canonical_stream_id(channel, bad)
        except ValueError:
            continue
        raise AssertionError(f"{channel} accepted {bad!r}")


def test_backoff_is_full_jitter_capped_and_spread_after_going_away():
    policy = Backoff(base=0.5, maximum=30.0, going_away_spread=5.0)
    assert backoff_delay(0, policy, lambda: 0.999) < 0.5
    assert backoff_delay(3, policy, lambda: 0.5) == 2.0
    assert backoff_delay(40, policy, lambda: 0.5) == 15.0
    assert reconnect_delay(0, 1001, policy, lambda: 0.5) == 2.5
    assert reconnect_delay(1, 1001, policy, lambda: 0.5) == 0.5


def test_levels_convert_to_exact_decimals():
    level = book_from_snapshot(SNAPSHOT).bids[1]
    assert level.as_decimals() == (Decimal("0.51"), Decimal("20.5"))
