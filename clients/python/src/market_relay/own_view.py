"""The client's questions about its own connection (docs/protocol.md "update", "list"): a book stream
moved to another depth in place, and the relay's list of what it holds for this connection. Each is
sent with an id and told its answer as the relay's message is dispatched (``relay_messages.py``), so
a book is registered under its new depth before the new depth's snapshot arrives. Mirrors the
JavaScript SDK (packages/client/src/relay-client.ts).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Callable, Dict, Optional, cast

from .channel_data import SubscriptionsMessage
from .errors import RelayClientError
from .relay_messages import RelayMessages
from .subscription import StreamKey, StreamSubscription


class OwnView(RelayMessages):
    _next_id: int

    def _send_text(self, text: str) -> bool:
        raise NotImplementedError

    def _ask(self, request: Dict[str, Any], answered: Callable[[Dict[str, Any]], Any]) -> "asyncio.Future[Any]":
        """Sends ``request``; the future gets what ``answered`` makes of the relay's answer, or the
        relay's error, or ``connection_failed`` when no answer will come."""
        future: "asyncio.Future[Any]" = asyncio.get_running_loop().create_future()

        def settle(message: Optional[Dict[str, Any]]) -> None:
            if future.done():
                return
            if message is None:
                future.set_exception(RelayClientError("connection_failed", "the connection closed or was not open: no answer"))
            elif message.get("type") == "error":
                request_id = message.get("id")
                future.set_exception(
                    RelayClientError(
                        str(message.get("code")),
                        str(message.get("message", "")),
                        request_id=request_id if isinstance(request_id, (int, str)) else None,
                    )
                )
            else:
                future.set_result(answered(message))

        self._next_id += 1
        request["id"] = self._next_id
        if self._send_text(json.dumps(request)):
            self._waiting[self._next_id] = settle
        else:
            settle(None)
        return future

    async def subscriptions(self) -> SubscriptionsMessage:
        """The relay's ``subscriptions`` answer to ``list``: each stream it holds for this connection
        (with the last epoch and seq it sent), the ``"*"`` subscriptions, and the connection's use of
        its limits. ``client.streams`` is the client's own side of the same."""
        return cast(SubscriptionsMessage, await self._ask({"op": "list"}, lambda message: message))

    async def list_subscriptions(self) -> SubscriptionsMessage:
        """``subscriptions()`` under its 0.2 name, kept so that 0.2 programs run."""
        return await self.subscriptions()

    async def change_depth(self, stream: StreamSubscription[Any], depth: Optional[int]) -> None:
        if self._streams.get(stream.key) is not stream:
            raise RelayClientError("bad_request", f"book {stream.market} is not subscribed")
        if depth != stream.depth and StreamKey("book", stream.market, depth, stream.group) in self._streams:
            raise RelayClientError("bad_request", f"book {stream.market} is already subscribed at depth {depth}")

        def moved(_message: Dict[str, Any]) -> None:
            if depth == stream.depth or stream.closed:
                return
            self._streams.pop(stream.key, None)
            stream.depth = depth
            self._streams[stream.key] = stream
            stream._await_snapshot()

        request = {"op": "update", "channel": "book", "markets": [stream.market], "depth": depth, "from_depth": stream.depth}
        request["from_group"] = stream.group
        await self._ask(request, moved)

    async def change_options(self, stream: StreamSubscription[Any], options: Dict[str, Any]) -> None:
        if self._streams.get(stream.key) is not stream:
            raise RelayClientError("bad_request", f"{stream.channel} {stream.market} is not subscribed")

        def changed(_message: Dict[str, Any]) -> None:
            if "interval" in options:
                stream.interval = options["interval"]
            if "threshold" in options:
                stream.threshold = options["threshold"]

        await self._ask({"op": "update", "channel": stream.channel, "markets": [stream.market], **options}, changed)
