"""The stream of each channel as the application holds it: its state, how a snapshot and an update make
it, and the events a channel adds (``trade`` on trades, ``closed`` on market). Sequencing, resync and
status are the base class's (``subscription.py``)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Dict, NamedTuple, Optional, Tuple, cast

from . import channels
from .book import (
    CHECKSUM_LEVELS,
    BookDepthOption,
    BookState,
    Level,
    apply_book_update,
    book_checksum,
    book_depth,
    book_from_snapshot,
)
from .channel_data import (
    MarketData,
    MarketsData,
    OracleData,
    OrderMapState,
    PriceData,
    ProbabilitiesData,
    TradeEntry,
    TradesState,
)
from .events import EventStream
from .requests import checked_interval, checked_threshold
from .subscription import StreamHost, StreamSubscription


class BookSubscription(StreamSubscription[BookState]):
    """A ``book`` stream: a verified ``BookState`` (decimal strings, best first) after every message."""

    channel = "book"

    def __init__(self, host: StreamHost, market: str, depth: Optional[int], group: Optional[str] = None) -> None:
        super().__init__(host, market)
        self.depth = depth
        self.group = group
        # The checksum covers the 25 best levels a side: the last ones computed and their checksum,
        # so that an update below them (most, on a deep book) costs two tuple comparisons.
        self._summed: Tuple[Tuple[Level, ...], Tuple[Level, ...], int] = ((), (), 0)

    async def update(self, depth: BookDepthOption) -> None:
        """Moves this stream to another depth at the relay, without unsubscribing: returns on the
        relay's ``subscribed`` (``depth`` is the new one then, the state rebuilt from its snapshot),
        raises ``RelayClientError`` with the relay's error (the book is left as it was). ``"full"``
        is the full book, as None; a depth ``subscribe_book`` would refuse raises ``ValueError``
        before anything is sent, as it does there."""
        await self._host.change_depth(self, book_depth(depth))

    def state_of(self, data: Any) -> BookState:
        return book_from_snapshot(data)

    def apply(self, state: BookState, data: Any) -> BookState:
        return apply_book_update(state, data)

    def verify(self, state: BookState, message: Dict[str, Any]) -> bool:
        bids, asks, checksum = self._summed
        top_bids, top_asks = state.bids[:CHECKSUM_LEVELS], state.asks[:CHECKSUM_LEVELS]
        if top_bids != bids or top_asks != asks:
            checksum = book_checksum(state)
            self._summed = (top_bids, top_asks, checksum)
        return checksum == message.get("checksum")


#: ``PriceSubscription.update``: an option not named is left as it is.
_LEAVE: Any = object()


class PriceSubscription(StreamSubscription[PriceData]):
    """A ``price`` stream: upstream's decimal strings per field; a field upstream omits is absent."""

    channel = "price"

    async def update(self, *, interval: Any = _LEAVE, threshold: Any = _LEAVE) -> None:
        """Changes this stream's ``interval`` and ``threshold`` at the relay in place: None clears one,
        one not named is left. Returns on the relay's ``subscribed``; raises ``RelayClientError`` with
        its error, and ``ValueError`` at once for a value the relay would refuse."""
        options: Dict[str, Any] = {}
        if interval is not _LEAVE:
            options["interval"] = checked_interval(interval)
        if threshold is not _LEAVE:
            options["threshold"] = checked_threshold(threshold)
        await self._host.change_options(self, options)

    def state_of(self, data: Any) -> PriceData:
        return channels.price_from_snapshot(data)

    def apply(self, state: PriceData, data: Any) -> PriceData:
        return channels.apply_price_update(state, data)


class RecentIds:
    """The most recently added ids, at most ``capacity``: adding beyond it forgets the oldest."""

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._ids: "OrderedDict[str, None]" = OrderedDict()

    def add(self, item: str) -> bool:
        """Remembers ``item``; False when it was already remembered."""
        if item in self._ids:
            return False
        self._ids[item] = None
        if len(self._ids) > self._capacity:
            self._ids.popitem(last=False)
        return True


class TradesSubscription(StreamSubscription[TradesState]):
    """A ``trades`` stream: the 50 most recent entries, oldest first. ``trade`` fires once per
    ``activity_id`` for the subscription's life, also across a new epoch whose snapshot repeats trades."""

    channel = "trades"
    EVENTS = StreamSubscription.EVENTS | {"trade"}

    def __init__(self, host: StreamHost, market: str) -> None:
        super().__init__(host, market)
        self._announced = RecentIds(channels.TRADES_SEEN_IDS)

    def trades(self) -> EventStream[TradeEntry]:
        """Each new trade entry, once, in order, for ``async for trade in sub.trades()``; it
        ends when the subscription does."""
        return self.events("trade")

    def state_of(self, data: Any) -> TradesState:
        return channels.trades_from_snapshot(data)

    def apply(self, state: TradesState, data: Any) -> TradesState:
        return channels.apply_trades_update(state, data)

    def accepted(self, message: Dict[str, Any], state: TradesState) -> None:
        for trade in message["data"]["trades"]:
            if self._announced.add(trade["activity_id"]):
                self.emit("trade", trade)


#: upstream's status of a market that accepts trading.
ACTIVE = "ACTIVE"


class MarketClosed(NamedTuple):
    status: str
    state: MarketData


class MarketSubscription(StreamSubscription[MarketData]):
    """A ``market`` stream: upstream's market record. ``closed`` fires once, with ``MarketClosed``,
    when the market leaves ACTIVE; the relay then closes the stream."""

    channel = "market"
    EVENTS = StreamSubscription.EVENTS | {"closed"}

    def __init__(self, host: StreamHost, market: str) -> None:
        super().__init__(host, market)
        self._announced_close = False

    def state_of(self, data: Any) -> MarketData:
        return channels.record_from_snapshot(data)

    def apply(self, state: MarketData, data: Any) -> MarketData:
        return channels.apply_record_update(state, data)

    def accepted(self, message: Dict[str, Any], state: MarketData) -> None:
        status = state.get("status")
        if self._announced_close or not isinstance(status, str) or status == ACTIVE:
            return
        self._announced_close = True
        self.emit("closed", MarketClosed(status, state))


class ProbabilitiesSubscription(StreamSubscription[ProbabilitiesData]):
    """The ``probabilities`` stream (``all``): market UUID -> entry, numbers as ``Decimal``."""

    channel = "probabilities"

    def state_of(self, data: Any) -> ProbabilitiesData:
        return cast(ProbabilitiesData, channels.record_from_snapshot(data))

    def apply(self, state: ProbabilitiesData, data: Any) -> ProbabilitiesData:
        return cast(ProbabilitiesData, channels.apply_record_update(state, data))


class OracleSubscription(StreamSubscription[OracleData]):
    """An ``oracle`` stream (``market`` is the feed id): the feed's latest price record."""

    channel = "oracle"

    def state_of(self, data: Any) -> OracleData:
        return cast(OracleData, channels.record_from_snapshot(data))

    def apply(self, state: OracleData, data: Any) -> OracleData:
        return cast(OracleData, channels.record_from_snapshot(data))


class OrdersSubscription(StreamSubscription[OrderMapState]):
    """An ``orders`` stream: ``OrderMapState(bids, asks)``, each an ordered dict order id -> entry."""

    channel = "orders"

    def state_of(self, data: Any) -> OrderMapState:
        return channels.orders_from_snapshot(data)

    def apply(self, state: OrderMapState, data: Any) -> OrderMapState:
        return channels.apply_orders_update(state, data)


#: The market catalogue as a ``markets`` stream holds it: market id -> upstream's list-form record
#: (the name of 0.2; ``MarketsData`` is the JavaScript SDK's).
CatalogueState = MarketsData


class MarketsSubscription(StreamSubscription[CatalogueState]):
    """A ``markets`` stream (``market`` is the catalogue filter: ``all``, ``active``, ``active:3`` ...):
    market id -> upstream's list-form record. ``listed`` fires with the record of each market new to
    an update, ``delisted`` with the id of each that left it; a snapshot announces none."""

    channel = "markets"
    EVENTS = StreamSubscription.EVENTS | {"listed", "delisted"}

    def __init__(self, host: StreamHost, market: str) -> None:
        super().__init__(host, market)
        self._before_update: Optional[CatalogueState] = None

    def state_of(self, data: Any) -> CatalogueState:
        return channels.markets_from_snapshot(data)

    def apply(self, state: CatalogueState, data: Any) -> CatalogueState:
        self._before_update = state
        return channels.apply_markets_update(state, data)

    def accepted(self, message: Dict[str, Any], state: CatalogueState) -> None:
        before, self._before_update = self._before_update, None
        if message["type"] != "update" or before is None:
            return
        for market, record in message["data"].items():
            if record is None:
                self.emit("delisted", market)
            elif market not in before:
                self.emit("listed", record)
