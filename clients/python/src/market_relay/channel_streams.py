"""What an application can subscribe to: one ``subscribe_…`` method per channel, each taking the
subscription's pace (``interval``) and where its history starts (``since``: docs/protocol.md "History
and replay"), checked before anything is sent. ``RelayClient`` (``client.py``) decides what holding a
stream means: these methods ask it through ``request_snapshot``. Mirrors the JavaScript SDK
(packages/client/src/channel-streams.ts).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Type, TypeVar

from .book import BookDepthOption, book_depth, book_group
from .channel_data import MarketListRecord
from .channels import PROBABILITIES_STREAM, canonical_stream_id, catalogue_stream_id
from .json_streams import CandlesSubscription, RestSubscription
from .requests import checked_candles_since, checked_interval, checked_since, checked_threshold, checked_time_since
from .streams import (
    BookSubscription,
    MarketsSubscription,
    MarketSubscription,
    OracleSubscription,
    OrdersSubscription,
    PriceSubscription,
    ProbabilitiesSubscription,
    TradesSubscription,
)
from .subscription import StreamHost, StreamKey, StreamSubscription

S = TypeVar("S", bound=StreamSubscription[Any])


class ChannelStreams(StreamHost):
    """The ``subscribe_…`` methods; the client holds the streams and sends their requests."""

    _streams: Dict[StreamKey, StreamSubscription[Any]]
    _closing: bool

    def subscribe_book(
        self,
        market: str,
        depth: BookDepthOption = None,
        *,
        interval: Optional[int] = None,
        group: Optional[str] = None,
        since: object = None,
    ) -> BookSubscription:
        """A book stream; depth 1, 5, 10, 25, 50, or "full" / None (the full book, its ``depth`` None); the same
        (market, depth, group) gives the same object. ``interval`` (every ``subscribe_…`` but trades): README
        "Paced". ``group`` (a step of ``BOOK_GROUPS``, such as "0.05"): levels summed into multiples of it, README
        "Grouped books"; ValueError for a step the relay does not offer. ``since`` (every ``subscribe_…``; an
        aware datetime or an ISO 8601 time): the book as it stood then, every recorded message after it, then
        live (README "History and replay"); the stream's ``history`` says where the answer starts."""
        level = book_depth(depth)
        step = book_group(group)
        history = checked_time_since(since)
        stream = self._subscribe(
            "book", market, level, BookSubscription, lambda m: BookSubscription(self, m, level, step), interval, group=step
        )
        return self._with_since(stream, history)

    def subscribe_price(
        self, market: str, *, interval: Optional[int] = None, threshold: Optional[str] = None, since: object = None
    ) -> PriceSubscription:
        """``threshold`` (a decimal string of price units): a message only once best bid, best ask or
        midpoint moved by that much; README "Price thresholds"."""
        history = checked_time_since(since)
        stream = self._subscribe(
            "price", market, None, PriceSubscription, lambda m: PriceSubscription(self, m), interval, threshold
        )
        return self._with_since(stream, history)

    def subscribe_trades(self, market: str, *, since: object = None) -> TradesSubscription:
        """No ``interval``: each trade is an event, and conflating would drop those beyond the kept window.
        ``since`` (an aware datetime, an ISO 8601 time or an ``activity_id``): every trade since then comes
        first, each a ``trade`` event, then the live ones (README "History since a time")."""
        history = checked_since(since)
        stream = self._subscribe("trades", market, None, TradesSubscription, lambda m: TradesSubscription(self, m))
        return self._with_since(stream, history)

    def subscribe_market(self, market: str, *, interval: Optional[int] = None, since: object = None) -> MarketSubscription:
        kind = MarketSubscription
        return self._plain("market", market, kind, lambda m: kind(self, m), interval, since)

    def subscribe_probabilities(
        self, *, interval: Optional[int] = None, since: object = None
    ) -> ProbabilitiesSubscription:
        kind = ProbabilitiesSubscription
        return self._plain("probabilities", PROBABILITIES_STREAM, kind, lambda m: kind(self, m), interval, since)

    def subscribe_oracle(self, feed_id: str, *, interval: Optional[int] = None, since: object = None) -> OracleSubscription:
        """An oracle feed (a market's ``oracle_feed_id``: ``0x`` + hex)."""
        kind = OracleSubscription
        return self._plain("oracle", feed_id, kind, lambda m: kind(self, m), interval, since)

    def subscribe_orders(self, market: str, *, interval: Optional[int] = None, since: object = None) -> OrdersSubscription:
        kind = OrdersSubscription
        return self._plain("orders", market, kind, lambda m: kind(self, m), interval, since)

    def subscribe_markets(
        self, status: str = "all", token: Optional[int] = None, *, interval: Optional[int] = None, since: object = None
    ) -> MarketsSubscription:
        """The market catalogue, live: market id -> list-form record, of every market (``all``) or those
        of one ``status`` (``active``, ``expired``, ``resolved``), optionally of one token."""
        kind, stream_id = MarketsSubscription, catalogue_stream_id(status, token)
        return self._plain("markets", stream_id, kind, lambda m: kind(self, m), interval, since)

    async def markets(
        self, status: str = "all", token: Optional[int] = None, timeout: Optional[float] = None
    ) -> List[MarketListRecord]:
        """The catalogue's list-form records now (its live subscription's state, whose values they
        are; the subscription stays), as the JavaScript SDK's ``markets()`` answers."""
        return list((await self.subscribe_markets(status, token).wait_for_state(timeout)).values())

    def subscribe_rest(self, path: str, *, interval: Optional[int] = None, since: object = None) -> RestSubscription:
        """Any public GET path of upstream (with its query string), live: ``state`` is the body."""
        return self._plain("rest", path, RestSubscription, lambda p: RestSubscription(self, p), interval, since)

    def subscribe_candles(
        self, market: str, interval: str, source: str, *, pace: Optional[int] = None, since: object = None
    ) -> CandlesSubscription:
        """A market's candles of one interval (1m, 5m, 1h, 1d) from one source (probability, trades);
        ``pace`` is the subscription's ``interval`` in ms (the name ``interval`` being the candles').
        ``since`` (an aware datetime or an ISO 8601 time; without a relay that records, source ``trades``
        at most 24 hours back): the first snapshot also
        brings the final candles of the range older than its own, as one ``history`` event, oldest
        first (README "History since a time")."""
        history = checked_candles_since(since)
        stream_id = f"{market}:{interval}:{source}"
        stream = self._subscribe(
            "candles", stream_id, None, CandlesSubscription, lambda s: CandlesSubscription(self, s), pace
        )
        return self._with_since(stream, history)

    def _plain(
        self, channel: str, stream_id: str, kind: Type[S], create: Callable[[str], S], interval: object, since: object
    ) -> S:
        """A stream of a channel whose ``since`` is a time answered from the relay's record."""
        history = checked_time_since(since)
        return self._with_since(self._subscribe(channel, stream_id, None, kind, create, interval), history)

    def _with_since(self, stream: S, history: Optional[str]) -> S:
        """Asks a stream's history since a time (a checked ``since``; None leaves it as it is)."""
        if history is not None and not stream.closed:
            stream.since = history
            self.request_snapshot(stream)
        return stream

    def _subscribe(
        self,
        channel: str,
        stream_id: str,
        depth: Optional[int],
        kind: Type[S],
        create: Callable[[str], S],
        interval: object = None,
        threshold: object = None,
        *,
        group: Optional[str] = None,
    ) -> S:
        pace = checked_interval(interval)
        gate = checked_threshold(threshold)
        market = canonical_stream_id(channel, stream_id)
        existing = self._streams.get(StreamKey(channel, market, depth, group))
        if isinstance(existing, kind):
            # A new pace or threshold is asked with a repeated subscribe, which the relay answers with a snapshot.
            repace = pace is not None and existing.interval != pace
            regate = gate is not None and existing.threshold != gate
            if repace:
                existing.interval = pace
            if regate:
                existing.threshold = gate
            if repace or regate:
                self.request_snapshot(existing)
            return existing
        stream = create(market)
        stream.interval = pace
        stream.threshold = gate
        if self._closing:
            stream.end("client closed")
            return stream
        self._streams[stream.key] = stream
        self.request_snapshot(stream)
        return stream

