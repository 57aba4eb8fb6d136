"""Book depths (docs/protocol.md "`book` data"): 1, 5, 10, 25, 50 and "full" (the same stream as None),
each kept checksum-verified against a real relay (started by test/clients/python-channels.test.ts),
and a depth the relay does not offer refused before anything is sent."""

import asyncio

import pytest

from conftest import env, live_backoff, until
from market_relay import connect
from market_relay.book import BOOK_DEPTHS, book_depth

FAST = live_backoff()



@pytest.mark.parametrize("depth", [7, 0, "10", 1000, True, 10.0, "FULL"])
def test_a_depth_the_relay_does_not_offer_is_refused(depth):
    with pytest.raises(ValueError, match=r"depth must be 1, 5, 10, 25, 50, 'full' or None"):
        book_depth(depth)


def test_full_and_none_are_the_full_book():
    assert book_depth("full") is None and book_depth(None) is None
    assert [book_depth(depth) for depth in BOOK_DEPTHS] == [1, 5, 10, 25, 50]


def test_every_depth_verified_against_a_relay():
    url, market = env("MARKET_RELAY_URL"), env("MARKET_RELAY_MARKET")

    async def scenario():
        async with connect(url, backoff=FAST) as client:
            errors, resyncs = [], []
            client.on("error", errors.append)
            full = client.subscribe_book(market, depth="full")
            assert client.subscribe_book(market) is full and full.depth is None
            with pytest.raises(ValueError):
                client.subscribe_book(market, depth=7)
            books = [full] + [client.subscribe_book(market, depth=depth) for depth in (1, 5, 10, 25, 50)]
            for book in books:
                book.on("resync", resyncs.append)
            await until("a state on every depth", lambda: all(book.state is not None for book in books))
            seqs = {book.depth: book.seq for book in books}
            # The full book moves on every tick; the shallow ones only when their levels do.
            await until("three updates of the full book", lambda: full.seq >= seqs[None] + 3)
            for book in books[1:]:
                assert len(book.state.bids) <= book.depth and len(book.state.asks) <= book.depth
            assert [book.status for book in books] == ["live"] * len(books)
            assert resyncs == [] and errors == []

    asyncio.run(scenario())
