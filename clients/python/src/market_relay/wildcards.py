"""``"*"`` subscriptions (docs/protocol.md "Wildcard subscriptions"): on ``price``, ``trades`` or
``market``, every market upstream's catalogue lists as active, now and later. The relay announces the
markets it joins (``subscribed`` without ``id``, with ``wildcard``) and leaves (``unsubscribed`` so);
a wildcard turns each joined market into an ordinary stream of its channel, held by the client but
subscribed through the ``"*"``, announced with ``added``, and ends it with ``removed`` when the market
is no longer active. Mirrors the JavaScript SDK (packages/client/src/subscriptions/wildcard-subscription.ts).

Events: ``added`` (``WildcardChange(market, stream)``: its snapshot follows), ``removed``
(``WildcardRemoved(market, stream, reason)``: the stream has ended), ``error`` (``RelayClientError``:
a market the relay could not join yet, ``limit_exceeded`` or ``rate_limited``, or the ``"*"`` refused).
"""

from __future__ import annotations

from typing import Any, Dict, List, NamedTuple, Optional, get_args

from .errors import RelayClientError
from .events import Emitter, WildcardEvent
from .subscription import StreamSubscription

WILDCARD = "*"
#: The channels whose ``markets`` may be ``["*"]``.
WILDCARD_CHANNELS = ("price", "trades", "market")
#: Why a stream ends when its market left the wildcard.
NO_LONGER_ACTIVE = "market no longer active"


class WildcardChange(NamedTuple):
    market: str
    stream: StreamSubscription[Any]


class WildcardRemoved(NamedTuple):
    market: str
    stream: StreamSubscription[Any]
    reason: str


class WildcardHost:
    """What a wildcard needs from the client that owns it."""

    def adopt(self, channel: str, market: str) -> Optional[StreamSubscription[Any]]:
        """A new stream of ``channel`` for ``market``, held from now on but not subscribed by name;
        None when the client already holds that market by name (it stays the application's own)."""
        raise NotImplementedError

    def drop(self, stream: StreamSubscription[Any]) -> None:
        """The stream is no longer held through the wildcard."""
        raise NotImplementedError

    def release_wildcard(self, channel: str) -> None:
        """The application unsubscribed ``"*"``: stop it at the relay and forget it."""
        raise NotImplementedError

    def report_listener_error(self, error: BaseException) -> None:
        raise NotImplementedError


class WildcardSubscription(Emitter[WildcardEvent]):
    EVENTS = frozenset(get_args(WildcardEvent))

    def __init__(self, channel: str, host: WildcardHost) -> None:
        super().__init__()
        self.channel = channel
        #: Each market the wildcard holds now, with its stream.
        self.streams: Dict[str, StreamSubscription[Any]] = {}
        self._host = host
        # A "*" subscribe went out: the relay's next announcement is the whole of what it stands for.
        self._expecting_all = True
        self._closed = False

    def __repr__(self) -> str:
        return f"<WildcardSubscription {self.channel} *, {len(self.streams)} markets>"

    @property
    def closed(self) -> bool:
        return self._closed

    def unsubscribe(self) -> None:
        """Stops following the catalogue; every stream of the wildcard ends with status ``closed``."""
        if self._closed:
            return
        self._host.release_wildcard(self.channel)
        self.end("unsubscribed")

    def on_listener_error(self, error: BaseException, event: str) -> None:
        self._host.report_listener_error(error)

    # --- called by the client ----------------------------------------------------------------------

    def owns(self, stream: StreamSubscription[Any]) -> bool:
        return any(held is stream for held in self.streams.values())

    def request(self) -> Dict[str, Any]:
        """The ``"*"`` subscribe; after a reconnect it names where each stream may resume."""
        self._expecting_all = True
        request: Dict[str, Any] = {"op": "subscribe", "channel": self.channel, "markets": [WILDCARD]}
        points = {market: s.resume_point for market, s in self.streams.items() if s.resume_point is not None}
        if points:
            request["resume"] = points
        return request

    def joined(self, markets: List[str]) -> None:
        """A ``subscribed`` announcement: the markets joined (after a subscribe, every one it stands for)."""
        if self._closed:
            return
        if self._expecting_all:
            self._expecting_all = False
            for market in [m for m in self.streams if m not in markets]:
                self._remove(market, NO_LONGER_ACTIVE)
        for market in markets:
            held = self.streams.get(market)
            if held is not None and not held.closed:
                continue
            # A stream that ended (upstream did not know the market yet) is replaced by a new one.
            self.streams.pop(market, None)
            stream = self._host.adopt(self.channel, market)
            if stream is not None:
                self.streams[market] = stream
                self.emit("added", WildcardChange(market, stream))

    def left(self, markets: List[str]) -> None:
        """An ``unsubscribed`` announcement: these markets are no longer active."""
        for market in markets:
            self._remove(market, NO_LONGER_ACTIVE)

    def forget(self, stream: StreamSubscription[Any]) -> None:
        """The application unsubscribed one of the streams by itself."""
        for market in [m for m, held in self.streams.items() if held is stream]:
            del self.streams[market]

    def refused(self, error: RelayClientError) -> None:
        if not self._closed:
            self.emit("error", error)

    def end(self, reason: str) -> None:
        if self._closed:
            return
        self._closed = True
        for stream in self.streams.values():
            self._host.drop(stream)
            stream.end(reason)
        self.streams.clear()
        self._end_events()

    def _remove(self, market: str, reason: str) -> None:
        stream = self.streams.pop(market, None)
        if stream is None:
            return
        self._host.drop(stream)
        stream.end(reason)
        self.emit("removed", WildcardRemoved(market, stream, reason))
