"""A backtest's input: replays the last ``--minutes`` of a market's full book from a relay that records
(docs/history.md in the repository) as fast as the connection drains, printing the best bid and ask
after each recorded message (each book verified against its checksum, as a live one is) and saying
where the record has a hole.

    python examples/replay_book.py MARKET_ID [--minutes 10] [RELAY_URL]
"""

import argparse
import asyncio
from datetime import datetime, timedelta, timezone

from market_relay import BookState, ReplayGap, ReplayMessage, ReplayResync, connect


async def main(market: str, minutes: int, relay_url: str) -> None:
    start = datetime.now(timezone.utc) - timedelta(minutes=minutes)
    async with await connect(relay_url, timeout=10) as client:
        async with client.replay("book", [market], start, speed="max") as replay:
            async for item in replay:
                if isinstance(item, ReplayMessage):
                    book: BookState = item.state
                    print(item.message["rts"], item.message["seq"], book.best_bid, book.best_ask)
                elif isinstance(item, ReplayGap):
                    print(f"no record from {item.gap['from']} to {item.gap['to']} ({item.gap.get('reason', '?')})")
                elif isinstance(item, ReplayResync):
                    print(f"the record lost continuity ({item.reason}): {item.detail}")
        if replay.result is not None:
            print(f"{replay.result['messages']} messages replayed")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("market")
    parser.add_argument("--minutes", type=int, default=10)
    parser.add_argument("relay", nargs="?", default="http://127.0.0.1:8080")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.market, arguments.minutes, arguments.relay))
