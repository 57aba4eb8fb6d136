"""The one error type the client reports, with a stable ``code`` (docs/protocol.md "Error codes")."""

from __future__ import annotations

import asyncio
from typing import Optional, Union


class RelayClientError(Exception):
    """``code``: a protocol error code (``unknown_market``, ``rate_limited``, ...) or one of the
    client's own: ``connection_failed``, ``refused``, ``malformed_frame``, ``listener_threw``,
    ``closed``, ``connect_timeout``, ``history_refused`` (the history export refused the request: the
    message gives the HTTP status and the relay's code, such as ``history_off``). The error that caused it, if any, is its ``__cause__``."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        channel: Optional[str] = None,
        market: Optional[str] = None,
        request_id: Optional[Union[str, int]] = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.channel = channel
        self.market = market
        self.request_id = request_id


class ConnectTimeout(RelayClientError, asyncio.TimeoutError):
    """``await connect(..., timeout=...)`` found no relay in time (code ``connect_timeout``); its
    ``__cause__`` is the last failed attempt's ``connection_failed`` error, if one failed."""
