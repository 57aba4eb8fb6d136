"""The streams whose state is plain JSON checked by the canonical-JSON checksum (``canonical_json.py``):
``rest`` (any public GET path of upstream, kept by RFC 6902 JSON Patches; docs/protocol.md "`rest`
data") and ``candles`` (a market's candles of one interval and source; "`candles` data"). Mirrors the
JavaScript SDK's (packages/client/src/subscriptions/rest-subscription.ts, channel-streams.ts)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, cast

import jsonpatch
from jsonpointer import JsonPointerException

from .canonical_json import json_checksum
from .channel_data import Candle, CandlesState, CandlesStream, JsonValue
from .channels import ChannelFormatError
from .subscription import StreamHost, StreamSubscription

#: What a patch that cannot be applied raises (a missing member, a bad index, a failed ``test``,
#: operations that are not a patch).
_PATCH_FAILURES = (jsonpatch.JsonPatchException, JsonPointerException, TypeError, KeyError, IndexError, ValueError)


class RestSubscription(StreamSubscription[JsonValue]):
    """A ``rest`` stream: ``state`` is the body as upstream served it (decimal strings stay strings,
    numbers ``int`` or ``Decimal``). A patch that does not apply counts as a checksum mismatch: the
    stream resyncs from a new snapshot."""

    channel = "rest"

    def __init__(self, host: StreamHost, path: str) -> None:
        super().__init__(host, path)
        self._broken = False

    @property
    def path(self) -> str:
        """The stream's path (its id), as the relay spells it once ``subscribed`` answered."""
        return self.market

    def state_of(self, data: Any) -> JsonValue:
        return cast(JsonValue, data)

    def apply(self, state: JsonValue, data: Any) -> JsonValue:
        self._broken = False
        if not isinstance(data, list):  # a patch is a list of operations (a string would be parsed as one)
            self._broken = True
            return state
        try:
            # A new object (the library copies the document): the state held before stays as it was.
            return cast(JsonValue, jsonpatch.apply_patch(state, data))
        except _PATCH_FAILURES:
            self._broken = True
            return state

    def verify(self, state: JsonValue, message: Dict[str, Any]) -> bool:
        broken, self._broken = self._broken, False
        return not broken and json_checksum(state) == message.get("checksum")


#: A snapshot carries at most this many of the most recent candles, and a client keeps as many.
CANDLES_SNAPSHOT_SIZE = 200

def _candles(raw: Any) -> List[Candle]:
    candles = raw.get("candles") if isinstance(raw, dict) else None
    if not isinstance(candles, list) or not all(
        isinstance(candle, dict) and isinstance(candle.get("start"), str) for candle in candles
    ):
        raise ChannelFormatError("candles is not a list of candles with a start")
    return candles


def candles_from_snapshot(raw: Any) -> CandlesState:
    return tuple(_candles(raw)[-CANDLES_SNAPSHOT_SIZE:])


def apply_candles_update(state: CandlesState, raw: Any) -> CandlesState:
    """Each candle of the update replaces the one of the same ``start`` or joins in time order; the
    most recent 200 are kept. Starts are the relay's ISO 8601 UTC times, one format, so they order as text."""
    by_start = {candle["start"]: candle for candle in state}
    for candle in _candles(raw):
        by_start[candle["start"]] = candle
    return tuple(by_start[start] for start in sorted(by_start))[-CANDLES_SNAPSHOT_SIZE:]


class CandlesSubscription(StreamSubscription[CandlesState]):
    """A ``candles`` stream (``market`` is ``<market>:<interval>:<source>``): the most recent candles,
    oldest first, each a dict as the relay sent it (``probability`` values as ``Decimal``, ``trades``
    values as decimal strings). ``final`` fires once per candle that closed after the subscription
    began (the first snapshot's final candles are history), with the candle as it stays; ``history``
    with the list of older final candles the snapshot of a subscription with ``since`` brings."""

    channel = "candles"
    EVENTS = StreamSubscription.EVENTS | {"final", "history"}

    def __init__(self, host: StreamHost, stream_id: str) -> None:
        super().__init__(host, stream_id)
        self._announced: Dict[str, None] = {}
        # Where the first snapshot stops being history: (start, whether a candle of that start counts).
        self._held_from: Optional[Tuple[str, bool]] = None

    @property
    def candles(self) -> CandlesStream:
        """The stream's ``CandlesStream(market, interval, source)``."""
        market, interval, source = self.market.split(":")
        return CandlesStream(market, interval, source)

    def state_of(self, data: Any) -> CandlesState:
        return candles_from_snapshot(data)

    def apply(self, state: CandlesState, data: Any) -> CandlesState:
        return apply_candles_update(state, data)

    def verify(self, state: CandlesState, message: Dict[str, Any]) -> bool:
        return json_checksum({"candles": list(state)}) == message.get("checksum")

    def accepted(self, message: Dict[str, Any], state: CandlesState) -> None:
        history = message["data"].get("history")
        if history is not None:
            self.emit("history", _candles({"candles": history}))
        candles = message["data"]["candles"]
        if self._held_from is None:
            self._held_from = _held_from(candles)
        start_from, inclusive = self._held_from
        for candle in candles:
            start = candle["start"]
            if candle.get("final") is not True or start in self._announced:
                continue
            if start < start_from or (start == start_from and not inclusive):
                continue
            self._announced[start] = None
            self.emit("final", candle)
        while len(self._announced) > 2 * CANDLES_SNAPSHOT_SIZE:
            del self._announced[next(iter(self._announced))]


def _held_from(candles: List[Candle]) -> Tuple[str, bool]:
    """The first snapshot's first open candle, or just after its last candle."""
    for candle in candles:
        if candle.get("final") is not True:
            return candle["start"], True
    return (candles[-1]["start"], False) if candles else ("", True)
