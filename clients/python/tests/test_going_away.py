"""A relay that drains (started by test/clients/python-failover.test.ts: relays of one cluster over
Redis, the first of the two URLs drained through the control endpoint): the client follows its
``going_away`` to the other relay at the moment the relay named, within the drain window, not at a
random moment of its own ``going_away_spread`` (a minute here), and resumes its streams there,
``recovered`` true, with no snapshot and no gap."""

import asyncio
import urllib.request

from conftest import env, until
from market_relay import Backoff, connect
from market_relay.transport import relay_socket_url

#: A reconnect at a random moment of a minute would fail the test: only the relay's moment passes.
IGNORING_THE_HINT_FAILS = Backoff(base=0.05, maximum=0.5, going_away_spread=60.0)


def drain_first_relay(control: str) -> None:
    request = urllib.request.Request(f"{control}/drain-third", method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200


def test_follows_going_away_to_the_other_relay_with_recovered_true():
    urls, control, market = env("MARKET_RELAY_URLS").split(","), env("MARKET_RELAY_CONTROL"), env("MARKET_RELAY_MARKET")
    drain_seconds = int(env("MARKET_RELAY_DRAIN_MS")) / 1000

    async def scenario():
        async with connect(urls, backoff=IGNORING_THE_HINT_FAILS) as client:
            opened, closed, resumed, resyncs, snapshots, updates = [], [], [], [], [], []
            client.on("open", opened.append)
            client.on("close", closed.append)
            book = client.subscribe_book(market, depth=10)
            price = client.subscribe_price(market)
            for stream in (book, price):
                stream.on("resumed", resumed.append)
                stream.on("resync", resyncs.append)
                stream.on("snapshot", snapshots.append)
            book.on("update", updates.append)
            await until("5 book updates from the draining relay", lambda: len(updates) >= 5)
            assert [event.url for event in opened] == [relay_socket_url(urls[0])]

            loop = asyncio.get_running_loop()
            started = loop.time()
            drained = loop.run_in_executor(None, drain_first_relay, control)
            await until("a connection to the other relay", lambda: len(opened) == 2, timeout=drain_seconds + 5)
            moved_after = loop.time() - started
            await drained
            assert opened[1].url == relay_socket_url(urls[1]) and opened[1].reconnect
            assert moved_after < drain_seconds + 2, f"moved {moved_after:.2f} s after the drain began"
            assert [event.code for event in closed] == [1001]
            await until("both streams resumed", lambda: len(resumed) == 2)
            before = len(updates)
            await until("5 book updates from the other relay", lambda: len(updates) >= before + 5)

        assert resumed == [True, True]
        assert len(snapshots) == 2 and resyncs == []  # one snapshot per stream, at the start
        seqs = [change.message["seq"] for change in updates]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), f"a gap in {seqs}"

    asyncio.run(scenario())
