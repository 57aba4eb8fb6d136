"""``client.history(...)``: one stream's recorded messages from the relay's NDJSON export
(``GET /v1/history/<channel>``, docs/history.md "Export"), read as they stream in: the body is read a
chunk at a time (in a worker thread, through the standard library's HTTP client, so the event loop is
never blocked) and cut into lines, each read as the live path reads a frame (numbers with a fraction
as ``Decimal``), so that a range of any length is held one chunk at a time."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.parse
import urllib.request
from datetime import datetime
from decimal import Decimal
from typing import Any, AsyncIterator, Dict, Optional, Union

from ..book import BookDepthOption, book_depth, book_group
from ..channels import canonical_stream_id
from ..errors import RelayClientError
from ..requests import read_time

#: Bytes read from the body at a time.
CHUNK_BYTES = 64 * 1024

_load = json.JSONDecoder(parse_float=Decimal).decode


def history_url(
    socket_url: str,
    channel: str,
    market: str,
    from_: Union[str, datetime],
    to: Union[str, datetime, None] = None,
    depth: BookDepthOption = None,
    group: Optional[str] = None,
) -> str:
    """The export's URL on the HTTP origin of a relay's socket URL, the query checked as the relay
    checks it (``ValueError`` for a value it would refuse)."""
    start, start_text = read_time("from", from_)
    query = {"market": canonical_stream_id(channel, market), "from": start_text}
    if to is not None:
        end, query["to"] = read_time("to", to)
        if start >= end:
            raise ValueError(f"from: {start_text} is not before to: {query['to']}")
    if channel == "book":
        level = book_depth(depth)
        query["depth"] = "full" if level is None else str(level)
        step = book_group(group)
        if step is not None:
            query["group"] = step
    elif depth is not None or group is not None:
        raise ValueError(f"depth and group are a book's, not {channel}'s")
    query["format"] = "ndjson"
    parts = urllib.parse.urlsplit(socket_url)
    scheme = "https" if parts.scheme in ("wss", "https") else "http"
    # A relay behind a path prefix keeps it: only the transport's own last part is replaced.
    prefix = parts.path
    for transport in ("/v1/ws", "/v1/sse"):
        if prefix.rstrip("/").endswith(transport):
            prefix = prefix.rstrip("/")[: -len(transport)]
    path = f"{prefix.rstrip('/')}/v1/history/{urllib.parse.quote(channel)}"
    return urllib.parse.urlunsplit((scheme, parts.netloc, path, urllib.parse.urlencode(query), ""))


async def read_history(url: str, headers: Dict[str, str]) -> AsyncIterator[Dict[str, Any]]:
    """The recorded messages of ``url``, in order. A refusal (a 4xx with the relay's ``{error,
    message}``) raises ``history_refused`` naming the relay's code; a line that is not a stream message
    raises ``malformed_frame``."""
    response = await asyncio.to_thread(_open, url, headers)
    try:
        pending = b""
        while True:
            chunk: bytes = await asyncio.to_thread(response.read1, CHUNK_BYTES)
            pending += chunk
            lines = pending.split(b"\n")
            pending = lines.pop() if chunk else b""
            for line in lines:
                if line.strip():
                    yield _message(line)
            if not chunk:
                return
    finally:
        # Left early: the rest of the body is not read.
        response.close()


def _open(url: str, headers: Dict[str, str]) -> Any:
    request = urllib.request.Request(url, headers=headers)
    try:
        return urllib.request.urlopen(request)  # noqa: S310 - the relay's own http(s) URL
    except urllib.error.HTTPError as refused:
        body = refused.read().decode("utf-8", "replace")
        detail = body[:200]
        try:
            parsed = json.loads(body)
            if isinstance(parsed, dict) and isinstance(parsed.get("error"), str):
                detail = f"{parsed['error']}: {parsed.get('message', '')}"
        except ValueError:
            pass  # not the relay's JSON (a proxy's page): its first bytes say what it is
        raise RelayClientError("history_refused", f"history export answered {refused.code}: {detail}") from None
    except urllib.error.URLError as failed:
        raise RelayClientError("connection_failed", f"history export: {failed.reason}") from None


def _message(line: bytes) -> Dict[str, Any]:
    try:
        message = _load(line.decode("utf-8"))
    except ValueError as error:
        raise RelayClientError("malformed_frame", f"history line is not JSON: {error}") from None
    if not isinstance(message, dict) or message.get("type") not in ("snapshot", "update"):
        raise RelayClientError("malformed_frame", f"history line is not a stream message: {line[:120]!r}")
    return message
