"""Callbacks by event name, the same events as ``async for`` streams, and what a stream's events
carry. A listener may be a plain function or a coroutine function (run as a task); one that raises
never disturbs the client: the exception is logged with its traceback (logger
``market_relay.events``) and goes to ``on_listener_error``.

Event names are ``Literal`` types, so a type checker rejects a misspelt one; at run time a name the
object does not emit raises ``ValueError`` (``EVENTS`` lists each class's own).
"""

from __future__ import annotations

import asyncio
import collections
import functools
import inspect
import logging
import weakref
from typing import (
    Any,
    AsyncIterator,
    Callable,
    ClassVar,
    Deque,
    Dict,
    FrozenSet,
    Generic,
    List,
    Literal,
    NamedTuple,
    Optional,
    Set,
    TypeVar,
)


Listener = Callable[[Any], Any]

#: Events of the client.
ClientEvent = Literal["open", "close", "reconnecting", "status", "error"]
#: Events of a stream subscription: every stream's, then those a channel adds (``trade`` on trades,
#: ``closed`` on market, ``listed`` / ``delisted`` on markets, ``final`` and ``history`` on candles).
StreamEvent = Literal[
    "snapshot",
    "update",
    "resync",
    "resumed",
    "status",
    "confirmed",
    "error",
    "trade",
    "closed",
    "listed",
    "delisted",
    "final",
    "history",
]
#: Events of a wildcard subscription.
WildcardEvent = Literal["added", "removed", "error"]

#: A stream's status: ``pending`` (no snapshot yet), ``live``, ``stale`` (connection down or upstream
#: failing: the last known state), ``resyncing`` (the last verified state, a snapshot requested),
#: ``closed``.
SubscriptionStatus = Literal["pending", "live", "stale", "resyncing", "closed"]


# What a stream's events carry: the JavaScript SDK's payloads' fields (StreamEvents in
# packages/client/src/subscriptions/stream-subscription.ts).


class StreamChange(NamedTuple):
    """``snapshot`` and ``update``: the relay's message and the verified state it made."""

    message: Dict[str, Any]
    state: Any


class Resync(NamedTuple):
    """``resync``: ``reason`` is ``gap``, ``checksum``, ``epoch`` or ``malformed``."""

    reason: str
    detail: str


class StatusChange(NamedTuple):
    """``status``: the new status, and why when there is a reason to give."""

    status: SubscriptionStatus
    reason: Optional[str]

E = TypeVar("E", bound=str)
#: What an ``EventStream`` gives: the payload of its events.
P = TypeVar("P")

logger = logging.getLogger(__name__)


class Emitter(Generic[E]):
    #: The events this class emits: any other name given to ``on``, ``once``, ``off`` or ``events``
    #: raises ``ValueError``.
    EVENTS: ClassVar[FrozenSet[str]] = frozenset()

    def __init__(self) -> None:
        self._listeners: Dict[str, List[Listener]] = {}
        self._listener_tasks: Set["asyncio.Task[Any]"] = set()
        self._event_streams: "weakref.WeakSet[EventStream[Any]]" = weakref.WeakSet()
        self._events_ended = False

    def on(self, event: E, listener: Listener) -> Callable[[], None]:
        """Calls ``listener(payload)`` on each ``event``; returns the function that removes it."""
        self._known(event)
        self._listeners.setdefault(event, []).append(listener)
        return lambda: self.off(event, listener)

    def once(self, event: E, listener: Listener) -> Callable[[], None]:
        def wrapper(payload: Any) -> Any:
            self.off(event, wrapper)
            return listener(payload)

        return self.on(event, wrapper)

    def off(self, event: E, listener: Listener) -> None:
        self._known(event)
        listeners = self._listeners.get(event, [])
        if listener in listeners:
            listeners.remove(listener)

    def events(self, *names: E) -> "EventStream[Any]":
        """The payloads of these events as they come, every one in order, for ``async for``; it ends
        when the object closes (after the events before). Payloads wait in memory until read."""
        for name in names:
            self._known(name)
        stream: EventStream[Any] = EventStream()
        if self._events_ended:
            stream.end()
            return stream
        self._event_streams.add(stream)
        for name in names:
            self._listeners.setdefault(name, []).append(self._collector(name, stream))
        return stream

    def _collector(self, event: str, stream: "EventStream[Any]") -> Listener:
        """Feeds ``stream`` while the application holds it; then removes itself."""
        reference = weakref.ref(stream)

        def collect(payload: Any) -> None:
            held = reference()
            if held is None:
                self._listeners[event].remove(collect)
            else:
                held.push(payload)

        return collect

    def _known(self, event: str) -> None:
        if event not in self.EVENTS:
            raise ValueError(f"{type(self).__name__} has no event {event!r}; its events: {', '.join(sorted(self.EVENTS))}")

    def emit(self, event: str, payload: Any) -> None:
        for listener in list(self._listeners.get(event, ())):
            try:
                result = listener(payload)
            except Exception as error:  # noqa: BLE001 - a listener's bug must not break the client
                logger.exception("a listener of %r on %s raised", event, self)
                self.on_listener_error(error, event)
                continue
            if result is not None and inspect.isawaitable(result):
                task = asyncio.ensure_future(result)
                self._listener_tasks.add(task)
                task.add_done_callback(functools.partial(self._listener_done, event))

    def _end_events(self) -> None:
        """The object closed: every ``events()`` stream ends once read up to here."""
        self._events_ended = True
        for stream in list(self._event_streams):
            stream.end()

    def _listener_done(self, event: str, task: "asyncio.Task[Any]") -> None:
        self._listener_tasks.discard(task)
        error = None if task.cancelled() else task.exception()
        if error is not None:
            logger.error("a listener of %r on %s raised", event, self, exc_info=error)
            self.on_listener_error(error, event)

    def on_listener_error(self, error: BaseException, event: str) -> None:
        raise NotImplementedError


class EventStream(AsyncIterator[P]):
    """Events for ``async for`` (``Emitter.events``), each of type ``P`` (``trades()`` gives an
    ``EventStream[TradeEntry]``). The emitter holds it weakly: one the application dropped (a
    ``break`` out of its loop) stops collecting."""

    def __init__(self) -> None:
        self._queue: Deque[P] = collections.deque()
        self._waiter: Optional["asyncio.Future[None]"] = None
        self._ended = False

    def push(self, payload: P) -> None:
        if self._ended:
            return
        self._queue.append(payload)
        self._wake()

    def end(self) -> None:
        self._ended = True
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def __aiter__(self) -> "EventStream[P]":
        return self

    async def __anext__(self) -> P:
        while not self._queue:
            if self._ended:
                raise StopAsyncIteration
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        return self._queue.popleft()
