"""How the client routes each relay message (docs/protocol.md "Relay messages"): stream messages to
their stream, replies to the request in flight they answer, wildcard announcements to the channel's
wildcard (``wildcards.py``), a replay's messages to it (``history/replays.py``), and errors to what they concern. Mirrors the JavaScript SDK
(packages/client/src/relay-messages.ts). ``RelayClient`` (``client.py``) holds the streams and the connection.
"""

from __future__ import annotations

import asyncio
import json
import logging
from decimal import Decimal
from typing import Any, Callable, Dict, List, Optional, Set, Union, get_args

from .channels import CHANNELS
from .errors import RelayClientError
from .events import ClientEvent, Emitter
from .history import Replays
from .requests import adopt_rest_spelling, listed_ids, stream_key_of
from .subscription import StreamHost, StreamKey, StreamSubscription
from .wildcards import WILDCARD, WildcardSubscription

#: Pause before sending again a subscribe the relay refused as ``rate_limited``.
RATE_LIMIT_RETRY = 1.0
#: Request errors that may pass on retry; any other answer to a subscribe refuses its streams.
RETRYABLE = frozenset({"rate_limited", "internal", "upstream_unavailable"})

logger = logging.getLogger(__name__)


#: Exact numbers: a JSON number with a fraction becomes a Decimal, never a binary float. One decoder
#: for every frame: ``json.loads`` with an option would build a new one per call.
_load = json.JSONDecoder(parse_float=Decimal).decode


class RelayMessages(Emitter[ClientEvent], StreamHost):
    """The client's handling of what the relay sends; the state it reads is the client's."""

    EVENTS = frozenset(get_args(ClientEvent))

    _streams: Dict[StreamKey, StreamSubscription[Any]]
    _in_flight: Dict[Union[int, str], Dict[str, Any]]
    _timers: Set[asyncio.TimerHandle]
    _wildcards: Dict[str, WildcardSubscription]
    #: The replays running on the connection: messages carrying a replay's id go there.
    _replays: Replays
    #: Questions (``list``, ``update``) by id: each told its answer as it is dispatched, or None.
    _waiting: Dict[int, Callable[[Optional[Dict[str, Any]]], None]]

    def _send(self, request: Dict[str, Any]) -> None:
        raise NotImplementedError

    def _going_away(self, after: float) -> None:
        """The relay is draining: reconnect (to the next relay) in ``after`` seconds."""
        raise NotImplementedError

    def _on_frame(self, frame: Union[str, bytes]) -> None:
        try:
            message = _load(frame) if isinstance(frame, str) else None
        except ValueError as error:
            message = None
            detail = f"not JSON: {error}"
        else:
            detail = "a binary frame" if message is None else "not a message object"
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            logger.warning("a frame from the relay is not a message: %s", detail)
            self.emit("error", RelayClientError("malformed_frame", detail))
            return
        kind = message["type"]
        if self._replays.route(message):
            return
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
            wildcard = self._announcing_wildcard(message)
            if wildcard is not None:
                wildcard.left(listed_ids(message))
        elif kind == "error":
            self._on_error(message)
        elif kind == "subscriptions":
            self._settle(message)
        elif kind == "going_away":
            delay = message.get("reconnect_in_ms")
            if isinstance(delay, int) and not isinstance(delay, bool) and delay >= 0:
                self._going_away(delay / 1000)
            else:
                logger.warning("a malformed going_away from the relay: %r", delay)
                self.emit("error", RelayClientError("malformed_frame", "malformed going_away message"))

    def _settle(self, message: Dict[str, Any]) -> None:
        request_id = message.get("id")
        settle = self._waiting.pop(request_id, None) if isinstance(request_id, int) else None
        if settle is not None:
            settle(message)

    def _abandon_questions(self) -> None:
        """The connection closed or opened anew: no question sent before will be answered."""
        waiting = list(self._waiting.values())
        self._waiting.clear()
        for settle in waiting:
            settle(None)

    def _answered(self, request_id: object) -> Optional[Dict[str, Any]]:
        """The subscribe request a reply answers, no longer in flight."""
        return self._in_flight.pop(request_id, None) if isinstance(request_id, (int, str)) else None

    def _stream_of(self, message: Dict[str, Any]) -> Optional[StreamSubscription[Any]]:
        key = stream_key_of(message)
        return self._streams.get(key) if key is not None else None

    def _announcing_wildcard(self, message: Dict[str, Any]) -> Optional[WildcardSubscription]:
        """The wildcard a ``subscribed`` or ``unsubscribed`` without ``id`` announces markets of."""
        if message.get("wildcard") is not True or "id" in message:
            return None
        return self._wildcards.get(str(message.get("channel")))

    def _on_subscribed(self, message: Dict[str, Any]) -> None:
        wildcard = self._announcing_wildcard(message)
        if wildcard is not None:  # its streams first: the announcement's recovered are theirs
            wildcard.joined(listed_ids(message))
        request = self._answered(message.get("id"))
        if request is not None and request["channel"] == "rest":
            adopt_rest_spelling(self._streams, listed_ids(request), listed_ids(message))
        history = message.get("history")
        if isinstance(history, dict) and isinstance(history.get("from"), str) and isinstance(history.get("complete"), bool):
            # The answer to a ``since``: where it starts, told to each stream it names before its snapshot.
            for stream_id in listed_ids(message):
                stream = self._stream_of({**message, "market": stream_id, "path": stream_id})
                if stream is not None:
                    stream.history = {"from": history["from"], "complete": history["complete"]}
        recovered = message.get("recovered")
        if isinstance(recovered, dict):
            for stream_id, value in recovered.items():
                stream = self._stream_of({**message, "market": stream_id, "path": stream_id})
                if stream is not None:
                    stream.resumed(value is True)
        self._settle(message)

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
        logger.warning("the relay reported %s (channel %s, %s)", error, channel, market)
        self._settle(message)
        targets: List[StreamSubscription[Any]] = []
        # A ``since`` history that failed after ``subscribed`` names its request's id and the market: the
        # relay left that stream (docs/protocol.md "History since a time").
        after_subscribed = isinstance(market, str) and request_id is not None
        if isinstance(market, str):
            targets = [s for s in self._streams.values() if s.channel == channel and s.market == market]
            wildcard = self._wildcards.get(str(channel))
            if not targets and wildcard is not None:  # a market the wildcard could not join (yet)
                wildcard.refused(error)
        else:
            # Without an id, the relay answers requests in order: the oldest one in flight.
            request = self._answered(request_id if request_id is not None else next(iter(self._in_flight), None))
            if request is not None and listed_ids(request) == [WILDCARD]:
                self._wildcard_refused(request["channel"], error)
            elif request is not None:
                for requested in listed_ids(request):
                    key = StreamKey(request["channel"], requested, request.get("depth"), request.get("group"))
                    stream = self._streams.get(key)
                    if stream is not None:
                        targets.append(stream)
                if code == "rate_limited":
                    self._retry_later(targets)
        self.emit("error", error)
        refused = request_id is not None and (after_subscribed or code not in RETRYABLE)
        for stream in targets:
            stream.receive_error(error)
            if refused:  # asking again on every reconnect would fail the same way
                stream.end(f"subscribe refused: {code}", error)
            if stream.closed:
                self._streams.pop(stream.key, None)

    def _wildcard_refused(self, channel: str, error: RelayClientError) -> None:
        """The ``"*"`` subscribe of ``channel`` failed: sent again later when the error may pass, else
        the wildcard ends."""
        held = self._wildcards.get(channel)
        if held is None:
            return
        wildcard = held
        wildcard.refused(error)
        if error.code not in RETRYABLE:
            del self._wildcards[channel]
            wildcard.end(f"subscribe refused: {error.code}")
            return

        def retry() -> None:
            self._timers.discard(timer)
            if not wildcard.closed:
                self._send(wildcard.request())

        timer = asyncio.get_running_loop().call_later(RATE_LIMIT_RETRY, retry)
        self._timers.add(timer)

    def _retry_later(self, streams: List[StreamSubscription[Any]]) -> None:
        def retry() -> None:
            self._timers.discard(timer)
            for stream in streams:
                if not stream.closed:
                    self.request_snapshot(stream)

        timer = asyncio.get_running_loop().call_later(RATE_LIMIT_RETRY, retry)
        self._timers.add(timer)
