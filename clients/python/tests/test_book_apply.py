"""The two ways a book side takes changes agree: a few placed one by one by binary search (an update),
many by rebuilding the side (a snapshot); both keep the last change to a price, compare prices as
decimals (``0.5`` and ``0.50`` are one price, the change's text kept) and drop size ``"0"``."""

import asyncio
import random

from market_relay import book_checksum, book_from_snapshot
from market_relay.book import FEW_CHANGES, BookState, Level, _apply_side, _place_each, apply_book_update
from market_relay.streams import BookSubscription
from test_stream_state import MARKET, RecordingHost, book_message


def rebuilt(levels, changes, descending):
    # The many-changes path, whatever the count: pad with changes that change nothing.
    padding = [Level("99", "0")] * (FEW_CHANGES + 1)
    return _apply_side(levels, list(changes) + padding, descending)


def test_placing_each_change_agrees_with_rebuilding_the_side():
    rng = random.Random(35)
    spellings = lambda ticks: [f"0.{ticks:04d}", f"0.{ticks:04d}0000", f"0.{ticks:04d}00"]
    for _ in range(400):
        descending = rng.random() < 0.5
        prices = sorted(rng.sample(range(1, 9999), rng.randrange(0, 40)), reverse=descending)
        levels = tuple(Level(rng.choice(spellings(p)), str(rng.randrange(1, 99))) for p in prices)
        changes = []
        for _ in range(rng.randrange(1, FEW_CHANGES + 1)):
            ticks = rng.choice(prices) if prices and rng.random() < 0.6 else rng.randrange(1, 9999)
            changes.append(Level(rng.choice(spellings(ticks)), rng.choice(["0", "5", "12.50"])))
        assert _place_each(levels, changes, descending) == rebuilt(levels, changes, descending)


def test_an_update_replaces_a_price_written_otherwise_with_its_own_text():
    book = BookState(bids=(Level("0.50", "1"), Level("0.4", "2")), asks=(Level("0.6", "3"),))
    after = apply_book_update(book, {"bids": [["0.5000", "7"], ["0.40", "0"]], "asks": [["0.55", "1"], ["0.55", "0"]]})
    assert after == BookState(bids=(Level("0.5000", "7"),), asks=(Level("0.6", "3"),))


def test_a_wrong_checksum_is_caught_also_when_the_25_best_levels_did_not_change():
    async def scenario():
        host = RecordingHost()
        book = BookSubscription(host, MARKET, None)
        deep = {"bids": [[f"0.{4000 - i}", "1"] for i in range(40)], "asks": [[f"0.{6000 + i}", "1"] for i in range(40)]}
        state = book_from_snapshot(deep)
        book.receive(book_message("snapshot", 1, deep, state))
        below = {"bids": [["0.3970", "9"]], "asks": []}  # the 31st bid
        after = apply_book_update(state, below)
        assert book_checksum(after) == book_checksum(state)
        book.receive(book_message("update", 2, below, after))
        assert book.seq == 2 and book.status == "live"
        wrong = dict(book_message("update", 3, {"bids": [["0.3969", "9"]], "asks": []}, after), checksum=12345)
        book.receive(wrong)
        assert book.status == "resyncing" and host.snapshots_requested == 1

    asyncio.run(scenario())
