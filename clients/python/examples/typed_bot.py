"""A bot that touches every channel and every reply of the client with its types, so that
``mypy --strict`` checks them all (the repository's suite runs it over this file):

    python examples/typed_bot.py [--seconds 10] [RELAY_URL ...]

For ``--seconds`` it follows the first active market of the relay's catalogue on every channel,
printing one line per event, then prints what the relay holds for the connection and stops. Relay
URLs default to http://127.0.0.1:8080 (``npm start``).
"""

import argparse
import asyncio
import logging
from decimal import Decimal
from typing import List, Optional

from market_relay import (
    BookState,
    CandlesState,
    Closed,
    MarketClosed,
    MarketData,
    MarketListRecord,
    MarketsData,
    OracleData,
    OrderMapState,
    PriceData,
    ProbabilitiesData,
    Reconnecting,
    RelayClient,
    RelayClientError,
    Resync,
    StatusChange,
    StreamChange,
    SubscriptionsMessage,
    TradeEntry,
    TradesState,
    WildcardChange,
    WildcardRemoved,
    connect,
)


def describe_book(book: BookState) -> str:
    bid, ask = book.best_bid, book.best_ask
    spread: Optional[Decimal] = ask.as_decimals()[0] - bid.as_decimals()[0] if bid and ask else None
    return f"book {bid.price if bid else '-'} / {ask.price if ask else '-'} (spread {spread})"


def describe_price(price: PriceData) -> str:
    return f"price bid {price.get('best_bid', '-')} ask {price.get('best_ask', '-')} mid {price.get('midpoint_price', '-')}"


def describe_trade(trade: TradeEntry) -> str:
    return f"trade {trade['activity_id']}: {trade['size']} @ {trade['price']} at {trade['activity_timestamp']}"


def describe_orders(orders: OrderMapState) -> str:
    return f"orders {len(orders.bids)} bids, {len(orders.asks)} asks"


def describe_candles(candles: CandlesState) -> str:
    if not candles:
        return "no candles yet"
    last = candles[-1]
    return f"candle {last['start']} close {last['close']} ({'final' if last['final'] else 'open'})"


def describe_listing(listing: SubscriptionsMessage) -> List[str]:
    lines = [f"the relay holds {listing['limits']['streams']['held']} of {listing['limits']['streams']['allowed']} streams"]
    for entry in listing["subscriptions"]:
        position = f"{entry['epoch']}/{entry['seq']}" if entry["seq"] is not None else "nothing sent yet"
        depth = f" depth {entry.get('depth') or 'full'}" if entry["channel"] == "book" else ""
        lines.append(f"  {entry['channel']} {entry['market']}{depth}: {position}, {entry.get('status', '-')}")
    return lines


async def follow(client: RelayClient, seconds: float) -> None:
    records: List[MarketListRecord] = await client.markets("active", timeout=10)
    market_id = str(records[0]["market_id"])
    catalogue: MarketsData = await client.subscribe_markets("active").wait_for_state(10)
    print(f"{len(catalogue)} active markets; following {market_id}")

    book = client.subscribe_book(market_id, depth=10)
    book.on("update", lambda change: print(describe_book(change.state)))

    def on_resync(resync: Resync) -> None:
        print(f"book resync ({resync.reason}): {resync.detail}")

    book.on("resync", on_resync)
    price = client.subscribe_price(market_id, threshold="0.01")
    price.on("snapshot", lambda change: print(describe_price(change.state)))

    def on_status(change: StatusChange) -> None:
        print(f"price is {change.status} ({change.reason})")

    price.on("status", on_status)
    trades = client.subscribe_trades(market_id)
    market = client.subscribe_market(market_id)

    def on_closed(closed: MarketClosed) -> None:
        print(f"market {closed.status}: {closed.state.get('title')}")

    market.on("closed", on_closed)
    probabilities = client.subscribe_probabilities(interval=5_000)
    orders = client.subscribe_orders(market_id)
    positions = client.subscribe_rest(f"/api/markets/{market_id}/holders?type=YES")
    minutes = client.subscribe_candles(market_id, "1m", "probability")
    prints = client.subscribe_candles(market_id, "5m", "trades")
    every_price = client.subscribe_all("price")

    def on_added(added: WildcardChange) -> None:
        print(f"wildcard added {added.market} ({added.stream.channel})")

    def on_removed(removed: WildcardRemoved) -> None:
        print(f"wildcard removed {removed.market}: {removed.reason}")

    every_price.on("added", on_added)
    every_price.on("removed", on_removed)

    record: MarketData = await market.wait_for_state(10)
    feed_id = record.get("oracle_feed_id")
    if isinstance(feed_id, str):
        oracle_state: OracleData = await client.subscribe_oracle(feed_id).wait_for_state(10)
        print(f"oracle {oracle_state['raw_price']} x 10^{oracle_state['expo']}")

    async def tape() -> None:
        async for trade in trades.trades():  # every trade once, typed TradeEntry
            print(describe_trade(trade))

    async def changes() -> None:
        async for change in book.changes():  # every verified change, none skipped
            message: StreamChange = change
            print(f"book seq {message.message['seq']}")

    tasks = [asyncio.ensure_future(job()) for job in (tape, changes)]
    await asyncio.sleep(seconds)
    for task in tasks:
        task.cancel()

    await price.update(threshold=None, interval=1_000)
    await book.update(25)
    recent: Optional[TradesState] = trades.state
    chances: Optional[ProbabilitiesData] = probabilities.state
    held_orders: Optional[OrderMapState] = orders.state
    print(f"{len(recent or ())} recent trades, {len(chances or {})} markets' probabilities")
    if held_orders is not None:
        print(describe_orders(held_orders))
    for candles in (minutes.state, prints.state):
        print(describe_candles(candles or ()))
    print(f"holders body: {type(positions.state).__name__}; candles {minutes.candles.interval} {prints.candles.source}")
    print(f"the client holds {len(client.streams)} streams")
    for line in describe_listing(await client.subscriptions()):
        print(line)


async def main(urls: List[str], seconds: float) -> None:
    logging.basicConfig(level=logging.INFO)  # the client's stale / live lines among them
    client = await connect(urls, timeout=10)
    async with client:

        def on_close(closed: Closed) -> None:
            print(f"connection closed {closed.code}: {closed.reason}")

        def on_reconnecting(event: Reconnecting) -> None:
            print(f"reconnecting to {event.url} in {event.delay:.2f} s")

        def on_error(error: RelayClientError) -> None:
            print(f"error {error.code}: {error.message}")

        client.on("close", on_close)
        client.on("reconnecting", on_reconnecting)
        client.on("error", on_error)
        await follow(client, seconds)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="every channel of one market, for a while")
    parser.add_argument("--seconds", type=float, default=10.0, help="how long to follow the market")
    parser.add_argument("urls", nargs="*", default=["http://127.0.0.1:8080"], help="relay URLs")
    args = parser.parse_args()
    asyncio.run(main(args.urls, args.seconds))
