"""One ``replay`` (docs/protocol.md "History and replay") as the application reads it: ``async for item
in replay``, each recorded message applied to its market's stream as it is read, so that the state
after it is there to read (a book at every step, its checksum verified as the live path verifies it);
a hole in the record comes as a ``ReplayGap``, a lost continuity (a checksum that does not match, a
``seq`` gap) as a ``ReplayResync``; the loop ends at the relay's ``replayed`` (then ``result``).
Leaving the loop early sends ``replay_stop`` (as the loop's generator is closed; ``async with`` or
``await replay.stop()`` say it at once). Messages are applied when read, not when they arrive: a
reader slower than the relay still sees each state as it stood after its message."""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any, AsyncIterator, Callable, Deque, Dict, List, Literal, NamedTuple, Optional, Union

from ..channel_data import ReplayedMessage, ReplayGapMessage
from ..errors import RelayClientError
from ..events import Resync, StreamChange
from ..json_streams import CandlesSubscription, RestSubscription
from ..streams import (
    BookSubscription,
    MarketsSubscription,
    MarketSubscription,
    OracleSubscription,
    OrdersSubscription,
    PriceSubscription,
    ProbabilitiesSubscription,
    TradesSubscription,
)
from ..subscription import StreamHost, StreamSubscription


class ReplayMessage(NamedTuple):
    """A recorded message as it was sent, and its market's state after it (verified; never changed)."""

    market: str
    message: Dict[str, Any]
    state: Any
    #: The market's replayed stream: ``epoch``, ``seq``, ``confirmed_at`` as of this message.
    stream: StreamSubscription[Any]
    type: Literal["message"] = "message"


class ReplayGap(NamedTuple):
    """Nothing was recorded of ``gap["market"]`` between ``gap["from"]`` and ``gap["to"]``."""

    gap: ReplayGapMessage
    type: Literal["gap"] = "gap"


class ReplayResync(NamedTuple):
    """The market's record lost continuity here: its state stays the last verified one, and its
    updates are skipped until the record's next snapshot."""

    market: str
    reason: str
    detail: str
    type: Literal["resync"] = "resync"


ReplayItem = Union[ReplayMessage, ReplayGap, ReplayResync]

#: The stream kind each channel's replayed messages are kept in (a book's is made with its depth).
_KINDS: Dict[str, Callable[[StreamHost, str], StreamSubscription[Any]]] = {
    "price": PriceSubscription,
    "trades": TradesSubscription,
    "market": MarketSubscription,
    "probabilities": ProbabilitiesSubscription,
    "oracle": OracleSubscription,
    "orders": OrdersSubscription,
    "markets": MarketsSubscription,
    "rest": RestSubscription,
    "candles": CandlesSubscription,
}


class _DetachedHost(StreamHost):
    """A host that asks the relay nothing: a record cannot be asked again for a snapshot."""

    def __init__(self, report: Callable[[BaseException], None]) -> None:
        self._report = report

    def request_snapshot(self, stream: StreamSubscription[Any]) -> None:
        pass

    def release(self, stream: StreamSubscription[Any]) -> None:
        pass

    def report_listener_error(self, error: BaseException) -> None:
        self._report(error)


class Replay:
    """``async for item in client.replay(...)``; read once."""

    def __init__(
        self,
        replay_id: str,
        channel: str,
        depth: Optional[int],
        group: Optional[str],
        stop: Callable[[], None],
        forget: Callable[[], None],
        report_listener_error: Callable[[BaseException], None],
    ) -> None:
        self.id = replay_id
        self.channel = channel
        #: The relay's last word once the loop has ended: how many messages, whether stopped.
        self.result: Optional[ReplayedMessage] = None
        self._depth, self._group = depth, group
        self._stop, self._forget = stop, forget
        self._host = _DetachedHost(report_listener_error)
        self._streams: Dict[str, StreamSubscription[Any]] = {}
        self._queue: Deque[Dict[str, Any]] = deque()
        self._arrived = asyncio.Event()
        self._failure: Optional[RelayClientError] = None
        self._iterated = False
        self._ended = False

    def __repr__(self) -> str:
        return f"<Replay {self.id} {self.channel}>"

    def receive(self, message: Dict[str, Any]) -> None:
        """A message of this replay, kept until the reader asks for it."""
        self._queue.append(message)
        self._arrived.set()

    def fail(self, error: RelayClientError) -> None:
        """The replay cannot go on (the connection closed): the reader's loop raises ``error``."""
        if self._failure is None:
            self._failure = error
        self._arrived.set()

    async def stop(self) -> None:
        """Stops the replay at the relay (``replay_stop``); the loop, if one runs, ends."""
        self._stop_now()

    def _stop_now(self) -> None:
        if not self._ended:
            self._ended = True
            self._stop()
            self._forget()
        self._arrived.set()

    async def __aenter__(self) -> "Replay":
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.stop()

    def __aiter__(self) -> AsyncIterator[ReplayItem]:
        if self._iterated:
            raise RuntimeError(f"replay {self.id} is read once")
        self._iterated = True
        return self._items()

    async def _items(self) -> AsyncIterator[ReplayItem]:
        try:
            while True:
                if self._ended:
                    return  # stopped: what was still on its way is dropped
                if not self._queue:
                    if self._failure is not None:
                        raise self._failure
                    self._arrived.clear()
                    await self._arrived.wait()
                    continue
                message = self._queue.popleft()
                kind = message.get("type")
                if kind == "replayed":
                    self.result = message  # type: ignore[assignment]  # its shape checked by Replays.route
                    self._ended = True
                    return
                if kind == "error":
                    self._ended = True
                    raise RelayClientError(
                        str(message.get("code")), str(message.get("message", "")), request_id=self.id
                    )
                if kind == "replay_gap":
                    yield ReplayGap(message)  # type: ignore[arg-type]  # its shape checked by Replays.route
                    continue
                item = self._apply(message)
                if item is not None:
                    yield item
        finally:
            # Left early (break, an exception in the loop's body): the relay is told to stop.
            if self._failure is None:
                self._stop_now()
            self._forget()

    def _apply(self, message: Dict[str, Any]) -> Optional[ReplayItem]:
        market = str(message.get("path" if self.channel == "rest" else "market"))
        stream = self._stream(market)
        outcome: List[ReplayItem] = []

        def applied(change: StreamChange) -> None:
            outcome.append(ReplayMessage(market, change.message, change.state, stream))

        def resynced(resync: Resync) -> None:
            outcome.append(ReplayResync(market, resync.reason, resync.detail))

        removers = [stream.on("snapshot", applied), stream.on("update", applied), stream.on("resync", resynced)]
        try:
            stream.receive(message)
        finally:
            for remove in removers:
                remove()
        return outcome[-1] if outcome else None

    def _stream(self, market: str) -> StreamSubscription[Any]:
        stream = self._streams.get(market)
        if stream is None:
            if self.channel == "book":
                stream = BookSubscription(self._host, market, self._depth, self._group)
            else:
                stream = _KINDS[self.channel](self._host, market)
            self._streams[market] = stream
        return stream
