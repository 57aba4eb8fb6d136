"""The shapes of every channel's state and of the relay's ``list`` answer, as ``TypedDict`` and
``NamedTuple`` types for mypy, named as the JavaScript SDK names them (packages/protocol/src/protocol/
channel-data.ts, messages.ts and each channel's folder; docs/protocol.md, one section per channel).

At run time they are the plain ``dict`` and ``tuple`` objects the client builds from the relay's JSON:
decimal strings stay strings, JSON numbers are ``int`` or ``Decimal`` (never ``float``). A record of
upstream's whose fields the protocol does not fix (``market``, ``markets``, ``rest``) is a mapping of
``JsonValue``.
"""

from __future__ import annotations

from collections import OrderedDict
from decimal import Decimal
from typing import Dict, List, Literal, NamedTuple, Optional, Tuple, TypedDict, Union

#: A JSON value as the client reads it: numbers with a fraction as ``Decimal``, never ``float``.
JsonValue = Union[None, bool, int, Decimal, str, List["JsonValue"], Dict[str, "JsonValue"]]
#: A JSON number as the client reads it.
Number = Union[int, Decimal]


class PriceData(TypedDict, total=False):
    """``price``: upstream's decimal strings; a field upstream omits is absent."""

    best_bid: str
    best_ask: str
    midpoint_price: str
    last_price: str
    spread: str


class TradeEntry(TypedDict):
    """``trades``: upstream's market activity entry, unchanged."""

    activity_id: str
    activity_type: str
    price: str
    size: str
    total_value: str
    activity_timestamp: str


#: ``trades``: the 50 most recent entries, oldest first.
TradesState = Tuple[TradeEntry, ...]

#: ``market``: upstream's market detail record, each field with upstream's type.
MarketData = Dict[str, JsonValue]


class ProbabilityEntry(TypedDict):
    """``probabilities``: upstream's probability entry of one market (numbers, as upstream sends them)."""

    midpoint: Number
    best_bid: Number
    best_ask: Number
    last_trade_price: Number
    timestamp: str


#: ``probabilities``: every market's entry, keyed by market UUID.
ProbabilitiesData = Dict[str, ProbabilityEntry]


class OracleData(TypedDict):
    """``oracle``: one feed's latest parsed price (``raw_price`` x 10^``expo`` is exact; ``price`` is
    upstream's number of it)."""

    feed_id: str
    price: Number
    raw_price: str
    expo: int
    publish_time: int


class OrderEntry(TypedDict):
    """``orders``: one upstream order entry, unchanged."""

    id: str
    price: str
    size: str
    token_id: int


class OrderMapState(NamedTuple):
    """``orders``: per side, order id -> entry, in the order the stream delivered them (a tuple
    ``(bids, asks)`` too)."""

    bids: "OrderedDict[str, OrderEntry]"
    asks: "OrderedDict[str, OrderEntry]"


#: ``markets``: one market's list-form record, each field with upstream's type.
MarketListRecord = Dict[str, JsonValue]
#: ``markets``: the catalogue, market UUID -> list-form record.
MarketsData = Dict[str, MarketListRecord]


class ProbabilityCandle(TypedDict):
    """A ``candles`` candle of source ``probability``: numbers, as upstream serves them."""

    start: str
    final: bool
    open: Number
    high: Number
    low: Number
    close: Number


class TradesCandle(TypedDict):
    """A ``candles`` candle of source ``trades``: prices and ``volume`` as exact decimal strings."""

    start: str
    final: bool
    open: str
    high: str
    low: str
    close: str
    volume: str
    trades: int


Candle = Union[ProbabilityCandle, TradesCandle]
#: ``candles``: the 200 most recent candles, oldest first.
CandlesState = Tuple[Candle, ...]


class CandlesStream(NamedTuple):
    """What a ``candles`` stream id names (a tuple ``(market, interval, source)`` too)."""

    market: str
    interval: str
    source: str


#: A stream's freshness, as the relay's ``status`` messages name it.
StreamState = Literal["live", "stale", "closed"]


class _SubscriptionEntryFields(TypedDict):
    channel: str
    market: str
    #: The position of the last snapshot or update the relay sent this connection (None: none yet).
    epoch: Optional[str]
    seq: Optional[int]


class SubscriptionEntry(_SubscriptionEntryFields, total=False):
    """One stream the relay holds for this connection, or (``market`` ``"*"``) one of its wildcards."""

    #: ``book``: 1, 5, 10, 25, 50 or None (the full book).
    depth: Optional[int]
    interval: int
    threshold: str
    #: Absent on a wildcard's entry.
    status: StreamState
    wildcard: bool


class LimitUse(TypedDict):
    held: int
    allowed: int


class RequestRate(TypedDict):
    available: Number
    burst: int
    per_second: Number


class _ConnectionLimitsFields(TypedDict):
    streams: LimitUse
    channels: Dict[str, LimitUse]


class ConnectionLimits(_ConnectionLimitsFields, total=False):
    requests: RequestRate


class _SubscriptionsMessageFields(TypedDict):
    type: Literal["subscriptions"]
    subscriptions: List[SubscriptionEntry]
    limits: ConnectionLimits


class SubscriptionsMessage(_SubscriptionsMessageFields, total=False):
    """The relay's answer to ``list`` (docs/protocol.md "`list`"), what ``client.subscriptions()`` returns."""

    id: Union[int, str]


#: The ``subscribed`` reply's answer to a ``since`` (docs/protocol.md "History and replay"): ``from``,
#: where the answer starts (the asked time when complete), and ``complete``, False where the record
#: (or upstream's listing) starts later than asked. A ``TypedDict`` of its wire keys (``from`` is a
#: Python keyword, hence this form).
HistoryCoverage = TypedDict("HistoryCoverage", {"from": str, "complete": bool})

#: A hole in a replayed record: nothing was recorded of ``market`` between ``from`` and ``to``;
#: ``reason`` where the relay knows (``not_held``, ``relay_down``, ``stale``, ``epoch_changed``).
_ReplayGapFields = TypedDict(
    "_ReplayGapFields", {"type": Literal["replay_gap"], "id": str, "channel": str, "market": str, "from": str, "to": str}
)


class ReplayGapMessage(_ReplayGapFields, total=False):
    reason: str


class _ReplayedFields(TypedDict):
    type: Literal["replayed"]
    id: str
    messages: int


class ReplayedMessage(_ReplayedFields, total=False):
    """The end of a replay: ``messages`` stream messages were sent; ``stopped`` when ``replay_stop`` ended it."""

    stopped: bool
