"""The client the application holds: it owns the connection (``connection.py``: one relay at a time,
the next URL on each reconnect) and the streams, subscribes every stream again on every open with
``resume`` (the last verified epoch and seq of each), routes each relay message to its stream, and
sends the snapshot requests streams ask for when they lose continuity, batched per (channel, depth).
Mirrors the JavaScript SDK (packages/client/src/relay-client.ts) over asyncio and ``websockets``.

Events (``client.on(name, listener)``): ``open`` (``Opened``), ``close`` (``Closed``), ``reconnecting``
(``Reconnecting``), ``status`` (the new ``client.status``), ``error`` (``RelayClientError``).
``await client`` (and so ``await connect(...)``) waits for the first connection.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random as _random
from typing import Any, Callable, Dict, Generator, List, Optional, Sequence, Set, Tuple, Type, TypeVar, Union

from .backoff import Backoff
from .book import BookDepthOption, book_depth, book_group
from .channel_data import MarketListRecord
from .channels import PROBABILITIES_STREAM, canonical_stream_id, catalogue_stream_id
from .connection import Closed, ConnectionListener, ConnectionStatus, Opened, Reconnecting, RelayConnection
from .errors import ConnectTimeout, RelayClientError
from .json_streams import CandlesSubscription, RestSubscription
from .options import ClientOptions
from .own_view import OwnView
from .requests import (
    checked_candles_since,
    checked_interval,
    checked_since,
    checked_threshold,
    subscribe_requests,
    unsubscribe_request,
)
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
from .transport import relay_socket_url
from .wildcards import WILDCARD, WILDCARD_CHANNELS, WildcardHost, WildcardSubscription

#: The stream kind each wildcard channel's markets come as.
WILDCARD_STREAMS: Dict[str, Callable[[StreamHost, str], StreamSubscription[Any]]] = {
    "price": PriceSubscription,
    "trades": TradesSubscription,
    "market": MarketSubscription,
}

S = TypeVar("S", bound=StreamSubscription[Any])

logger = logging.getLogger(__name__)


class RelayClient(OwnView, WildcardHost, ConnectionListener):
    def __init__(self, urls: Union[str, Sequence[str]], options: Optional[ClientOptions] = None) -> None:
        super().__init__()
        given = [urls] if isinstance(urls, str) else list(urls)
        if not given:
            raise ValueError("at least one relay URL is needed")
        self.options = options if options is not None else ClientOptions()
        self._streams: Dict[StreamKey, StreamSubscription[Any]] = {}
        self._to_subscribe: Dict[StreamKey, StreamSubscription[Any]] = {}
        self._flush_scheduled = False
        self._in_flight: Dict[Union[int, str], Dict[str, Any]] = {}
        self._waiting = {}
        self._next_id = 0
        self._closing = False
        self._timers: Set[asyncio.TimerHandle] = set()
        self._wildcards: Dict[str, WildcardSubscription] = {}
        self._status_changed = asyncio.Event()
        self._last_failure: Optional[RelayClientError] = None
        self._refusal: Optional[RelayClientError] = None
        api_key = self.options.api_key
        self._connection = RelayConnection(
            [relay_socket_url(url) for url in given],
            self,
            headers={"Authorization": f"Bearer {api_key}"} if api_key else {},
            dead_after=self.options.dead_after_seconds,
            backoff=self.options.backoff,
            open_timeout=self.options.open_timeout,
            random=self.options.random,
        )

    def __repr__(self) -> str:
        return f"<RelayClient {self.url} {self.status}>"

    # --- the application's side ------------------------------------------------------------------

    @property
    def status(self) -> ConnectionStatus:
        """``connecting`` (first connection), ``open``, ``reconnecting`` (after a drop), ``closed``."""
        return self._connection.status

    @property
    def urls(self) -> List[str]:
        return self._connection.urls

    @property
    def url(self) -> str:
        """The URL of the relay the client is connected (or connecting) to."""
        return self._connection.url

    @property
    def streams(self) -> List[StreamSubscription[Any]]:
        """The streams held now (not closed): the client's own side of what ``subscriptions()`` asks the relay."""
        return list(self._streams.values())

    def subscribe_book(
        self, market: str, depth: BookDepthOption = None, *, interval: Optional[int] = None, group: Optional[str] = None
    ) -> BookSubscription:
        """A book stream; depth 1, 5, 10, 25, 50, or "full" / None (the full book, its ``depth`` None); the same
        (market, depth, group) gives the same object. ``interval`` (every ``subscribe_…`` but trades): README
        "Paced". ``group`` (a step of ``BOOK_GROUPS``, such as "0.05"): levels summed into multiples of it, README
        "Grouped books"; ValueError for a step the relay does not offer."""
        level = book_depth(depth)
        step = book_group(group)
        return self._subscribe(
            "book", market, level, BookSubscription, lambda m: BookSubscription(self, m, level, step), interval, group=step
        )

    def subscribe_price(
        self, market: str, *, interval: Optional[int] = None, threshold: Optional[str] = None
    ) -> PriceSubscription:
        """``threshold`` (a decimal string of price units): a message only once best bid, best ask or
        midpoint moved by that much; README "Price thresholds"."""
        return self._subscribe(
            "price", market, None, PriceSubscription, lambda m: PriceSubscription(self, m), interval, threshold
        )

    def subscribe_trades(self, market: str, *, since: object = None) -> TradesSubscription:
        """No ``interval``: each trade is an event, and conflating would drop those beyond the kept window.
        ``since`` (an aware datetime, an ISO 8601 time or an ``activity_id``): every trade since then comes
        first, each a ``trade`` event, then the live ones (README "History since a time")."""
        history = checked_since(since)
        stream = self._subscribe("trades", market, None, TradesSubscription, lambda m: TradesSubscription(self, m))
        return self._with_since(stream, history)

    def _with_since(self, stream: S, history: Optional[str]) -> S:
        """Asks a stream's history since a time (a checked ``since``; None leaves it as it is)."""
        if history is not None and not stream.closed:
            stream.since = history
            self.request_snapshot(stream)
        return stream

    def subscribe_market(self, market: str, *, interval: Optional[int] = None) -> MarketSubscription:
        return self._subscribe("market", market, None, MarketSubscription, lambda m: MarketSubscription(self, m), interval)

    def subscribe_probabilities(self, *, interval: Optional[int] = None) -> ProbabilitiesSubscription:
        kind = ProbabilitiesSubscription
        return self._subscribe("probabilities", PROBABILITIES_STREAM, None, kind, lambda m: kind(self, m), interval)

    def subscribe_oracle(self, feed_id: str, *, interval: Optional[int] = None) -> OracleSubscription:
        """An oracle feed (a market's ``oracle_feed_id``: ``0x`` + hex)."""
        return self._subscribe("oracle", feed_id, None, OracleSubscription, lambda m: OracleSubscription(self, m), interval)

    def subscribe_orders(self, market: str, *, interval: Optional[int] = None) -> OrdersSubscription:
        return self._subscribe("orders", market, None, OrdersSubscription, lambda m: OrdersSubscription(self, m), interval)

    def subscribe_markets(
        self, status: str = "all", token: Optional[int] = None, *, interval: Optional[int] = None
    ) -> MarketsSubscription:
        """The market catalogue, live: market id -> list-form record, of every market (``all``) or those
        of one ``status`` (``active``, ``expired``, ``resolved``), optionally of one token."""
        kind, stream_id = MarketsSubscription, catalogue_stream_id(status, token)
        return self._subscribe("markets", stream_id, None, kind, lambda m: kind(self, m), interval)

    async def markets(
        self, status: str = "all", token: Optional[int] = None, timeout: Optional[float] = None
    ) -> List[MarketListRecord]:
        """The catalogue's list-form records now (its live subscription's state, whose values they
        are; the subscription stays), as the JavaScript SDK's ``markets()`` answers."""
        return list((await self.subscribe_markets(status, token).wait_for_state(timeout)).values())

    def subscribe_rest(self, path: str, *, interval: Optional[int] = None) -> RestSubscription:
        """Any public GET path of upstream (with its query string), live: ``state`` is the body."""
        return self._subscribe("rest", path, None, RestSubscription, lambda p: RestSubscription(self, p), interval)

    def subscribe_candles(
        self, market: str, interval: str, source: str, *, pace: Optional[int] = None, since: object = None
    ) -> CandlesSubscription:
        """A market's candles of one interval (1m, 5m, 1h, 1d) from one source (probability, trades);
        ``pace`` is the subscription's ``interval`` in ms (the name ``interval`` being the candles').
        ``since`` (source ``trades``; an aware datetime or an ISO 8601 time): the first snapshot also
        brings the final candles of the range older than its own, as one ``history`` event, oldest
        first (README "History since a time")."""
        history = checked_candles_since(source, since)
        stream_id = f"{market}:{interval}:{source}"
        stream = self._subscribe(
            "candles", stream_id, None, CandlesSubscription, lambda s: CandlesSubscription(self, s), pace
        )
        return self._with_since(stream, history)

    def subscribe_all(self, channel: str) -> WildcardSubscription:
        """Every market upstream lists as active, now and later, on ``price``, ``trades`` or ``market``:
        each joins as a stream of its own (``added``) and ends when no longer active (``removed``)."""
        if channel not in WILDCARD_CHANNELS:
            raise ValueError(f"a wildcard takes {', '.join(WILDCARD_CHANNELS)}, not {channel!r}")
        wildcard = self._wildcards.get(channel)
        if wildcard is None:
            wildcard = WildcardSubscription(channel, self)
            if self._closing:
                wildcard.end("client closed")
                return wildcard
            self._wildcards[channel] = wildcard
            if self._connection.status == "open":
                self._send(wildcard.request())
        return wildcard

    async def close(self) -> None:
        """Closes the connection for good; every stream ends with status ``closed``."""
        if self._closing:
            return
        self._closing = True
        for timer in self._timers:
            timer.cancel()
        self._timers.clear()
        await self._connection.close()
        self._end_all("client closed")
        self._end_events()

    async def connected(self, timeout: Optional[float] = None) -> "RelayClient":
        """Waits until the client is connected (at once if it is). Raises ``ConnectTimeout`` after
        ``timeout`` seconds, ``RelayClientError`` (``refused``, ``closed``) when the client ends first.
        The client keeps retrying after a timeout here; ``await connect(...)`` closes it."""

        async def opened() -> None:
            while self.status != "open":
                if self.status == "closed" or self._closing:
                    error = RelayClientError(*self._why_closed())
                    error.__cause__ = self._refusal
                    raise error
                self._status_changed.clear()
                await self._status_changed.wait()

        try:
            await asyncio.wait_for(opened(), timeout)
        except asyncio.TimeoutError:
            error = ConnectTimeout("connect_timeout", f"no relay of {', '.join(self.urls)} answered within {timeout} s")
            raise error from self._last_failure
        return self

    def _why_closed(self) -> Tuple[str, str]:
        if self._refusal is not None:
            return "refused", self._refusal.message
        return "closed", "the client was closed before it connected"

    def __await__(self) -> Generator[Any, None, "RelayClient"]:
        """``client = await connect(...)``: the client once connected; on failure it is closed and the
        error raised (see ``connected``), within ``options.timeout`` when one is set."""
        return self._first_connection().__await__()

    async def _first_connection(self) -> "RelayClient":
        try:
            return await self.connected(self.options.timeout)
        except BaseException:
            await self.close()
            raise

    async def __aenter__(self) -> "RelayClient":
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    # --- streams ---------------------------------------------------------------------------------

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

    def request_snapshot(self, stream: StreamSubscription[Any]) -> None:
        """StreamHost: (re)subscribe ``stream`` with the next batch."""
        if self._streams.get(stream.key) is not stream:
            return
        self._to_subscribe[stream.key] = stream
        if not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)

    def release(self, stream: StreamSubscription[Any]) -> None:
        """StreamHost: the application unsubscribed."""
        if self._streams.get(stream.key) is not stream:
            return
        for wildcard in self._wildcards.values():
            wildcard.forget(stream)
        del self._streams[stream.key]
        self._to_subscribe.pop(stream.key, None)
        self._send(unsubscribe_request(stream))

    def adopt(self, channel: str, market: str) -> Optional[StreamSubscription[Any]]:
        """WildcardHost: a stream for a market a wildcard joined, unless the application holds it by name."""
        if StreamKey(channel, market, None) in self._streams:
            return None
        stream = WILDCARD_STREAMS[channel](self, market)
        self._streams[stream.key] = stream
        return stream

    def drop(self, stream: StreamSubscription[Any]) -> None:
        """WildcardHost: the stream's market left its wildcard."""
        if self._streams.get(stream.key) is stream:
            del self._streams[stream.key]

    def release_wildcard(self, channel: str) -> None:
        """WildcardHost: the application unsubscribed ``"*"``."""
        self._wildcards.pop(channel, None)
        self._send({"op": "unsubscribe", "channel": channel, "markets": [WILDCARD]})

    def report_listener_error(self, error: BaseException) -> None:
        self.emit("error", RelayClientError("listener_threw", f"an event listener raised {error!r}"))

    def on_listener_error(self, error: BaseException, event: str) -> None:
        # An error listener that raises is logged (events.py) and not reported again: that would loop.
        if event != "error":
            self.report_listener_error(error)

    def _flush(self) -> None:
        self._flush_scheduled = False
        if self._connection.status != "open":
            return  # sent with everything else when the connection opens
        streams = [stream for stream in self._to_subscribe.values() if not stream.closed]
        self._to_subscribe.clear()
        for request in subscribe_requests(streams):
            self._send(request)

    def _end_all(self, reason: str, error: Optional[RelayClientError] = None) -> None:
        for wildcard in list(self._wildcards.values()):
            wildcard.end(reason)
        self._wildcards.clear()
        for stream in list(self._streams.values()):
            stream.end(reason, error)
        self._streams.clear()
        self._to_subscribe.clear()

    # --- the connection --------------------------------------------------------------------------

    def _send(self, request: Dict[str, Any]) -> None:
        self._next_id += 1
        request["id"] = self._next_id
        if self._connection.send(json.dumps(request)) and request["op"] == "subscribe":
            self._in_flight[self._next_id] = request

    def _send_text(self, text: str) -> bool:
        return self._connection.send(text)

    def _going_away(self, after: float) -> None:
        self._connection.going_away(after)

    # --- ConnectionListener ----------------------------------------------------------------------

    def connection_status(self, status: str) -> None:
        self._status_changed.set()
        self.emit("status", status)

    def connection_opened(self, opened: Opened) -> None:
        self._in_flight.clear()
        self._abandon_questions()
        self._to_subscribe.clear()
        # The streams a wildcard holds come back through its own subscribe.
        named = [s for s in self._streams.values() if not any(w.owns(s) for w in self._wildcards.values())]
        for request in subscribe_requests(named) + [w.request() for w in self._wildcards.values()]:
            self._send(request)
        self.emit("open", opened)

    def connection_frame(self, frame: Union[str, bytes]) -> None:
        self._on_frame(frame)

    def connection_closed(self, closed: Closed) -> None:
        self._in_flight.clear()
        self._abandon_questions()
        for stream in self._streams.values():
            stream.connection_lost()
        self.emit("close", closed)

    def connection_reconnecting(self, reconnecting: Reconnecting) -> None:
        self.emit("reconnecting", reconnecting)

    def connection_failed(self, url: str, detail: str) -> None:
        self._last_failure = RelayClientError("connection_failed", f"{url}: {detail}")
        self.emit("error", self._last_failure)

    def connection_refused(self, url: str, detail: str) -> None:
        logger.error("%s refused the client, which stops: %s", url, detail)
        self._closing = True
        error = RelayClientError("refused", f"{url}: {detail}")
        self._refusal = error
        self.emit("error", error)
        self._end_all("refused by the relay", error)
        self._end_events()

def connect(
    urls: Union[str, Sequence[str]],
    *,
    api_key: Optional[str] = None,
    heartbeat: float = 15.0,
    dead_after: Optional[float] = None,
    backoff: Backoff = Backoff(),
    open_timeout: float = 10.0,
    timeout: Optional[float] = None,
    random: Callable[[], float] = _random.random,
) -> RelayClient:
    """Connects to a relay, or to the first of several that answers, and keeps reconnecting until
    ``close()``. Call it inside a running event loop. Either subscribe at once (the client sends the
    subscriptions when the connection opens) or ``client = await connect(...)`` to wait for the first
    connection, at most ``timeout`` seconds. The options are ``ClientOptions``' fields."""
    options = ClientOptions(
        api_key=api_key,
        heartbeat=heartbeat,
        dead_after=dead_after,
        backoff=backoff,
        open_timeout=open_timeout,
        timeout=timeout,
        random=random,
    )
    return RelayClient(urls, options)
