"""The client the application holds: it owns the connection (``connection.py``: one relay at a time,
the next URL on each reconnect) and the streams, subscribes every stream again on every open with
``resume`` (the last verified epoch and seq of each), routes each relay message to its stream, and
sends the snapshot requests streams ask for when they lose continuity, batched per (channel, depth).
Mirrors the JavaScript SDK (src/client/relay-client.ts) over asyncio and ``websockets``.

Events (``client.on(name, listener)``): ``open`` (``Opened``), ``close`` (``Closed``), ``reconnecting``
(``Reconnecting``), ``status`` (the new ``client.status``), ``error`` (``RelayClientError``).
"""

from __future__ import annotations

import asyncio
import json
import random as _random
from decimal import Decimal
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Type, TypeVar, Union

from .backoff import Backoff
from .channels import CHANNELS, PROBABILITIES_STREAM, canonical_stream_id, catalogue_stream_id
from .connection import Closed, ConnectionListener, ConnectionStatus, Opened, Reconnecting, RelayConnection
from .errors import RelayClientError
from .events import Emitter
from .json_streams import CandlesSubscription, RestSubscription
from .requests import adopt_rest_spelling, listed_ids, stream_key_of, subscribe_requests, unsubscribe_request
from .streams import (
    BookSubscription,
    CatalogueState,
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

#: Pause before sending again a subscribe the relay refused as ``rate_limited``.
RATE_LIMIT_RETRY = 1.0
#: Request errors that may pass on retry; any other answer to a subscribe refuses its streams.
RETRYABLE = frozenset({"rate_limited", "internal", "upstream_unavailable"})
S = TypeVar("S", bound=StreamSubscription[Any])


def _load(text: str) -> Any:
    # Exact numbers: a JSON number with a fraction becomes a Decimal, never a binary float.
    return json.loads(text, parse_float=Decimal)


class RelayClient(Emitter, StreamHost, ConnectionListener):
    def __init__(
        self,
        urls: Union[str, Sequence[str]],
        *,
        api_key: Optional[str] = None,
        heartbeat: float = 15.0,
        dead_after: Optional[float] = None,
        backoff: Backoff = Backoff(),
        open_timeout: float = 10.0,
        random: Callable[[], float] = _random.random,
    ) -> None:
        super().__init__()
        given = [urls] if isinstance(urls, str) else list(urls)
        if not given:
            raise ValueError("at least one relay URL is needed")
        self._streams: Dict[StreamKey, StreamSubscription[Any]] = {}
        self._to_subscribe: Dict[StreamKey, StreamSubscription[Any]] = {}
        self._flush_scheduled = False
        self._in_flight: Dict[Union[int, str], Dict[str, Any]] = {}
        self._next_id = 0
        self._closing = False
        self._timers: Set[asyncio.TimerHandle] = set()
        self._connection = RelayConnection(
            [relay_socket_url(url) for url in given],
            self,
            headers={"Authorization": f"Bearer {api_key}"} if api_key else {},
            dead_after=dead_after if dead_after is not None else heartbeat * 2.5,
            backoff=backoff,
            open_timeout=open_timeout,
            random=random,
        )

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
    def subscriptions(self) -> List[StreamSubscription[Any]]:
        return list(self._streams.values())

    def subscribe_book(self, market: str, depth: Optional[int] = None) -> BookSubscription:
        """A book stream; depth 10, 50 or None (full book). The same (market, depth) gives the same object."""
        if depth not in (None, 10, 50):
            raise ValueError(f"depth must be 10, 50 or None, got {depth!r}")
        return self._subscribe("book", market, depth, BookSubscription, lambda m: BookSubscription(self, m, depth))

    def subscribe_price(self, market: str) -> PriceSubscription:
        return self._subscribe("price", market, None, PriceSubscription, lambda m: PriceSubscription(self, m))

    def subscribe_trades(self, market: str) -> TradesSubscription:
        return self._subscribe("trades", market, None, TradesSubscription, lambda m: TradesSubscription(self, m))

    def subscribe_market(self, market: str) -> MarketSubscription:
        return self._subscribe("market", market, None, MarketSubscription, lambda m: MarketSubscription(self, m))

    def subscribe_probabilities(self) -> ProbabilitiesSubscription:
        return self._subscribe(
            "probabilities",
            PROBABILITIES_STREAM,
            None,
            ProbabilitiesSubscription,
            lambda m: ProbabilitiesSubscription(self, m),
        )

    def subscribe_oracle(self, feed_id: str) -> OracleSubscription:
        """An oracle feed (a market's ``oracle_feed_id``: ``0x`` + hex)."""
        return self._subscribe("oracle", feed_id, None, OracleSubscription, lambda m: OracleSubscription(self, m))

    def subscribe_orders(self, market: str) -> OrdersSubscription:
        return self._subscribe("orders", market, None, OrdersSubscription, lambda m: OrdersSubscription(self, m))

    def subscribe_markets(self, status: str = "all", token: Optional[int] = None) -> MarketsSubscription:
        """The market catalogue, live: market id -> list-form record, of every market (``all``) or those
        of one ``status`` (``active``, ``expired``, ``resolved``), optionally of one token."""
        kind, stream_id = MarketsSubscription, catalogue_stream_id(status, token)
        return self._subscribe("markets", stream_id, None, kind, lambda m: kind(self, m))

    async def markets(
        self, status: str = "all", token: Optional[int] = None, timeout: Optional[float] = None
    ) -> List[Dict[str, Any]]:
        """The catalogue's records now (its live subscription's state; it stays subscribed)."""
        catalogue: CatalogueState = await self.subscribe_markets(status, token).wait_for_state(timeout)
        return list(catalogue.values())

    def subscribe_rest(self, path: str) -> RestSubscription:
        """Any public GET path of upstream (with its query string), live: ``state`` is the body."""
        return self._subscribe("rest", path, None, RestSubscription, lambda p: RestSubscription(self, p))

    def subscribe_candles(self, market: str, interval: str, source: str) -> CandlesSubscription:
        """A market's candles of one interval (1m, 5m, 1h, 1d) from one source (probability, trades)."""
        stream_id = f"{market}:{interval}:{source}"
        return self._subscribe("candles", stream_id, None, CandlesSubscription, lambda s: CandlesSubscription(self, s))

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

    async def __aenter__(self) -> "RelayClient":
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    # --- streams ---------------------------------------------------------------------------------

    def _subscribe(
        self, channel: str, stream_id: str, depth: Optional[int], kind: Type[S], create: Callable[[str], S]
    ) -> S:
        market = canonical_stream_id(channel, stream_id)
        existing = self._streams.get(StreamKey(channel, market, depth))
        if isinstance(existing, kind):
            return existing
        stream = create(market)
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
        del self._streams[stream.key]
        self._to_subscribe.pop(stream.key, None)
        self._send(unsubscribe_request(stream))

    def report_listener_error(self, error: BaseException) -> None:
        self.emit("error", RelayClientError("listener_threw", f"an event listener raised {error!r}"))

    def on_listener_error(self, error: BaseException, event: str) -> None:
        if event == "error":
            asyncio.get_running_loop().call_exception_handler(
                {"message": "a market_relay error listener raised", "exception": error}
            )
        else:
            self.report_listener_error(error)

    def _flush(self) -> None:
        self._flush_scheduled = False
        if self._connection.status != "open":
            return  # sent with everything else when the connection opens
        streams = [stream for stream in self._to_subscribe.values() if not stream.closed]
        self._to_subscribe.clear()
        for request in subscribe_requests(streams):
            self._send(request)

    def _end_all(self, reason: str) -> None:
        for stream in list(self._streams.values()):
            stream.end(reason)
        self._streams.clear()
        self._to_subscribe.clear()

    # --- the connection --------------------------------------------------------------------------

    def _send(self, request: Dict[str, Any]) -> None:
        self._next_id += 1
        request["id"] = self._next_id
        if self._connection.send(json.dumps(request)) and request["op"] == "subscribe":
            self._in_flight[self._next_id] = request

    # --- ConnectionListener ----------------------------------------------------------------------

    def connection_status(self, status: str) -> None:
        self.emit("status", status)

    def connection_opened(self, opened: Opened) -> None:
        self._in_flight.clear()
        self._to_subscribe.clear()
        for request in subscribe_requests(list(self._streams.values())):
            self._send(request)
        self.emit("open", opened)

    def connection_frame(self, frame: Union[str, bytes]) -> None:
        self._on_frame(frame)

    def connection_closed(self, closed: Closed) -> None:
        self._in_flight.clear()
        for stream in self._streams.values():
            stream.connection_lost()
        self.emit("close", closed)

    def connection_reconnecting(self, reconnecting: Reconnecting) -> None:
        self.emit("reconnecting", reconnecting)

    def connection_failed(self, url: str, detail: str) -> None:
        self.emit("error", RelayClientError("connection_failed", f"{url}: {detail}"))

    def connection_refused(self, url: str, detail: str) -> None:
        self._closing = True
        self.emit("error", RelayClientError("refused", f"{url}: {detail}"))
        self._end_all("refused by the relay")

    # --- relay messages --------------------------------------------------------------------------

    def _on_frame(self, frame: Union[str, bytes]) -> None:
        try:
            message = _load(frame) if isinstance(frame, str) else None
        except ValueError as error:
            message = None
            detail = f"not JSON: {error}"
        else:
            detail = "a binary frame" if message is None else "not a message object"
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            self.emit("error", RelayClientError("malformed_frame", detail))
            return
        kind = message["type"]
        if kind in ("snapshot", "update"):
            self._on_stream_message(message)
        elif kind == "status":
            stream = self._stream_of(message)
            if stream is not None:
                stream.receive_status(message)
                if stream.closed:
                    self._streams.pop(stream.key, None)
        elif kind == "confirmed":
            stream = self._stream_of(message)
            if stream is not None:
                stream.receive_confirmed(message)
        elif kind == "subscribed":
            self._on_subscribed(message)
        elif kind == "unsubscribed":
            self._answered(message.get("id"))
        elif kind == "error":
            self._on_error(message)

    def _answered(self, request_id: object) -> Optional[Dict[str, Any]]:
        """The subscribe request a reply answers, no longer in flight."""
        return self._in_flight.pop(request_id, None) if isinstance(request_id, (int, str)) else None

    def _stream_of(self, message: Dict[str, Any]) -> Optional[StreamSubscription[Any]]:
        key = stream_key_of(message)
        return self._streams.get(key) if key is not None else None

    def _on_subscribed(self, message: Dict[str, Any]) -> None:
        request = self._answered(message.get("id"))
        if request is not None and request["channel"] == "rest":
            adopt_rest_spelling(self._streams, listed_ids(request), listed_ids(message))
        recovered = message.get("recovered")
        if isinstance(recovered, dict):
            for stream_id, value in recovered.items():
                stream = self._stream_of({**message, "market": stream_id, "path": stream_id})
                if stream is not None:
                    stream.resumed(value is True)

    def _on_stream_message(self, message: Dict[str, Any]) -> None:
        stream = self._stream_of(message)
        epoch, seq = message.get("epoch"), message.get("seq")
        if message.get("channel") not in CHANNELS or not isinstance(epoch, str) or type(seq) is not int:
            self.emit("error", RelayClientError("malformed_frame", f"stream message without channel, epoch or seq: {message!r:.200}"))
            if stream is not None:
                stream.malformed("a message without epoch or seq")
            return
        if stream is not None:  # a message for a stream just unsubscribed is ignored
            stream.receive(message)

    def _on_error(self, message: Dict[str, Any]) -> None:
        """A stream error (it names a market, no id) goes to that market's streams; a request error to
        the streams of the request it answers: the one of its id, else the oldest in flight."""
        code = str(message.get("code"))
        channel, request_id = message.get("channel"), message.get("id")
        market = message.get("path" if channel == "rest" else "market")
        error = RelayClientError(
            code,
            str(message.get("message", "")),
            channel=channel if isinstance(channel, str) else None,
            market=market if isinstance(market, str) else None,
            request_id=request_id if isinstance(request_id, (int, str)) else None,
        )
        targets: List[StreamSubscription[Any]] = []
        if isinstance(market, str) and request_id is None:
            targets = [s for s in self._streams.values() if s.channel == channel and s.market == market]
        else:
            # Without an id, the relay answers requests in order: the oldest one in flight.
            request = self._answered(request_id if request_id is not None else next(iter(self._in_flight), None))
            if request is not None:
                for requested in listed_ids(request):
                    stream = self._streams.get(StreamKey(request["channel"], requested, request.get("depth")))
                    if stream is not None:
                        targets.append(stream)
                if code == "rate_limited":
                    self._retry_later(targets)
        self.emit("error", error)
        refused = request_id is not None and code not in RETRYABLE
        for stream in targets:
            stream.receive_error(error)
            if refused:  # asking again on every reconnect would fail the same way
                stream.end(f"subscribe refused: {code}")
            if stream.closed:
                self._streams.pop(stream.key, None)

    def _retry_later(self, streams: List[StreamSubscription[Any]]) -> None:
        def retry() -> None:
            self._timers.discard(timer)
            for stream in streams:
                if not stream.closed:
                    self.request_snapshot(stream)

        timer = asyncio.get_running_loop().call_later(RATE_LIMIT_RETRY, retry)
        self._timers.add(timer)


def connect(urls: Union[str, Sequence[str]], **options: Any) -> RelayClient:
    """Connects to a relay, or to the first of several that answers, and keeps reconnecting until
    ``close()``. Call it inside a running event loop; subscribe at once, the client sends the
    subscriptions when the connection opens. Options: see ``RelayClient``."""
    return RelayClient(urls, **options)
