"""Several relay URLs (started by test/clients/python-failover.test.ts: two relays of one cluster over
Redis): when the first relay is stopped, the client continues on the second and resumes its streams
there, ``recovered`` true, with no snapshot and no gap."""

import asyncio
import urllib.request

from conftest import env, live_backoff, until
from market_relay import connect
from market_relay.transport import relay_socket_url

FAST = live_backoff()


def stop_first_relay(control: str) -> None:
    request = urllib.request.Request(f"{control}/stop-first", method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200


def test_continues_on_the_second_relay_with_recovered_true():
    urls, control, market = env("MARKET_RELAY_URLS").split(","), env("MARKET_RELAY_CONTROL"), env("MARKET_RELAY_MARKET")

    async def scenario():
        async with connect(urls, backoff=FAST) as client:
            opened, resumed, resyncs, snapshots, updates = [], [], [], [], []
            client.on("open", opened.append)
            book = client.subscribe_book(market, depth=10)
            price = client.subscribe_price(market)
            for stream in (book, price):
                stream.on("resumed", resumed.append)
                stream.on("resync", resyncs.append)
                stream.on("snapshot", snapshots.append)
            book.on("update", updates.append)
            await until("5 book updates from the first relay", lambda: len(updates) >= 5)
            assert [event.url for event in opened] == [relay_socket_url(urls[0])]

            await asyncio.get_running_loop().run_in_executor(None, stop_first_relay, control)
            await until("a connection to the second relay", lambda: len(opened) == 2)
            assert opened[1].url == relay_socket_url(urls[1]) and opened[1].reconnect
            await until("both streams resumed", lambda: len(resumed) == 2)
            before = len(updates)
            await until("5 book updates from the second relay", lambda: len(updates) >= before + 5)

        assert resumed == [True, True]
        assert len(snapshots) == 2 and resyncs == []  # one snapshot per stream, at the start
        seqs = [change.message["seq"] for change in updates]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), f"a gap in {seqs}"

    asyncio.run(scenario())
