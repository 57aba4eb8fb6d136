"""How each channel other than ``book`` rebuilds its state from a snapshot and updates.

Ports of the relay's pure cores (``packages/protocol/src/protocol/price.ts``, ``channel-state.ts``, ``order-map.ts``;
docs/protocol.md, one section per channel). Each field keeps upstream's type: decimal strings stay
strings, and numbers arrive as ``int`` or ``Decimal`` (the client parses JSON with
``parse_float=Decimal``), never as binary floats.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import Any, Dict, List, Mapping, Optional, cast

from .channel_data import MarketListRecord, MarketsData, OrderEntry, OrderMapState, PriceData, TradeEntry, TradesState

#: The channels of protocol version 1 and this relay's additions.
CHANNELS = frozenset({"book", "price", "trades", "market", "probabilities", "oracle", "orders", "markets", "rest", "candles"})

#: ``trades``: a snapshot carries this many of the most recent entries, and a client keeps as many.
TRADES_SNAPSHOT_SIZE = 50

#: ``trades``: how many delivered ``activity_id`` values a subscription remembers.
TRADES_SEEN_IDS = 1000

#: The ``probabilities`` channel's one stream.
PROBABILITIES_STREAM = "all"

PRICE_FIELDS = ("best_bid", "best_ask", "midpoint_price", "last_price", "spread")

_MARKET_ID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_FEED_ID = re.compile(r"^0x[0-9a-fA-F]{1,128}$")
#: ``markets`` stream ids: a catalogue status filter, optionally ``:`` and a token id.
_CATALOGUE = re.compile(r"^(all|active|expired|resolved)(?::([0-9]{1,9}))?$")
#: ``candles`` stream ids: ``<market>:<interval>:<source>``.
_CANDLES = re.compile(
    r"^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}):(1m|5m|1h|1d):(probability|trades)$"
)
CANDLE_INTERVALS = ("1m", "5m", "1h", "1d")
CANDLE_SOURCES = ("probability", "trades")
#: ``rest``: the longest path a subscription may name (docs/protocol.md "`rest` data").
MAX_REST_PATH_LENGTH = 512


class ChannelFormatError(ValueError):
    """A message's data is not its channel's shape."""


def canonical_stream_id(channel: str, stream_id: str) -> str:
    """The id in its one spelling (lower case), or ValueError when it is not an id of ``channel``."""
    if channel == "probabilities":
        if stream_id != PROBABILITIES_STREAM:
            raise ValueError(f'the probabilities channel has one stream: "{PROBABILITIES_STREAM}"')
        return stream_id
    if channel == "markets":
        return _catalogue_id(stream_id)
    if channel == "rest":
        if not isinstance(stream_id, str) or not stream_id.startswith("/") or len(stream_id) > MAX_REST_PATH_LENGTH:
            raise ValueError(f"rest: {stream_id!r} is not a path (starting with /, at most {MAX_REST_PATH_LENGTH} characters)")
        return stream_id
    if channel == "candles":
        match = _CANDLES.match(stream_id.lower()) if isinstance(stream_id, str) else None
        if match is None:
            raise ValueError(f"candles: {stream_id!r} is not <market UUID>:<{'|'.join(CANDLE_INTERVALS)}>:<{'|'.join(CANDLE_SOURCES)}>")
        return stream_id.lower()
    pattern, expected = (_FEED_ID, "an oracle feed id (0x and hex digits)") if channel == "oracle" else (
        _MARKET_ID,
        "a market UUID",
    )
    if not isinstance(stream_id, str) or not pattern.match(stream_id):
        raise ValueError(f"{channel}: {stream_id!r} is not {expected}")
    return stream_id.lower()


def catalogue_stream_id(status: str = "all", token: Optional[int] = None) -> str:
    """The ``markets`` stream of a catalogue filter: ``all``, ``active``, ``expired`` or ``resolved``,
    optionally only the markets of one token."""
    return _catalogue_id(status if token is None else f"{status}:{token}")


def _catalogue_id(stream_id: str) -> str:
    match = _CATALOGUE.match(stream_id) if isinstance(stream_id, str) else None
    if match is None:
        raise ValueError(f"markets: {stream_id!r} is not a catalogue filter (all, active, expired or resolved, optionally :token)")
    # One spelling: ``all:003`` and ``all:3`` are one stream.
    return match.group(1) if match.group(2) is None else f"{match.group(1)}:{int(match.group(2))}"


def markets_from_snapshot(raw: Any) -> MarketsData:
    """The catalogue: market id -> its list-form record."""
    data = _object(raw, "markets data")
    if not all(isinstance(record, dict) for record in data.values()):
        raise ChannelFormatError("markets data holds a record that is not an object")
    return dict(data)


def apply_markets_update(state: Mapping[str, MarketListRecord], raw: Any) -> MarketsData:
    """Each record the update carries replaces the market's whole; ``None`` removes the market."""
    next_state = dict(state)
    for market, record in _object(raw, "markets update").items():
        if record is None:
            next_state.pop(market, None)
        elif isinstance(record, dict):
            next_state[market] = record
        else:
            raise ChannelFormatError(f"markets update: {market} is neither a record nor null")
    return next_state


def _object(raw: Any, what: str) -> Dict[str, Any]:
    if not isinstance(raw, dict):
        raise ChannelFormatError(f"{what} is not an object")
    return raw


def price_from_snapshot(raw: Any) -> PriceData:
    data = _object(raw, "price data")
    return cast(PriceData, {field: data[field] for field in PRICE_FIELDS if isinstance(data.get(field), str)})


def apply_price_update(state: PriceData, raw: Any) -> PriceData:
    """Changed fields replace; ``None`` (JSON null) removes a field upstream stopped sending."""
    update = _object(raw, "price update")
    next_state: Dict[str, str] = {}
    for field in PRICE_FIELDS:
        value = update[field] if field in update else state.get(field)
        if isinstance(value, str):
            next_state[field] = value
    return cast(PriceData, next_state)


def _trades(raw: Any) -> List[TradeEntry]:
    trades = _object(raw, "trades data").get("trades")
    if not isinstance(trades, list) or not all(
        isinstance(trade, dict) and isinstance(trade.get("activity_id"), str) for trade in trades
    ):
        raise ChannelFormatError("trades is not a list of entries with an activity_id")
    return trades


def trades_from_snapshot(raw: Any) -> TradesState:
    return tuple(_trades(raw)[-TRADES_SNAPSHOT_SIZE:])


def new_trades(state: TradesState, raw: Any) -> List[TradeEntry]:
    """The update's entries the state does not hold yet (the relay sends each id once; this makes sure)."""
    held = {trade["activity_id"] for trade in state}
    return [trade for trade in _trades(raw) if trade["activity_id"] not in held]


def apply_trades_update(state: TradesState, raw: Any) -> TradesState:
    """The new entries after the known ones, oldest first, the most recent 50 kept."""
    fresh = new_trades(state, raw)
    return state if not fresh else (state + tuple(fresh))[-TRADES_SNAPSHOT_SIZE:]


def record_from_snapshot(raw: Any) -> Dict[str, Any]:
    return dict(_object(raw, "data"))


def apply_record_update(state: Mapping[str, Any], raw: Any) -> Dict[str, Any]:
    """``market`` and ``probabilities``: changed keys take their new value; ``None`` removes the key."""
    next_state = dict(state)
    for key, value in _object(raw, "update data").items():
        if value is None:
            next_state.pop(key, None)
        else:
            next_state[key] = value
    return next_state


def _orders(raw: Any, side: str) -> List[OrderEntry]:
    orders = raw.get(side, [])
    if not isinstance(orders, list) or not all(
        isinstance(order, dict) and isinstance(order.get("id"), str) for order in orders
    ):
        raise ChannelFormatError(f"orders {side} is not a list of entries with an id")
    return orders


def orders_from_snapshot(raw: Any) -> OrderMapState:
    """Each side keyed by id; an id upstream lists twice keeps its first entry, bids before asks."""
    data = _object(raw, "orders data")
    bids: "OrderedDict[str, OrderEntry]" = OrderedDict()
    asks: "OrderedDict[str, OrderEntry]" = OrderedDict()
    for order in _orders(data, "bids"):
        bids.setdefault(order["id"], order)
    for order in _orders(data, "asks"):
        if order["id"] not in bids:
            asks.setdefault(order["id"], order)
    return OrderMapState(bids, asks)


def apply_orders_update(state: OrderMapState, raw: Any) -> OrderMapState:
    """Removes first, then upserts in order: a known id on the same side is replaced where it stands,
    a known id on the other side moves there (appended), a new id is appended to its side."""
    update = _object(raw, "orders update")
    removes = update.get("removes", [])
    upserts = update.get("upserts", [])
    if not isinstance(removes, list) or not isinstance(upserts, list):
        raise ChannelFormatError("orders update needs removes and upserts lists")
    bids, asks = OrderedDict(state[0]), OrderedDict(state[1])
    for order_id in removes:
        bids.pop(order_id, None)
        asks.pop(order_id, None)
    for upsert in upserts:
        if not isinstance(upsert, dict) or upsert.get("side") not in ("bid", "ask") or not isinstance(
            upsert.get("id"), str
        ):
            raise ChannelFormatError(f"orders upsert {upsert!r} needs a side and an id")
        order = cast(OrderEntry, {key: value for key, value in upsert.items() if key != "side"})
        own, other = (bids, asks) if upsert["side"] == "bid" else (asks, bids)
        other.pop(order["id"], None)
        own[order["id"]] = order
    return OrderMapState(bids, asks)
