"""Wildcard subscriptions against a scripted relay: each market the relay announces becomes a stream
(not one held by name), a market that leaves ends its stream, a market the relay could not join is
reported, and after a reconnect the ``"*"`` comes back with the resume points of its streams, which
the first announcement resumes."""

import asyncio

from market_relay import connect
from test_client_fake_relay import FAST, MARKET, OTHER, ScriptedRelay
from test_live_relay import until

THIRD = "0c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f"


def price_snapshot(market, seq, epoch="e1"):
    return {"type": "snapshot", "channel": "price", "market": market, "epoch": epoch, "seq": seq,
            "ts": "2026-01-01T00:00:00.000Z", "rts": "2026-01-01T00:00:00.000Z", "data": {"best_bid": "0.52"}}


def announcement(kind, markets, **extra):
    return {"type": kind, "channel": "price", "markets": markets, "wildcard": True, **extra}


def test_a_wildcard_follows_the_relays_announcements_and_resumes_after_a_reconnect():
    async def scenario():
        relay = ScriptedRelay()
        await relay.start()
        try:
            async with connect(relay.url, backoff=FAST) as client:
                named = client.subscribe_price(OTHER)
                every = client.subscribe_all("price")
                assert client.subscribe_all("price") is every
                added, removed, errors = [], [], []
                every.on("added", added.append)
                every.on("removed", removed.append)
                every.on("error", errors.append)
                await until("both subscribes", lambda: len(relay.requests) == 2)
                assert {"op": "subscribe", "channel": "price", "markets": ["*"], "id": 2} in relay.requests
                wildcard_id = next(r["id"] for r in relay.requests if r["markets"] == ["*"])
                await relay.send({"type": "subscribed", "id": wildcard_id, "channel": "price", "markets": ["*"]})
                await relay.send(announcement("subscribed", [MARKET, OTHER]))
                await relay.send(price_snapshot(MARKET, 4))
                await until("the announced market's state", lambda: added and added[0].stream.state is not None)
                assert [a.market for a in added] == [MARKET]  # OTHER stays the application's own
                stream = added[0].stream
                assert list(every.streams) == [MARKET] and stream.state == {"best_bid": "0.52"}

                await relay.send({"type": "error", "code": "limit_exceeded", "message": "no room", "channel": "price", "market": THIRD})
                await relay.send(announcement("unsubscribed", [MARKET]))
                await until("the market removed", lambda: removed)
                assert removed[0].stream is stream and stream.status == "closed" and every.streams == {}
                assert [e.code for e in errors] == ["limit_exceeded"]

                await relay.send(announcement("subscribed", [MARKET]))
                await until("the market back", lambda: len(added) == 2)
                again = added[1].stream
                await relay.send(price_snapshot(MARKET, 5))
                await until("its state", lambda: again.seq == 5)

                before = len(relay.requests)
                await relay.connections[-1].close()
                await until("subscribes after the reconnect", lambda: len(relay.requests) >= before + 2)
                after = relay.requests[before:]
                star = next(r for r in after if r["markets"] == ["*"])
                assert star["resume"] == {MARKET: {"epoch": "e1", "seq": 5}}
                assert [r["markets"] for r in after if r["markets"] != ["*"]] == [[OTHER]]  # only the named one
                resumed = []
                again.on("resumed", resumed.append)
                await relay.send(announcement("subscribed", [MARKET], recovered={MARKET: True}))
                await until("the stream resumed", lambda: resumed == [True])
                assert again.status == "live" and len(added) == 2 and named.status != "closed"

                every.unsubscribe()
                await until("the wildcard unsubscribed", lambda: relay.requests[-1]["op"] == "unsubscribe")
                assert relay.requests[-1]["markets"] == ["*"] and again.status == "closed"
                assert client.subscribe_all("price") is not every
        finally:
            await relay.close()

    asyncio.run(scenario())


def test_a_wildcard_on_a_channel_without_one_is_refused_at_once():
    async def scenario():
        relay = ScriptedRelay()
        await relay.start()
        try:
            async with connect(relay.url, backoff=FAST) as client:
                for channel in ("book", "orders", "candles", "rest"):
                    try:
                        client.subscribe_all(channel)
                    except ValueError:
                        continue
                    raise AssertionError(f"{channel} accepted a wildcard")
        finally:
            await relay.close()

    asyncio.run(scenario())
