"""One subscribed stream as the application sees it: the last verified state, built from snapshot and
updates, with ``seq`` continuity, epoch and (on books) the checksum checked on every message
(docs/protocol.md "Sequencing, epochs and resume"). On a gap, a checksum mismatch, a bad message or an
update from another epoch it asks the client for a fresh snapshot and drops updates until it arrives.
The state machine mirrors the JavaScript SDK's (packages/client/src/subscriptions/stream-subscription.ts).

Events (``subscription.on(name, listener)``), each listener called with one payload:

- ``snapshot`` / ``update``: ``StreamChange(message, state)``, after the state was verified;
- ``resync``: ``Resync(reason, detail)``, reason ``gap``, ``checksum``, ``epoch`` or ``malformed``;
- ``resumed``: ``bool``, the relay's ``recovered`` answer to a resume after a reconnect;
- ``status``: ``StatusChange(status, reason)``;
- ``confirmed``: ``str``, the new ``confirmed_at``: upstream confirmed the state held, unchanged;
- ``error``: ``RelayClientError`` the relay reported for this stream.

``async for state in subscription`` gives the latest state (a slow loop skips some); ``changes()`` and
``events(...)`` give every event, in order (``events.py``). A stream that goes ``stale`` is logged as a
WARNING, and as an INFO when it is ``live`` again.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, AsyncIterator, Dict, Generic, NamedTuple, Optional, TypeVar

from .channel_data import HistoryCoverage
from .errors import RelayClientError
from .events import Emitter, EventStream, Resync, StatusChange, StreamChange, StreamEvent, SubscriptionStatus

State = TypeVar("State")

logger = logging.getLogger(__name__)

class StreamKey(NamedTuple):
    channel: str
    market: str
    depth: Optional[int]
    #: A grouped ``book``: its group step (docs/protocol.md "Grouped books").
    group: Optional[str] = None


class StreamHost:
    """What a stream needs from the client that owns it."""

    def request_snapshot(self, stream: "StreamSubscription[Any]") -> None:
        raise NotImplementedError

    def release(self, stream: "StreamSubscription[Any]") -> None:
        raise NotImplementedError

    def report_listener_error(self, error: BaseException) -> None:
        raise NotImplementedError

    async def change_depth(self, stream: "StreamSubscription[Any]", depth: Optional[int]) -> None:
        """Moves a book stream to ``depth`` at the relay (docs/protocol.md "update")."""
        raise NotImplementedError

    async def change_options(self, stream: "StreamSubscription[Any]", options: Dict[str, Any]) -> None:
        """Sets a stream's ``interval`` / ``threshold`` at the relay (docs/protocol.md "update"): None
        clears one, a key left out leaves it."""
        raise NotImplementedError


class StreamFormatError(ValueError):
    """A snapshot or update whose data is not its channel's shape."""


class StreamSubscription(Emitter[StreamEvent], Generic[State]):
    EVENTS = frozenset({"snapshot", "update", "resync", "resumed", "status", "confirmed", "error"})
    channel: str = ""
    #: ``book``: 1, 5, 10, 25, 50 or None (full book); other channels: None.
    depth: Optional[int] = None
    #: ``book``: the group step levels are summed into (docs/protocol.md "Grouped books"); None: ungrouped.
    group: Optional[str] = None

    def __init__(self, host: StreamHost, market: str) -> None:
        super().__init__()
        self.market = market
        #: The last verified state; None until the first snapshot. Each change is a new object.
        self.state: Optional[State] = None
        self.epoch: Optional[str] = None
        self.seq: Optional[int] = None
        #: When upstream last confirmed ``state`` (the relay's receive time, ISO 8601 text): the ``rts``
        #: of the last snapshot or update applied, or a later ``confirmed`` message for that state. It
        #: stops advancing while upstream does not answer (docs/protocol.md "Freshness of a quiet stream").
        self.confirmed_at: Optional[str] = None
        #: The pace asked for in ms (docs/protocol.md "Per-subscription options"): at most one message per
        #: interval, each a snapshot of the latest state; None: every change. Set by the client.
        self.interval: Optional[int] = None
        #: ``price``: the move of best bid, best ask or midpoint each message waits for (a decimal
        #: string; docs/protocol.md "Per-subscription options"), each a snapshot; None: every change.
        self.threshold: Optional[str] = None
        #: The history asked for the first snapshot (docs/protocol.md "History and replay"),
        #: until a snapshot arrives; then a reconnect resumes instead. Set by the client.
        self.since: Optional[str] = None
        #: The relay's answer to the last ``since`` asked (its ``subscribed`` reply, before the snapshot):
        #: ``from``, where the answer starts, and ``complete``, False where the record starts later.
        self.history: Optional[HistoryCoverage] = None
        self._host = host
        self._resyncing = False
        self._connection_down = False
        self._relay_state = "live"
        self._closed = False
        self._status: SubscriptionStatus = "pending"
        # A WARNING said the stream went stale: an INFO says when it is live again.
        self._reported_stale = False
        self._changed = asyncio.Event()
        self._version = 0
        #: The relay's error that ended the stream (``unknown_market``, a refused subscribe), if one did.
        self.ended_by: Optional[RelayClientError] = None

    def __repr__(self) -> str:
        depth = f" depth {self.depth}" if self.depth is not None else ""
        group = f" group {self.group}" if self.group is not None else ""
        return f"<{type(self).__name__} {self.market}{depth}{group} {self._status}>"

    @property
    def key(self) -> StreamKey:
        return StreamKey(self.channel, self.market, self.depth, self.group)

    @property
    def status(self) -> SubscriptionStatus:
        return self._status

    @property
    def closed(self) -> bool:
        return self._closed

    def unsubscribe(self) -> None:
        """Stops the stream at the relay; the subscription ends with status ``closed``."""
        if self._closed:
            return
        self._host.release(self)
        self.end("unsubscribed")

    async def wait_for_state(self, timeout: Optional[float] = None) -> State:
        """The state once the first snapshot is verified (at once if it is); ``asyncio.TimeoutError`` after
        ``timeout``. A stream that ends first raises ``RelayClientError``: with the code of the relay's
        error that ended it (``unknown_market``, ``forbidden`` ...; that error is its ``__cause__``),
        else ``closed``."""

        async def first() -> State:
            while self.state is None:
                if self._closed:
                    raise self._ended_error()
                await self._next_change()
            return self.state

        return await asyncio.wait_for(first(), timeout)

    def _ended_error(self) -> RelayClientError:
        cause = self.ended_by
        what = f"{self.channel} {self.market} closed before any state"
        error = RelayClientError(
            cause.code if cause is not None else "closed",
            f"{what}: {cause.message}" if cause is not None else what,
            channel=self.channel,
            market=self.market,
        )
        error.__cause__ = cause
        return error

    def __aiter__(self) -> AsyncIterator[State]:
        return self._latest_states()

    async def _latest_states(self) -> AsyncIterator[State]:
        """Latest-state iteration: a slow consumer skips intermediate states, never sees an unverified one."""
        seen = 0
        while True:
            if self._version > seen and self.state is not None:
                seen = self._version
                yield self.state
                continue
            if self._closed:
                return
            await self._next_change()

    def changes(self) -> "EventStream[StreamChange]":
        """Every verified change (``StreamChange`` of each ``snapshot`` and ``update``), in order, for
        ``async for``: unlike iterating the subscription itself, a slow loop misses none."""
        return self.events("snapshot", "update")

    async def _next_change(self) -> None:
        self._changed.clear()
        await self._changed.wait()

    def on_listener_error(self, error: BaseException, event: str) -> None:
        self._host.report_listener_error(error)

    # --- called by the client ----------------------------------------------------------------------

    @property
    def resume_point(self) -> Optional[Dict[str, Any]]:
        """Where to resume after a reconnect: only a state the stream still trusts."""
        if self._resyncing or self.epoch is None or self.seq is None:
            return None
        return {"epoch": self.epoch, "seq": self.seq}

    def receive(self, message: Dict[str, Any]) -> None:
        if self._closed:
            return
        if message["type"] == "snapshot":
            self._on_snapshot(message)
        else:
            self._on_update(message)

    def receive_status(self, message: Dict[str, Any]) -> None:
        if self._closed:
            return
        reason = message.get("reason")
        if message.get("state") == "closed":
            self.end(reason if isinstance(reason, str) else "market closed")
            return
        self._relay_state = "stale" if message.get("state") == "stale" else "live"
        self._refresh_status(reason if isinstance(reason, str) else None)

    def receive_confirmed(self, message: Dict[str, Any]) -> None:
        """Counts only for the state this stream holds: a confirmation of another ``seq`` says nothing of it."""
        if self._closed or self._resyncing or message.get("epoch") != self.epoch or message.get("seq") != self.seq:
            return
        confirmed = message.get("confirmed")
        # ISO 8601 times of one clock and format order as text.
        if not isinstance(confirmed, str) or (self.confirmed_at is not None and confirmed <= self.confirmed_at):
            return
        self.confirmed_at = confirmed
        self.emit("confirmed", confirmed)

    def receive_error(self, error: RelayClientError) -> None:
        if self._closed:
            return
        self.emit("error", error)
        # docs/protocol.md "Error codes": the market does not exist upstream; the relay dropped the stream.
        if error.code == "unknown_market":
            self.end(error.message, error)

    def resumed(self, recovered: bool) -> None:
        """The relay's answer to a resume: True means the missed updates follow (or none were missed)."""
        if self._closed:
            return
        self.emit("resumed", recovered)
        if recovered:
            self._connection_down = False
            self._refresh_status()

    def malformed(self, detail: str) -> None:
        if not self._closed and self.state is not None:
            self._resync("malformed", detail)

    def connection_lost(self) -> None:
        if self._closed:
            return
        self._connection_down = True
        self._relay_state = "live"
        self._refresh_status("connection lost")

    def end(self, reason: str, error: Optional[RelayClientError] = None) -> None:
        """Ends the stream for good; ``error``: the relay's error that ended it, if one did."""
        if self._closed:
            return
        self._closed = True
        self.ended_by = error
        if error is not None:
            logger.warning("%s ended by the relay's error %s", self, error)
        self._refresh_status(reason)
        self._changed.set()
        self._end_events()

    # --- channel specifics -------------------------------------------------------------------------

    def state_of(self, data: Any) -> State:
        raise NotImplementedError

    def apply(self, state: State, data: Any) -> State:
        raise NotImplementedError

    def verify(self, state: State, message: Dict[str, Any]) -> bool:
        """Whether a state matches the checksum its message carries (channels without one: always)."""
        return True

    def accepted(self, message: Dict[str, Any], state: State) -> None:
        """After a message was accepted and announced: where a channel emits its own events."""

    # --- state machine -----------------------------------------------------------------------------

    def _on_snapshot(self, message: Dict[str, Any]) -> None:
        self.since = None
        try:
            state = self.state_of(message.get("data"))
        except ValueError as error:
            self._resync("malformed", f"snapshot {message['epoch']}/{message['seq']}: {error}")
            return
        if not self.verify(state, message):
            self._resync("checksum", f"snapshot {message['epoch']}/{message['seq']} does not match its checksum")
            return
        # A new epoch means the numbering restarted (relay restart, lost state).
        if not self._resyncing and self.epoch is not None and self.epoch != message["epoch"]:
            self.emit("resync", Resync("epoch", f"epoch {self.epoch} replaced by {message['epoch']}"))
        self._accept(state, message)
        self.emit("snapshot", StreamChange(message, state))
        self.accepted(message, state)

    def _on_update(self, message: Dict[str, Any]) -> None:
        # Waiting for a snapshot: updates cannot be placed (docs/protocol.md "Maintaining a book" 2).
        if self.state is None or self._resyncing or self.seq is None:
            return
        if message["epoch"] != self.epoch:
            self._resync("epoch", f"update from epoch {message['epoch']} on a stream in epoch {self.epoch}")
            return
        seq = message["seq"]
        if seq <= self.seq:
            return  # already applied
        # A paced subscription's conflated update names the state it applies to (docs/protocol.md "interval").
        applies = message.get("prev_seq", seq - 1)
        if applies != self.seq:
            after = "" if "prev_seq" not in message else f" (from seq {applies})"
            self._resync("gap", f"update seq {seq}{after} after seq {self.seq}")
            return
        try:
            next_state = self.apply(self.state, message.get("data"))
        except ValueError as error:
            self._resync("malformed", f"update {seq}: {error}")
            return
        if not self.verify(next_state, message):
            self._resync("checksum", f"state after seq {seq} does not match its checksum")
            return
        self._accept(next_state, message)
        self.emit("update", StreamChange(message, next_state))
        self.accepted(message, next_state)

    def _accept(self, state: State, message: Dict[str, Any]) -> None:
        self.state = state
        self.epoch = message["epoch"]
        self.seq = message["seq"]
        rts = message.get("rts")
        self.confirmed_at = rts if isinstance(rts, str) else None
        self._resyncing = False
        self._connection_down = False
        self._version += 1
        self._refresh_status()
        self._changed.set()

    def _await_snapshot(self) -> None:
        """The relay moved the stream to other options: what it held stands until the new stream's
        snapshot replaces it; updates until then cannot be placed."""
        if self._closed:
            return
        self._resyncing = True
        self._refresh_status("options changed")

    def _resync(self, reason: str, detail: str) -> None:
        logger.warning("%s resynchronising (%s): %s", self, reason, detail)
        self._resyncing = True
        self.emit("resync", Resync(reason, detail))
        self._refresh_status(detail)
        self._host.request_snapshot(self)

    def _refresh_status(self, reason: Optional[str] = None) -> None:
        status = self._compute_status()
        if status == self._status:
            return
        self._status = status
        self._log_freshness(status, reason)
        self.emit("status", StatusChange(status, reason))

    def _log_freshness(self, status: SubscriptionStatus, reason: Optional[str]) -> None:
        """``stale`` is a WARNING (the state is last known, not current), ``live`` after it an INFO."""
        if status == "stale":
            self._reported_stale = True
            logger.warning("%s is stale: %s", self._stream_name(), reason or "the relay reports upstream failing")
        elif status == "live" and self._reported_stale:
            self._reported_stale = False
            logger.info("%s is live again", self._stream_name())

    def _stream_name(self) -> str:
        """The stream in a log line: ``book <market> depth 10``, ``price <market>``."""
        depth = f" depth {self.depth if self.depth is not None else 'full'}" if self.channel == "book" else ""
        return f"{self.channel} {self.market}{depth}"

    def _compute_status(self) -> SubscriptionStatus:
        if self._closed:
            return "closed"
        if self._resyncing:
            return "resyncing"
        if self.state is None:
            return "pending"
        if self._connection_down or self._relay_state == "stale":
            return "stale"
        return "live"
