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
from datetime import datetime
from typing import Any, AsyncIterator, Callable, Dict, Generator, List, Optional, Sequence, Set, Tuple, Union

from .backoff import Backoff
from .book import BookDepthOption
from .channel_streams import ChannelStreams
from .connection import Closed, ConnectionListener, ConnectionStatus, Opened, Reconnecting, RelayConnection
from .errors import ConnectTimeout, RelayClientError
from .history import Replay, Replays, history_url, read_history
from .history.replays import ReplaySpeed
from .options import ClientOptions
from .own_view import OwnView
from .requests import subscribe_requests, unsubscribe_request
from .streams import MarketSubscription, PriceSubscription, TradesSubscription
from .subscription import StreamHost, StreamKey, StreamSubscription
from .transport import relay_socket_url
from .wildcards import WILDCARD, WILDCARD_CHANNELS, WildcardHost, WildcardSubscription

#: The stream kind each wildcard channel's markets come as.
WILDCARD_STREAMS: Dict[str, Callable[[StreamHost, str], StreamSubscription[Any]]] = {
    "price": PriceSubscription,
    "trades": TradesSubscription,
    "market": MarketSubscription,
}

logger = logging.getLogger(__name__)


class RelayClient(ChannelStreams, OwnView, WildcardHost, ConnectionListener):
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
        self._auth = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._replays = Replays(
            lambda text: self._connection.send(text), lambda: self.status == "open", self.report_listener_error
        )
        self._connection = RelayConnection(
            [relay_socket_url(url) for url in given],
            self,
            headers=self._auth,
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

    def replay(
        self,
        channel: str,
        markets: Sequence[str],
        from_: Union[str, datetime],
        to: Union[str, datetime, None] = None,
        *,
        speed: Optional[ReplaySpeed] = None,
        depth: BookDepthOption = None,
        group: Optional[str] = None,
    ) -> Replay:
        """The recorded messages of ``channel``'s streams of ``markets`` whose ``rts`` lies in [from_, to),
        as they were sent, paced at ``speed`` (1, a multiplier, or "max"; README "Replay"): ``async for
        item in client.replay(...)``, each message applied to its market's replayed stream (``item.state``:
        the state after it, verified as live states are), ``ReplayGap`` items where the record has a hole,
        ``ReplayResync`` where its continuity breaks; the loop ends at the relay's ``replayed`` (then
        ``replay.result``). Leaving the loop sends ``replay_stop``. A bad option raises ``ValueError``; a
        refusal or a lost connection raises ``RelayClientError`` from the loop."""
        return self._replays.start(channel, markets, from_, to, speed, depth, group)

    def history(
        self,
        channel: str,
        market: str,
        from_: Union[str, datetime],
        to: Union[str, datetime, None] = None,
        *,
        depth: BookDepthOption = None,
        group: Optional[str] = None,
    ) -> AsyncIterator[Dict[str, Any]]:
        """One stream's recorded messages from the relay's NDJSON export (docs/history.md "Export"), in
        order, as they stream in: ``async for message in client.history(...)``; on the HTTP origin of the
        relay in use. A bad value raises ``ValueError`` here; a refusal ``RelayClientError``
        (``history_refused``) from the loop."""
        url = history_url(self.url, channel, market, from_, to, depth, group)
        return read_history(url, dict(self._auth))

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
        self._replays.end()
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
        self._replays.opened()
        self.emit("open", opened)

    def connection_frame(self, frame: Union[str, bytes]) -> None:
        self._on_frame(frame)

    def connection_closed(self, closed: Closed) -> None:
        self._in_flight.clear()
        self._replays.closed(RelayClientError("connection_failed", f"the connection closed during the replay ({closed.code})"))
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
