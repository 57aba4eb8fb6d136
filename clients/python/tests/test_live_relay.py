"""Against a real relay over the simulator (started by test/clients/python.test.ts): every channel
kept verified, the depth-10 book's states recorded for comparison with a JavaScript client's at the
same seq, and a resume with no gap after the connection is cut."""

import asyncio
import importlib.util
import json
import os
from decimal import Decimal
from pathlib import Path
from urllib.parse import urlsplit

import market_relay
from conftest import DEADLINE, env, live_backoff, until
from market_relay import connect
from relay_proxy import CuttableProxy

FAST = live_backoff()
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"



def no_floats(value):
    if isinstance(value, float):
        return False
    if isinstance(value, dict):
        return all(no_floats(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(no_floats(v) for v in value)
    return True


def test_the_client_under_test_is_the_installed_one():
    if os.environ.get("MARKET_RELAY_EXPECT_INSTALLED"):
        assert "site-packages" in Path(market_relay.__file__).parts


def test_depth_10_book_recorded_with_every_checksum_verified():
    url, market, record = env("MARKET_RELAY_URL"), env("MARKET_RELAY_MARKET"), env("MARKET_RELAY_BOOK_RECORD")

    async def scenario():
        async with connect(url, backoff=FAST) as client:
            book = client.subscribe_book(market, depth=10)
            states, resyncs = [], []
            book.on("resync", resyncs.append)
            for event in ("snapshot", "update"):
                book.on(event, lambda change: states.append(change))
            await until("25 verified book states", lambda: len(states) >= 25)
        assert resyncs == []
        seqs = [change.message["seq"] for change in states]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), "every message applied and verified, none skipped"
        assert all(len(change.state.bids) <= 10 and len(change.state.asks) <= 10 for change in states)
        with open(record, "w", encoding="utf-8") as out:
            for change in states:
                line = {
                    "epoch": change.message["epoch"],
                    "seq": change.message["seq"],
                    "checksum": change.message["checksum"],
                    "bids": [list(level) for level in change.state.bids],
                    "asks": [list(level) for level in change.state.asks],
                }
                out.write(json.dumps(line) + "\n")

    asyncio.run(scenario())


def test_every_channel_live_and_exact():
    url, market = env("MARKET_RELAY_URL"), env("MARKET_RELAY_MARKET")

    async def scenario():
        async with connect(url, backoff=FAST) as client:
            errors = []
            client.on("error", errors.append)
            record = client.subscribe_market(market)
            await record.wait_for_state(DEADLINE)
            streams = [
                client.subscribe_book(market),
                client.subscribe_price(market),
                client.subscribe_trades(market),
                record,
                client.subscribe_probabilities(),
                client.subscribe_oracle(record.state["oracle_feed_id"]),
                client.subscribe_orders(market),
            ]
            resyncs = []
            for stream in streams:
                stream.on("resync", resyncs.append)
            await until("a state on every channel", lambda: all(s.state is not None for s in streams))
            updated = {s.channel: s.seq for s in streams}
            await until(
                "updates on book, orders and probabilities",
                lambda: all(s.seq > updated[s.channel] for s in streams if s.channel in ("book", "orders", "probabilities")),
            )
            # markets, rest and candles: test_live_channels.py.
            channels = [s.channel for s in streams] + ["candles", "markets", "rest"]
            assert sorted(channels) == sorted(market_relay.channels.CHANNELS)
            assert [s.status for s in streams] == ["live"] * len(streams)
            assert resyncs == [] and errors == []
            for stream in streams:
                assert no_floats(stream.state), f"{stream.channel} holds a float"
            entry = next(iter(streams[4].state.values()))
            assert isinstance(entry["midpoint"], (Decimal, int))  # upstream's numbers, exact

    asyncio.run(scenario())


def test_resumes_with_no_gap_after_the_connection_is_cut():
    url, market = env("MARKET_RELAY_URL"), env("MARKET_RELAY_MARKET")
    relay = urlsplit(url)

    async def scenario():
        proxy = CuttableProxy(relay.hostname, relay.port)
        await proxy.start()
        try:
            async with connect(f"ws://127.0.0.1:{proxy.port}/v1/ws", backoff=FAST) as client:
                book = client.subscribe_book(market, depth=10)
                price = client.subscribe_price(market)
                snapshots, updates, resyncs, resumed = [], [], [], []
                book.on("snapshot", snapshots.append)
                book.on("update", updates.append)
                book.on("resync", resyncs.append)
                book.on("resumed", resumed.append)
                price.on("resync", resyncs.append)
                price.on("resumed", resumed.append)
                statuses = []
                book.on("status", lambda change: statuses.append(change.status))
                await until("5 book updates", lambda: len(updates) >= 5)
                before = len(updates)
                proxy.cut()
                await until("the book stale", lambda: "stale" in statuses)
                await until("a second connection", lambda: proxy.connections >= 2)
                await until("both streams resumed", lambda: len(resumed) == 2)
                await until("5 more book updates", lambda: len(updates) >= before + 5)
            assert resumed == [True, True]
            assert len(snapshots) == 1 and resyncs == []
            seqs = [change.message["seq"] for change in updates]
            assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), f"a gap in {seqs}"
            assert seqs[0] == snapshots[0].message["seq"] + 1
        finally:
            await proxy.close()

    asyncio.run(scenario())


def test_the_example_bot_quotes_then_stops_when_the_book_goes_stale(capsys):
    url, market = env("MARKET_RELAY_URL"), env("MARKET_RELAY_MARKET")
    relay = urlsplit(url)
    spec = importlib.util.spec_from_file_location("best_bid_ask", EXAMPLES / "best_bid_ask.py")
    bot = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bot)
    printed = []

    def output():
        printed.append(capsys.readouterr().out)
        return "".join(printed)

    async def scenario():
        proxy = CuttableProxy(relay.hostname, relay.port)
        await proxy.start()
        try:
            running = asyncio.ensure_future(bot.main(market, [f"ws://127.0.0.1:{proxy.port}/v1/ws"]))
            await until("the bot's first quote", lambda: "| ask " in output())
            await proxy.close()  # the relay is unreachable from now on: the book goes stale
            await asyncio.wait_for(running, DEADLINE)
        finally:
            await proxy.close()

    asyncio.run(scenario())
    assert "book stale (connection lost): stopping" in output()


def test_book_moves_depth_in_place_and_the_relay_lists_it():
    url, market = env("MARKET_RELAY_URL"), env("MARKET_RELAY_MARKET")

    async def scenario():
        async with connect(url, backoff=FAST) as client:
            book = client.subscribe_book(market, depth=10)
            await until("the depth-10 snapshot", lambda: book.state is not None and book.status == "live")
            resyncs = []
            book.on("resync", resyncs.append)
            await book.update(50)
            assert book.depth == 50
            await until("the depth-50 book", lambda: book.status == "live" and len(book.state.bids) > 10)
            listed = await client.subscriptions()
            assert listed["type"] == "subscriptions"
            assert [(e["channel"], e["market"], e["depth"]) for e in listed["subscriptions"]] == [("book", market, 50)]
            assert listed["limits"]["streams"]["held"] == 1
            try:
                await book.update(7)
            except ValueError:
                pass  # at once, as subscribe_book refuses it: nothing is asked of the relay
            else:
                raise AssertionError("a depth the relay does not have was accepted")
            assert book.depth == 50 and resyncs == []
            listed = await client.subscriptions()
            assert [e["depth"] for e in listed["subscriptions"]] == [50]

    asyncio.run(scenario())
