"""A small bot: prints the best bid and ask of a market's depth-10 book on every change, and stops
(here: exits) as soon as the data is not live, so it never acts on a stale book.

    python examples/best_bid_ask.py [--market MARKET_ID] [RELAY_URL ...]

Relay URLs default to http://127.0.0.1:8080 (``npm start``); several are tried in turn when one is
gone. Without ``--market`` it picks the first ACTIVE market of the first relay's catalogue.
"""

import argparse
import asyncio
import json
import urllib.request
from typing import List
from urllib.parse import urlsplit

from market_relay import StatusChange, connect


def first_active_market(relay_url: str) -> str:
    parts = urlsplit(relay_url if "://" in relay_url else f"http://{relay_url}")
    scheme = "https" if parts.scheme in ("https", "wss") else "http"
    with urllib.request.urlopen(f"{scheme}://{parts.netloc}/status/markets") as response:
        markets = json.load(response)["markets"]
    return str(next(market["id"] for market in markets if market["status"] == "ACTIVE"))


async def main(market: str, relay_urls: List[str]) -> None:
    stopped = asyncio.Event()
    client = await connect(relay_urls, timeout=10)  # ConnectTimeout if no relay answers in 10 s
    async with client:
        client.on("reconnecting", lambda event: print(f"reconnecting to {event.url} in {event.delay:.2f} s"))
        book = client.subscribe_book(market, depth=10)

        def on_status(change: StatusChange) -> None:
            if change.status in ("stale", "closed"):
                print(f"book {change.status} ({change.reason}): stopping")
                stopped.set()

        book.on("status", on_status)
        book.on("resync", lambda resync: print(f"resync: {resync.reason}"))

        async def quote() -> None:
            top = None
            async for state in book:  # the latest verified book; a slow loop skips states
                bid, ask = state.best_bid, state.best_ask
                if (bid, ask) == top:
                    continue
                top = (bid, ask)
                spread = ask.as_decimals()[0] - bid.as_decimals()[0] if bid and ask else None
                print(f"seq {book.seq}: bid {bid.price if bid else '-'} x {bid.size if bid else '-'}"
                      f" | ask {ask.price if ask else '-'} x {ask.size if ask else '-'} | spread {spread}")

        quoting = asyncio.ensure_future(quote())
        await stopped.wait()
        quoting.cancel()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="best bid and ask of a market, until the data is not live")
    parser.add_argument("--market", help="market UUID (default: the first active one)")
    parser.add_argument("urls", nargs="*", default=["http://127.0.0.1:8080"], help="relay URLs")
    args = parser.parse_args()
    asyncio.run(main(args.market or first_active_market(args.urls[0]), args.urls))
