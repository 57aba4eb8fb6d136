"""The client's replays (docs/protocol.md "History and replay"): each ``replay`` request checked before
it is sent (a value the relay would refuse raises ``ValueError``, as a bad id does), sent when the
connection is open, and every message carrying its id (a replayed message's ``replay``, a
``replay_gap``, the closing ``replayed``, a refusal's ``id``) handed to it. A replay does not outlive
its connection: a close ends it with ``connection_failed`` (the application replays again from where
it got to). Mirrors packages/client/src/history/replays.ts."""

from __future__ import annotations

import json
import math
from datetime import datetime
from decimal import Decimal
from typing import Any, Callable, Dict, Optional, Sequence, Union

from ..book import BookDepthOption, book_depth, book_group
from ..channels import canonical_stream_id
from ..errors import RelayClientError
from ..requests import MARKETS_PER_REQUEST, read_time
from .replay import Replay

#: How a replay is paced: 1 = the original pacing, a multiplier of it, or "max".
ReplaySpeed = Union[int, float, Decimal, str]


def replay_request(
    replay_id: str,
    channel: str,
    markets: Sequence[str],
    from_: Union[str, datetime],
    to: Union[str, datetime, None] = None,
    speed: Optional[ReplaySpeed] = None,
    depth: BookDepthOption = None,
    group: Optional[str] = None,
) -> Dict[str, Any]:
    """The request, checked as the relay checks it."""
    if isinstance(markets, str) or not 0 < len(markets) <= MARKETS_PER_REQUEST:
        raise ValueError(f"markets: expected 1 to {MARKETS_PER_REQUEST} stream ids")
    ids = [canonical_stream_id(channel, market) for market in markets]
    start, start_text = read_time("from", from_)
    request: Dict[str, Any] = {"op": "replay", "id": replay_id, "channel": channel, "markets": ids, "from": start_text}
    if to is not None:
        end, request["to"] = read_time("to", to)
        if start >= end:
            raise ValueError(f"from: {start_text} is not before to: {request['to']}")
    if speed == "max":
        request["speed"] = "max"
    elif speed is not None:
        number = isinstance(speed, (int, float, Decimal)) and not isinstance(speed, bool)
        if not (number and 0 < float(speed) < math.inf):
            raise ValueError(f'speed: expected a number above 0 or "max", got {speed!r}')
        # A pace, not a price: a float carries it.
        request["speed"] = speed if isinstance(speed, int) else float(speed)
    if channel == "book":
        request["depth"] = book_depth(depth)
        step = book_group(group)
        if step is not None:
            request["group"] = step
    elif depth is not None or group is not None:
        raise ValueError(f"depth and group are a book's, not {channel}'s")
    return request


def _replay_id_of(message: Dict[str, Any]) -> Optional[str]:
    kind = message.get("type")
    if kind in ("snapshot", "update"):
        found = message.get("replay")
    elif kind in ("replay_gap", "replayed"):
        found = message.get("id")
    elif kind == "error":
        # Only a replay's own ids are strings of this form; other requests are numbered.
        found = message.get("id")
        if not (isinstance(found, str) and found.startswith("replay-")):
            return None
    else:
        return None
    return found if isinstance(found, str) else None


class Replays:
    def __init__(
        self,
        send: Callable[[str], bool],
        is_open: Callable[[], bool],
        report_listener_error: Callable[[BaseException], None],
    ) -> None:
        self._send, self._is_open, self._report = send, is_open, report_listener_error
        self._running: Dict[str, Replay] = {}
        #: Requests made while the connection was not open, sent as it opens.
        self._unsent: Dict[str, Dict[str, Any]] = {}
        self._next = 0
        #: Set once the client closed: a replay asked after that ends at once.
        self._ended: Optional[RelayClientError] = None

    def start(
        self,
        channel: str,
        markets: Sequence[str],
        from_: Union[str, datetime],
        to: Union[str, datetime, None] = None,
        speed: Optional[ReplaySpeed] = None,
        depth: BookDepthOption = None,
        group: Optional[str] = None,
    ) -> Replay:
        self._next += 1
        request = replay_request(f"replay-{self._next}", channel, markets, from_, to, speed, depth, group)
        replay_id = str(request["id"])

        def stop() -> None:
            if self._unsent.pop(replay_id, None) is None and self._is_open():
                self._send(json.dumps({"op": "replay_stop", "id": replay_id}))

        def forget() -> None:
            self._running.pop(replay_id, None)
            self._unsent.pop(replay_id, None)

        replay = Replay(replay_id, channel, request.get("depth"), request.get("group"), stop, forget, self._report)
        if self._ended is not None:
            replay.fail(self._ended)
            return replay
        self._running[replay_id] = replay
        if self._is_open():
            self._send(json.dumps(request))
        else:
            self._unsent[replay_id] = request
        return replay

    def route(self, message: Dict[str, Any]) -> bool:
        """Hands a message carrying a replay's id to that replay; False when it is no replay's."""
        replay_id = _replay_id_of(message)
        if replay_id is None:
            return False
        replay = self._running.get(replay_id)
        if replay is not None and self._well_formed(message):
            replay.receive(message)
            if message.get("type") in ("replayed", "error"):
                # The relay's last word: the replay keeps what it holds for its reader, the client forgets it.
                self._running.pop(replay_id, None)
        # A replay stopped or ended: what was still on its way is dropped.
        return True

    @staticmethod
    def _well_formed(message: Dict[str, Any]) -> bool:
        kind = message.get("type")
        if kind == "replay_gap":
            return all(isinstance(message.get(field), str) for field in ("market", "from", "to"))
        if kind == "replayed":
            count = message.get("messages")
            return isinstance(count, int) and not isinstance(count, bool)
        return True

    def opened(self) -> None:
        """The connection opened: the replays asked before are sent."""
        for request in self._unsent.values():
            self._send(json.dumps(request))
        self._unsent.clear()

    def closed(self, error: RelayClientError) -> None:
        """The connection closed: every replay sent on it ends with ``error``."""
        for replay_id, replay in list(self._running.items()):
            if replay_id not in self._unsent:
                replay.fail(error)

    def end(self) -> None:
        """The client closed: every replay ends."""
        error = RelayClientError("connection_failed", "the client is closed")
        self._ended = error
        for replay in list(self._running.values()):
            replay.fail(error)
        self._unsent.clear()
