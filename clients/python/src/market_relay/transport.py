"""The little of the ``websockets`` library the client uses, across its two client APIs: the legacy
one (10.4, Debian's) and the asyncio one (13 and newer), which renamed the header option and the
refused-handshake error. Also the relay URL and the reading of a refused handshake or a close."""

from __future__ import annotations

import importlib
from typing import Any, Callable, Dict, Optional, Tuple
from urllib.parse import urlsplit, urlunsplit

from websockets.exceptions import ConnectionClosed, InvalidHandshake



def _client_api() -> Tuple[Callable[..., Any], str]:
    """The library's client ``connect`` and the name of its extra-headers option."""
    try:  # websockets >= 13
        return importlib.import_module("websockets.asyncio.client").connect, "additional_headers"
    except ImportError:  # websockets 10.4 .. 12
        return importlib.import_module("websockets.client").connect, "extra_headers"


_connect, _HEADERS_OPTION = _client_api()

__all__ = ["ConnectionClosed", "InvalidHandshake", "close_of", "open_socket", "refused_status", "relay_socket_url"]

#: Largest frame accepted: a full book or the probabilities of every market fits with room to spare.
MAX_FRAME_BYTES = 16 * 1024 * 1024


def relay_socket_url(url: str) -> str:
    """``http(s)://host:port`` or ``ws(s)://host:port`` gets the relay's ``/v1/ws`` path; a URL with
    another path is used as given (docs/protocol.md "Connecting")."""
    parts = urlsplit(url if "://" in url else f"ws://{url}")
    scheme = {"http": "ws", "https": "wss"}.get(parts.scheme, parts.scheme)
    if scheme not in ("ws", "wss"):
        raise ValueError(f"relay URL {url!r}: expected ws://, wss://, http:// or https://")
    path = parts.path if parts.path not in ("", "/") else "/v1/ws"
    return urlunsplit((scheme, parts.netloc, path, parts.query, ""))


async def open_socket(url: str, headers: Dict[str, str], open_timeout: float) -> Any:
    """An open connection. The relay pings the client and the client watches the relay's heartbeats,
    so the library's own keepalive pings are off."""
    options: Dict[str, Any] = {
        _HEADERS_OPTION: headers or None,
        "open_timeout": open_timeout,
        "ping_interval": None,
        "max_size": MAX_FRAME_BYTES,
    }
    return await _connect(url, **options)


def refused_status(error: BaseException) -> Optional[int]:
    """The HTTP status of a handshake the relay answered without upgrading, if that is what happened."""
    status = getattr(error, "status_code", None)  # legacy InvalidStatusCode
    if status is None:
        response = getattr(error, "response", None)  # InvalidStatus
        status = getattr(response, "status_code", None)
    return status if isinstance(status, int) else None


def close_of(error: ConnectionClosed) -> Tuple[Optional[int], str]:
    """The close code and reason the relay sent, when it sent a close frame."""
    received = error.rcvd
    return (received.code, received.reason) if received is not None else (None, "")
