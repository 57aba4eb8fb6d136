"""Per-message work of the Python client: feeds prebuilt ``book`` frames (a snapshot, then updates with
their checksums; JSON lines in a file) to the client's frame handler, as its connection would, and
prints the microseconds per message as JSON. bench/client-messages.ts in the repository makes the
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
import pstats
import sys
import time
from pathlib import Path

try:
    import market_relay  # noqa: F401 - installed
except ImportError:  # run from a checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from market_relay import Backoff, ClientOptions, RelayClient  # noqa: E402

#: Nothing listens there: the client's connection attempt fails once and then waits out this backoff.
NOWHERE = "ws://127.0.0.1:9/v1/ws"
ASLEEP = Backoff(base=3600, maximum=3600)


async def one_round(frames, market, profile=None):
    client = RelayClient(NOWHERE, ClientOptions(backoff=ASLEEP))
    book = client.subscribe_book(market)
    updates = []
    book.on("update", updates.append)
    handle = client.connection_frame
    if profile is not None:
        profile.enable()
    started = time.process_time()
    for frame in frames:
        handle(frame)
    elapsed = time.process_time() - started
    if profile is not None:
        profile.disable()
    if book.status != "live" or len(updates) != len(frames) - 1:
        raise SystemExit(f"the client did not apply every frame: status {book.status}, {len(updates)} updates")
    await client.close()
    return elapsed, book.state


async def main():
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
    print(json.dumps({
        "messages": len(frames),
        "us_per_message": best / len(frames) * 1e6,
        "final": {"bids": [list(level) for level in state.bids], "asks": [list(level) for level in state.asks]},
    }))


if __name__ == "__main__":
    asyncio.run(main())
