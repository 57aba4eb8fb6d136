"""Against a real relay over the simulator (started by test/clients/python-channels.test.ts, which
confirms quiet streams every few tens of milliseconds): the catalogue, public paths as ``rest``
streams and candles, every message verified, numbers exact, and a quiet stream's ``confirmed_at``
advancing without updates."""

import asyncio
import json
from decimal import Decimal
from urllib.request import urlopen

from conftest import env
from market_relay import connect
from test_live_relay import DEADLINE, FAST, no_floats, until


def upstream_body(path):
    with urlopen(env("MARKET_RELAY_UPSTREAM") + path, timeout=DEADLINE) as response:
        return json.loads(response.read(), parse_float=Decimal)


def test_the_catalogue_holds_every_market_by_id_and_follows_it():
    url, market = env("MARKET_RELAY_URL"), env("MARKET_RELAY_MARKET")

    async def scenario():
        async with connect(url, backoff=FAST) as client:
            errors = []
            client.on("error", errors.append)
            records = await client.markets(timeout=DEADLINE)
            catalogue = client.subscribe_markets()
            assert catalogue is client.subscribe_markets("all")  # markets() keeps its subscription
            assert market in catalogue.state and catalogue.state[market]["market_id"] == market
            assert sorted(record["market_id"] for record in records) == sorted(catalogue.state)
            active = client.subscribe_markets("active")
            await active.wait_for_state(DEADLINE)
            assert set(active.state) <= set(catalogue.state)
            assert all(record["status"] == "ACTIVE" for record in active.state.values())
            first = catalogue.seq
            await until("a catalogue update", lambda: catalogue.seq > first)
            assert catalogue.status == "live" and no_floats(catalogue.state) and errors == []

    asyncio.run(scenario())


def test_public_paths_stay_verified_through_patches_in_the_relays_spelling():
    url, market = env("MARKET_RELAY_URL"), env("MARKET_RELAY_MARKET")

    async def scenario():
        async with connect(url, backoff=FAST) as client:
            errors, resyncs = [], []
            client.on("error", errors.append)
            holders = client.subscribe_rest(f"/api/markets/{market.upper()}/holders?limit=20&type=yes")
            orderbook = client.subscribe_rest(f"/clob/orderbook?market_id={market}")  # changes on every tick
            streams = [holders, orderbook]
            for stream in streams:
                stream.on("resync", resyncs.append)
            await until("both bodies", lambda: all(s.state is not None for s in streams))
            assert holders.path == f"/api/markets/{market}/holders?type=YES"
            assert client.subscribe_rest(holders.path) is holders
            assert holders.state["success"] is True and isinstance(holders.state["holders"], list)
            first = orderbook.seq
            await until("patches applied", lambda: orderbook.seq >= first + 3)
            assert [s.status for s in streams] == ["live", "live"] and resyncs == [] and errors == []
            assert all(no_floats(s.state) for s in streams)

            program = client.subscribe_rest("/api/rewards/program")  # a body that does not change
            await program.wait_for_state(DEADLINE)
            assert program.state == upstream_body(program.path)  # as upstream served it, exactly

    asyncio.run(scenario())


def test_candles_verified_and_a_quiet_stream_confirmed():
    url, market = env("MARKET_RELAY_URL"), env("MARKET_RELAY_MARKET")

    async def scenario():
        async with connect(url, backoff=FAST) as client:
            errors, resyncs = [], []
            client.on("error", errors.append)
            probability = client.subscribe_candles(market, "1m", "probability")
            trades = client.subscribe_candles(market.upper(), "1h", "trades")
            assert trades.market == f"{market}:1h:trades"
            for stream in (probability, trades):
                stream.on("resync", resyncs.append)
                await stream.wait_for_state(DEADLINE)
            first = probability.seq
            await until("a candles update", lambda: probability.seq > first)
            starts = [candle["start"] for candle in probability.state]
            assert starts == sorted(set(starts)) and probability.state[-1]["final"] is False
            assert isinstance(probability.state[-1]["close"], (Decimal, int)) and no_floats(trades.state)
            assert resyncs == [] and errors == []

            # Resolved markets: none in the simulator, so the stream never changes; upstream still
            # answers its polls, and the relay says so.
            quiet = client.subscribe_markets("resolved")
            confirmations = []
            quiet.on("confirmed", confirmations.append)
            await quiet.wait_for_state(DEADLINE)
            snapshot_seq, rts = quiet.seq, quiet.confirmed_at
            await until("two confirmations", lambda: len(confirmations) >= 2)
            assert quiet.seq == snapshot_seq and quiet.confirmed_at == confirmations[-1] > rts
            assert confirmations == sorted(set(confirmations))

    asyncio.run(scenario())


def test_a_wildcard_holds_every_active_market():
    url = env("MARKET_RELAY_URL")

    async def scenario():
        async with connect(url, backoff=FAST) as client:
            errors, added = [], []
            client.on("error", errors.append)
            active = client.subscribe_markets("active")
            every = client.subscribe_all("price")
            every.on("added", added.append)
            await active.wait_for_state(DEADLINE)
            await until(
                "a price stream with a state for each active market",
                lambda: set(every.streams) == set(active.state) and all(s.state is not None for s in every.streams.values()),
            )
            assert sorted(change.market for change in added) == sorted(active.state)
            assert all(s.status == "live" and s.channel == "price" for s in every.streams.values())
            assert all(isinstance(s.state.get("best_bid", ""), str) for s in every.streams.values()) and errors == []

    asyncio.run(scenario())
