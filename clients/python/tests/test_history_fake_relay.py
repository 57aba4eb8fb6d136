"""The client's record reading against a scripted relay speaking docs/protocol.md "History and
replay": ``since`` on every channel's subscribe and the ``subscribed`` reply's ``history`` on the
stream; ``client.replay(...)`` yielding each message with the book after it (checksums verified at
each step), a ``replay_gap`` as an item, the end at ``replayed``, a bad checksum caught as a resync
item, ``replay_stop`` on leaving the loop, a refusal raised from the loop, and bad options refused
before anything is sent."""

import asyncio
from datetime import datetime, timedelta, timezone

import pytest

from market_relay import (
    RelayClientError,
    ReplayGap,
    ReplayMessage,
    ReplayResync,
    apply_book_update,
    book_checksum,
    book_from_snapshot,
    connect,
)
from test_client_fake_relay import FAST, MARKET, OTHER, ScriptedRelay
from test_live_relay import until

SINCE = "2026-03-02T13:00:00Z"
STAMP = {"ts": "2026-03-02T14:05:09.120Z", "rts": "2026-03-02T14:05:09.171Z"}
FIRST = {"bids": [["0.52000000", "150"], ["0.51000000", "20.5"]], "asks": [["0.53000000", "75.25"]], "last_price": "0.52000000"}
CHANGES = [
    {"bids": [["0.52000000", "140"]], "asks": []},
    {"bids": [], "asks": [["0.54000000", "10"]]},
    {"bids": [["0.51000000", "0"]], "asks": [], "last_price": "0.53000000"},
]


def states():
    """The book after each message: the snapshot's, then each change applied in turn."""
    books = [book_from_snapshot(FIRST)]
    for change in CHANGES:
        books.append(apply_book_update(books[-1], change))
    return books


def book_messages(replay_id, market=MARKET):
    envelope = {"channel": "book", "market": market, "depth": None, "epoch": "e1", **STAMP, "replay": replay_id}
    books = states()
    messages = [{"type": "snapshot", **envelope, "seq": 10, "data": FIRST, "checksum": book_checksum(books[0])}]
    for index, change in enumerate(CHANGES):
        messages.append(
            {"type": "update", **envelope, "seq": 11 + index, "data": change, "checksum": book_checksum(books[index + 1])}
        )
    return messages


def run(scenario):
    async def main():
        relay = ScriptedRelay()
        await relay.start()
        try:
            async with connect(relay.url, backoff=FAST) as client:
                await scenario(relay, client)
        finally:
            await relay.close()

    asyncio.run(main())


async def replay_request(relay, n=0):
    await until(f"replay request #{n}", lambda: len([r for r in relay.requests if r.get("op") == "replay"]) > n)
    return [r for r in relay.requests if r.get("op") == "replay"][n]


def test_since_goes_out_on_every_channel_and_history_reaches_the_stream():
    async def scenario(relay, client):
        at = datetime(2026, 3, 2, 13, 0, tzinfo=timezone.utc)
        book = client.subscribe_book(MARKET, depth=10, since=SINCE)
        client.subscribe_price(MARKET, since=at)
        client.subscribe_market(MARKET, since=SINCE)
        client.subscribe_orders(MARKET, since=SINCE)
        client.subscribe_probabilities(since=SINCE)
        client.subscribe_markets("active", since=SINCE)
        client.subscribe_oracle("0x" + "ab" * 32, since=SINCE)
        recent = datetime.now(timezone.utc) - timedelta(minutes=1)
        client.subscribe_trades(MARKET, since=recent)
        await until("the subscribes", lambda: len(relay.requests) >= 8)
        sent = {request["channel"]: request.get("since") for request in relay.requests}
        assert sent == {
            "book": SINCE,
            "price": "2026-03-02T13:00:00.000Z",
            "market": SINCE,
            "orders": SINCE,
            "probabilities": SINCE,
            "markets": SINCE,
            "oracle": SINCE,
            "trades": recent.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        }
        request = next(r for r in relay.requests if r["channel"] == "book")
        coverage = {"from": "2026-03-02T13:20:00.000Z", "complete": False}
        seen_at_snapshot = []
        book.on("snapshot", lambda change: seen_at_snapshot.append(book.history))
        await relay.send({"type": "subscribed", "id": request["id"], "channel": "book", "markets": [MARKET],
                          "depth": 10, "since": SINCE, "history": coverage})
        state = book_from_snapshot(FIRST)
        await relay.send({"type": "snapshot", "channel": "book", "market": MARKET, "depth": 10, "epoch": "e1", "seq": 1,
                          **STAMP, "data": FIRST, "checksum": book_checksum(state)})
        await until("the snapshot", lambda: book.status == "live")
        assert book.history == coverage and seen_at_snapshot == [coverage]
        assert client.subscribe_price(OTHER).history is None

    run(scenario)


def test_since_the_relay_would_refuse_raises_before_sending():
    async def scenario(relay, client):
        future = datetime.now(timezone.utc) + timedelta(hours=1)
        for bad in ("2026-03-02 13:00", "yesterday", future, datetime(2026, 3, 2, 13, 0)):
            with pytest.raises(ValueError, match="since"):
                client.subscribe_book(MARKET, since=bad)
        with pytest.raises(ValueError, match="since"):
            client.subscribe_market(MARKET, since="an-activity-id")
        await asyncio.sleep(0)
        assert relay.requests == []

    run(scenario)


def test_replay_yields_each_book_a_gap_and_ends_at_replayed():
    async def scenario(relay, client):
        replay = client.replay("book", [MARKET], "2026-03-02T14:00:00Z", "2026-03-02T15:00:00Z", speed="max")
        request = await replay_request(relay)
        assert request == {"op": "replay", "id": replay.id, "channel": "book", "markets": [MARKET],
                           "from": "2026-03-02T14:00:00Z", "to": "2026-03-02T15:00:00Z", "speed": "max", "depth": None}
        snapshot, *updates = book_messages(replay.id)
        for message in [snapshot, updates[0]]:
            await relay.send(message)
        await relay.send({"type": "replay_gap", "id": replay.id, "channel": "book", "market": MARKET,
                          "from": "2026-03-02T14:10:00Z", "to": "2026-03-02T14:12:00Z", "reason": "relay_down"})
        for message in updates[1:]:
            await relay.send(message)
        await relay.send({"type": "replayed", "id": replay.id, "messages": 4})
        seen, books = [], []
        async for item in replay:
            if isinstance(item, ReplayMessage):
                seen.append(f"{item.message['type']} {item.message['seq']}")
                books.append(item.state)
                assert item.stream.seq == item.message["seq"]
                assert book_checksum(item.state) == item.message["checksum"]
            else:
                assert isinstance(item, ReplayGap) and item.gap["reason"] == "relay_down"
                seen.append(item.type)
        assert seen == ["snapshot 10", "update 11", "gap", "update 12", "update 13"]
        assert books == states()
        assert replay.result == {"type": "replayed", "id": replay.id, "messages": 4}
        assert [r for r in relay.requests if r.get("op") == "replay_stop"] == []

    run(scenario)


def test_replay_catches_a_bad_checksum_and_waits_for_the_next_snapshot():
    async def scenario(relay, client):
        replay = client.replay("book", [MARKET], "2026-03-02T14:00:00Z")
        await replay_request(relay)
        snapshot, good, bad, after = book_messages(replay.id)
        for message in [snapshot, good, {**bad, "checksum": (bad["checksum"] + 1) % 2**32}, after, {**snapshot, "seq": 20}]:
            await relay.send(message)
        await relay.send({"type": "replayed", "id": replay.id, "messages": 5})
        items, last = [], None
        async for item in replay:
            if isinstance(item, ReplayResync):
                items.append(f"resync {item.reason}")
                assert last == states()[1]
            else:
                items.append(f"{item.message['type']} {item.message['seq']}")
                last = item.state
        assert items == ["snapshot 10", "update 11", "resync checksum", "snapshot 20"]

    run(scenario)


def test_replay_keeps_each_market_in_its_own_book():
    async def scenario(relay, client):
        replay = client.replay("book", [MARKET, OTHER], "2026-03-02T14:00:00Z")
        await replay_request(relay)
        mine, theirs = book_messages(replay.id), book_messages(replay.id, OTHER)
        for message in [mine[0], theirs[0], mine[1], theirs[1]]:
            await relay.send(message)
        await relay.send({"type": "replayed", "id": replay.id, "messages": 4})
        books = [(item.market, item.state) async for item in replay]
        books_after = states()
        assert books == [(MARKET, books_after[0]), (OTHER, books_after[0]), (MARKET, books_after[1]), (OTHER, books_after[1])]

    run(scenario)


def test_leaving_the_loop_sends_replay_stop():
    async def scenario(relay, client):
        async with client.replay("book", [MARKET], "2026-03-02T14:00:00Z") as replay:
            await replay_request(relay)
            for message in book_messages(replay.id):
                await relay.send(message)
            async for item in replay:
                assert item.type == "message"
                break
        await until("replay_stop", lambda: any(r.get("op") == "replay_stop" for r in relay.requests))
        assert relay.requests[-1] == {"op": "replay_stop", "id": replay.id}
        # A bare loop left early stops too, once its generator is closed.
        second = client.replay("book", [MARKET], "2026-03-02T14:00:00Z")
        await replay_request(relay, 1)
        await relay.send(book_messages(second.id)[0])
        async for _item in second:
            break
        await until("the second replay_stop", lambda: relay.requests[-1] == {"op": "replay_stop", "id": second.id})
        # The relay's closing word after a stop reaches nothing.
        await relay.send({"type": "replayed", "id": second.id, "messages": 1, "stopped": True})

    run(scenario)


def test_a_refusal_and_a_lost_connection_raise_from_the_loop():
    async def scenario(relay, client):
        refused = client.replay("book", [MARKET], "2026-03-02T14:00:00Z")
        await replay_request(relay)
        await relay.send({"type": "error", "id": refused.id, "code": "limit_exceeded", "message": "at most 2 replays"})
        with pytest.raises(RelayClientError) as raised:
            async for _item in refused:
                pass
        assert raised.value.code == "limit_exceeded" and raised.value.request_id == refused.id

        cut = client.replay("book", [MARKET], "2026-03-02T14:00:00Z")
        await replay_request(relay, 1)
        await relay.send(book_messages(cut.id)[0])
        await until("the snapshot to arrive", lambda: len(cut._queue) == 1)
        await relay.connections[-1].close()
        kinds = []
        with pytest.raises(RelayClientError) as lost:
            async for item in cut:
                kinds.append(item.type)
        assert lost.value.code == "connection_failed" and kinds == ["message"]

    run(scenario)


def test_bad_replay_options_raise_before_sending():
    async def scenario(relay, client):
        start = "2026-03-02T14:00:00Z"
        for kwargs in (
            {"markets": [MARKET], "from_": "2026-03-02 14:00"},
            {"markets": [MARKET], "from_": start, "to": start},
            {"markets": [MARKET], "from_": start, "speed": 0},
            {"markets": [MARKET], "from_": start, "speed": -1},
            {"markets": [MARKET], "from_": start, "speed": "fast"},
            {"markets": [], "from_": start},
            {"markets": ["not-a-uuid"], "from_": start},
        ):
            with pytest.raises(ValueError):
                client.replay("book", **kwargs)
        with pytest.raises(ValueError):
            client.replay("price", [MARKET], start, depth=10)
        await asyncio.sleep(0)
        assert relay.requests == []

    run(scenario)


def test_history_checks_its_query_before_fetching():
    async def scenario(relay, client):
        for kwargs in ({"from_": "yesterday"}, {"from_": "2026-03-02T14:00:00Z", "to": "2026-03-02T13:00:00Z"}):
            with pytest.raises(ValueError):
                client.history("book", MARKET, **kwargs)
        with pytest.raises(ValueError):
            client.history("price", MARKET, "2026-03-02T14:00:00Z", depth=10)
        # No relay answers HTTP here: the export's URL is still the relay's origin.
        from market_relay.history import history_url

        url = history_url("wss://relay.example/v1/ws", "book", MARKET, SINCE, depth=10)
        assert url == (f"https://relay.example/v1/history/book?market={MARKET}&from=2026-03-02T13%3A00%3A00Z"
                       "&depth=10&format=ndjson")

    run(scenario)


def test_a_replay_asked_of_a_closed_client_ends_at_once():
    async def scenario(relay, client):
        await client.close()
        replay = client.replay("book", [MARKET], "2026-03-02T14:00:00Z")
        with pytest.raises(RelayClientError) as ended:
            async for _item in replay:
                pass
        assert ended.value.code == "connection_failed"

    run(scenario)
