"""Per-message work of the Python client: feeds prebuilt ``book`` frames (a snapshot, then updates with
their checksums; JSON lines in a file) to the client's frame handler, as its connection would, and
prints the CPU microseconds per message as JSON; and again through the connection's receive loop,
from a socket that has every frame ready (``us_per_message_received``). bench/client-messages.ts in the repository makes the
frames, times the JavaScript SDK on the same ones and runs this.

    python per_message.py FRAMES [--rounds 5] [--profile]

Each round is a fresh client fed every frame; the best round's CPU time counts (the machine may be
shared: CPU time does not count the time other processes had the processor).
``--profile`` prints cProfile's view of one more round instead.
"""

import argparse
import asyncio
import cProfile
import json
import logging
import pstats
import sys
import time
from pathlib import Path

try:
    import market_relay  # noqa: F401 - installed
except ImportError:  # run from a checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from websockets.exceptions import ConnectionClosed  # noqa: E402

import market_relay.connection  # noqa: E402
from market_relay import Backoff, ClientOptions, RelayClient  # noqa: E402

#: Nothing listens there: the client's connection attempt fails once and then waits out this backoff.
NOWHERE = "ws://127.0.0.1:9/v1/ws"
ASLEEP = Backoff(base=3600, maximum=3600)


async def one_round(frames, market, profile=None):
    client = RelayClient(NOWHERE, ClientOptions(backoff=ASLEEP))
    book = client.subscribe_book(market)
    updates = 0

    def count(_change):
        nonlocal updates
        updates += 1

    book.on("update", count)  # as the JavaScript side does: counted, not kept
    handle = client.connection_frame
    if profile is not None:
        profile.enable()
    started = time.process_time()
    for frame in frames:
        handle(frame)
    elapsed = time.process_time() - started
    if profile is not None:
        profile.disable()
    if book.status != "live" or updates != len(frames) - 1:
        raise SystemExit(f"the client did not apply every frame: status {book.status}, {updates} updates")
    await client.close()
    return elapsed, book.state


class ReadySocket:
    """A connection with every frame already received: what ``open_socket`` gives in the second
    measure. It notes the CPU time from the first receive to the end of the frames."""

    transport = None

    def __init__(self, frames):
        self._frames = iter(frames)
        self.started = self.ended = None

    async def recv(self):
        if self.started is None:
            self.started = time.process_time()
        try:
            return next(self._frames)
        except StopIteration:
            self.ended = time.process_time()
            raise ConnectionClosed(None, None) from None

    async def send(self, text):
        pass

    async def close(self):
        pass


async def received_round(frames, market):
    sockets = []

    async def open_ready(url, headers, open_timeout):
        sockets.append(ReadySocket(frames))
        return sockets[-1]

    market_relay.connection.open_socket = open_ready
    client = RelayClient(NOWHERE, ClientOptions(backoff=ASLEEP))
    book = client.subscribe_book(market)
    closed = asyncio.Event()
    client.on("close", lambda _: closed.set())
    await closed.wait()
    if book.seq != len(frames):
        raise SystemExit(f"the client did not apply every frame through its connection: seq {book.seq}")
    await client.close()
    return sockets[0].ended - sockets[0].started


async def main():
    logging.getLogger("market_relay").setLevel(logging.ERROR)  # each round's end is a lost connection
    parser = argparse.ArgumentParser()
    parser.add_argument("frames")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    frames = Path(args.frames).read_text(encoding="utf-8").splitlines()
    market = json.loads(frames[0])["market"]
    if args.profile:
        profile = cProfile.Profile()
        await one_round(frames, market, profile)
        pstats.Stats(profile, stream=sys.stderr).sort_stats("tottime").print_stats(20)
        return
    best = min([(await one_round(frames, market))[0] for _ in range(args.rounds)])
    _, state = await one_round(frames, market)
    received = min([await received_round(frames, market) for _ in range(args.rounds)])
    print(json.dumps({
        "messages": len(frames),
        "us_per_message": best / len(frames) * 1e6,
        "us_per_message_received": received / len(frames) * 1e6,
        "final": {"bids": [list(level) for level in state.bids], "asks": [list(level) for level in state.asks]},
    }))


if __name__ == "__main__":
    asyncio.run(main())
