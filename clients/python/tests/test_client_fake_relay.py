"""The client against a scripted relay (no simulator): a gap resynchronises the stream with a fresh
subscribe, subscriptions made together go as one request, a relay refusing the key ends the client,
and an unreachable first URL is passed over for the next."""

import asyncio
import json
import socket

import websockets

from market_relay import BookState, Backoff, RelayClientError, book_checksum, book_from_snapshot, connect
from test_live_relay import until

FAST = Backoff(base=0.01, maximum=0.05, going_away_spread=0.01)
MARKET = "3f2b8c1e-5d4a-4e6b-9c7d-1a2b3c4d5e6f"
OTHER = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
DATA = {"bids": [["0.52000000", "150"]], "asks": [["0.53000000", "75.25"]]}


class ScriptedRelay:
    """A WebSocket server that records each client request and lets the test send any message."""

    def __init__(self):
        self.requests = []
        self.connections = []
        self._server = None
        self.url = ""

    async def start(self):
        self._server = await websockets.serve(self._handle, "127.0.0.1", 0)
        self.url = f"ws://127.0.0.1:{self._server.sockets[0].getsockname()[1]}/v1/ws"

    async def _handle(self, connection, path=None):
        self.connections.append(connection)
        try:
            async for text in connection:
                self.requests.append(json.loads(text))
        except websockets.exceptions.ConnectionClosed:
            pass

    async def send(self, message):
        await self.connections[-1].send(json.dumps(message))

    async def close(self):
        self._server.close()
        await self._server.wait_closed()


def book_message(kind, seq, data, state, epoch="e1"):
    return {"type": kind, "channel": "book", "market": MARKET, "depth": 10, "epoch": epoch, "seq": seq,
            "ts": "2026-01-01T00:00:00.000Z", "rts": "2026-01-01T00:00:00.000Z", "data": data,
            "checksum": book_checksum(state)}


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_gap_is_resynchronised_with_a_fresh_subscribe_without_resume():
    async def scenario():
        relay = ScriptedRelay()
        await relay.start()
        try:
            async with connect(relay.url, backoff=FAST) as client:
                book = client.subscribe_book(MARKET, depth=10)
                resyncs = []
                book.on("resync", resyncs.append)
                await until("the subscribe", lambda: len(relay.requests) == 1)
                assert relay.requests[0] == {"op": "subscribe", "channel": "book", "markets": [MARKET], "depth": 10, "id": 1}
                state = book_from_snapshot(DATA)
                await relay.send(book_message("snapshot", 1, DATA, state))
                await relay.send(book_message("update", 3, {"bids": [], "asks": []}, state))
                await until("a second subscribe", lambda: len(relay.requests) == 2)
                assert [r.reason for r in resyncs] == ["gap"] and book.status == "resyncing"
                assert "resume" not in relay.requests[1] and relay.requests[1]["markets"] == [MARKET]
                await relay.send(book_message("snapshot", 9, {"bids": [], "asks": []}, BookState()))
                await until("the book live again", lambda: book.status == "live")
                assert book.seq == 9 and book.state == BookState()
        finally:
            await relay.close()

    asyncio.run(scenario())


def test_subscriptions_made_together_go_as_one_request_per_channel_and_depth():
    async def scenario():
        relay = ScriptedRelay()
        await relay.start()
        try:
            async with connect(relay.url, backoff=FAST) as client:
                await until("the connection", lambda: client.status == "open")
                client.subscribe_book(MARKET, depth=10)
                client.subscribe_book(OTHER.upper(), depth=10)
                client.subscribe_book(MARKET)
                client.subscribe_price(MARKET)
                assert client.subscribe_price(MARKET) is client.subscribe_price(MARKET.upper())
                await until("the subscribes", lambda: len(relay.requests) == 3)
                shapes = {(r["channel"], r.get("depth", "none"), tuple(r["markets"])) for r in relay.requests}
                assert shapes == {("book", None, (MARKET,)), ("book", 10, (MARKET, OTHER)), ("price", "none", (MARKET,))}
        finally:
            await relay.close()

    asyncio.run(scenario())


def test_an_unknown_market_error_closes_its_stream():
    async def scenario():
        relay = ScriptedRelay()
        await relay.start()
        try:
            async with connect(relay.url, backoff=FAST) as client:
                price = client.subscribe_price(MARKET)
                errors = []
                price.on("error", errors.append)
                await until("the subscribe", lambda: len(relay.requests) == 1)
                await relay.send({"type": "error", "code": "unknown_market", "message": "no such market",
                                  "channel": "price", "market": MARKET})
                await until("the stream closed", lambda: price.status == "closed")
                assert [e.code for e in errors] == ["unknown_market"] and client.streams == []
        finally:
            await relay.close()

    asyncio.run(scenario())


def test_waiting_for_the_state_of_an_unknown_market_raises_unknown_market():
    async def scenario():
        relay = ScriptedRelay()
        await relay.start()
        try:
            async with connect(relay.url, backoff=FAST) as client:
                price = client.subscribe_price(MARKET)
                waiting = asyncio.ensure_future(price.wait_for_state(5))
                await until("the subscribe", lambda: len(relay.requests) == 1)
                await relay.send({"type": "error", "code": "unknown_market", "message": "no such market",
                                  "channel": "price", "market": MARKET, "id": relay.requests[0]["id"]})
                try:
                    await waiting
                except RelayClientError as error:
                    assert error.code == "unknown_market" and error.market == MARKET
                    assert isinstance(error.__cause__, RelayClientError) and error.__cause__.code == "unknown_market"
                    assert price.ended_by is error.__cause__
                else:
                    raise AssertionError("wait_for_state returned for an unknown market")
        finally:
            await relay.close()

    asyncio.run(scenario())


def test_book_update_refuses_a_depth_it_does_not_have_before_asking_the_relay():
    async def scenario():
        relay = ScriptedRelay()
        await relay.start()
        try:
            async with connect(relay.url, backoff=FAST) as client:
                book = client.subscribe_book(MARKET, depth=10)
                await until("the subscribe", lambda: len(relay.requests) == 1)
                for depth in (7, 0, True, 10.0, "10"):
                    try:
                        await book.update(depth)
                    except ValueError as error:
                        assert "depth must be" in str(error)
                    else:
                        raise AssertionError(f"depth {depth!r} was accepted")
                # A request sent after them arrives second: none of them sent anything.
                asking = asyncio.ensure_future(client.subscriptions())
                await until("the list request", lambda: len(relay.requests) == 2)
                asking.cancel()
                assert [r["op"] for r in relay.requests] == ["subscribe", "list"] and book.depth == 10
        finally:
            await relay.close()

    asyncio.run(scenario())


def test_markets_answers_the_catalogues_records_as_the_javascript_sdk_does():
    record = {"market_id": MARKET, "status": "ACTIVE", "volume": "12.5"}

    async def scenario():
        relay = ScriptedRelay()
        await relay.start()
        try:
            async with connect(relay.url, backoff=FAST) as client:
                answer = asyncio.ensure_future(client.markets("active", timeout=5))
                await until("the subscribe", lambda: len(relay.requests) == 1)
                await relay.send({"type": "snapshot", "channel": "markets", "market": "active", "epoch": "e1",
                                  "seq": 1, "data": {MARKET: record}})
                catalogue = await answer
                assert catalogue == [record] and client.subscribe_markets("active").state == {MARKET: record}
        finally:
            await relay.close()

    asyncio.run(scenario())


def test_a_relay_that_sends_nothing_for_dead_after_is_left_and_reconnected_to():
    async def scenario():
        relay = ScriptedRelay()
        await relay.start()
        try:
            async with connect(relay.url, backoff=FAST, dead_after=0.3) as client:
                closes, opens = [], []
                client.on("close", closes.append)
                client.on("open", opens.append)
                await until("the connection", lambda: client.status == "open")
                await relay.send({"type": "heartbeat"})  # a message puts the deadline off
                await until("a second connection", lambda: any(o.reconnect for o in opens))
                assert closes[0].reason == "no message for 0.3 s" and closes[0].will_reconnect
                assert len(relay.connections) == 2
        finally:
            await relay.close()

    asyncio.run(scenario())


def test_an_unreachable_first_url_is_passed_over_for_the_next():
    async def scenario():
        relay = ScriptedRelay()
        await relay.start()
        try:
            gone = f"ws://127.0.0.1:{free_port()}/v1/ws"
            async with connect([gone, relay.url], backoff=FAST) as client:
                failures = []
                client.on("error", failures.append)
                await until("a connection to the second relay", lambda: client.status == "open")
                assert client.url == relay.url and [e.code for e in failures] == ["connection_failed"]
        finally:
            await relay.close()

    asyncio.run(scenario())


def test_a_relay_refusing_the_key_ends_the_client():
    async def answer_401(reader, writer):
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        await writer.drain()
        writer.close()

    async def scenario():
        server = await asyncio.start_server(answer_401, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            client = connect(f"http://127.0.0.1:{port}", api_key="wrong", backoff=FAST)
            errors = []
            client.on("error", errors.append)
            book = client.subscribe_book(MARKET)
            await until("the client closed", lambda: client.status == "closed")
            assert [e.code for e in errors] == ["refused"] and book.status == "closed"
            await client.close()
        finally:
            server.close()
            await server.wait_closed()

    asyncio.run(scenario())
