"""Book depths (docs/protocol.md "`book` data"): 1, 5, 10, 25, 50 and "full" (the same stream as None),
each kept checksum-verified against a real relay (started by test/clients/python-channels.test.ts),
and a depth the relay does not offer refused before anything is sent. Grouped books ("Grouped books"):
a ``group`` step's book checksum-verified and equal to the full book summed by hand, a step the relay
does not offer refused before anything is sent."""

import asyncio

import pytest

from conftest import env, live_backoff, summed_by_hand, until
from market_relay import BOOK_GROUPS, connect
from market_relay.book import BOOK_DEPTHS, book_depth, book_group

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


@pytest.mark.parametrize("group", ["0.03", "0.0005", "0", "-0.05", ".05", 0.05, True, "0.05000000001"])
def test_a_group_the_relay_does_not_offer_is_refused(group):
    with pytest.raises(ValueError, match=r'group must be one of "0.001", "0.002", "0.005", "0.01"'):
        book_group(group)


def test_an_offered_group_in_any_spelling_is_the_relays():
    assert book_group("0.050") == "0.05" and book_group(None) is None
    assert [book_group(step) for step in BOOK_GROUPS] == list(BOOK_GROUPS)


def test_a_grouped_book_verified_against_a_relay_equals_the_full_book_summed_by_hand():
    url, market = env("MARKET_RELAY_URL"), env("MARKET_RELAY_MARKET")

    async def scenario():
        async with connect(url, backoff=FAST) as client:
            errors, resyncs = [], []
            client.on("error", errors.append)
            full = client.subscribe_book(market)
            grouped = client.subscribe_book(market, group="0.050")
            top = client.subscribe_book(market, depth=5, group="0.05")
            assert grouped is not full and grouped.group == "0.05" and client.subscribe_book(market, group="0.05") is grouped
            with pytest.raises(ValueError):
                client.subscribe_book(market, group="0.03")
            for book in (full, grouped, top):
                book.on("resync", resyncs.append)
            await until("a state on every stream", lambda: all(b.state is not None for b in (full, grouped, top)))
            start = grouped.seq

            # The streams of one poll carry its receive time: when both show the same poll, compare.
            def same_poll():
                if full.confirmed_at != grouped.confirmed_at or grouped.seq <= start:
                    return False
                bids, asks = summed_by_hand(full.state.bids, full.state.asks, "0.05")
                assert [list(level) for level in grouped.state.bids] == bids
                assert [list(level) for level in grouped.state.asks] == asks
                return True

            await until("a new poll on both streams, the grouped one the full one summed", same_poll)
            assert len(top.state.bids) <= 5 and len(top.state.asks) <= 5
            assert resyncs == [] and errors == []

    asyncio.run(scenario())
