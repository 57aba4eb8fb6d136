"""The requests the client sends and how relay messages name their stream: one ``subscribe`` per
(channel, depth) and 100 stream ids, with ``resume`` where a stream has a point. The ``rest`` channel
names its streams ``paths`` / ``path`` where every other channel says ``markets`` / ``market``
(docs/protocol.md "Client requests", "`rest` data")."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any, Dict, List, Optional, Tuple, Union

from .subscription import StreamKey, StreamSubscription

#: Stream ids per subscribe request (docs/protocol.md "Limits").
MARKETS_PER_REQUEST = 100
#: The bounds of a subscription's ``interval`` in ms (docs/protocol.md "Per-subscription options").
MIN_INTERVAL_MS, MAX_INTERVAL_MS = 100, 60_000


#: A ``price`` subscription's ``threshold``: a decimal string above 0 and at most "1", with at most 8
#: decimal places (docs/protocol.md "Per-subscription options").
MAX_THRESHOLD, MAX_THRESHOLD_DECIMALS = Decimal("1"), 8
_THRESHOLD_FORM = re.compile(r"\d+(\.\d{1,%d})?" % MAX_THRESHOLD_DECIMALS)


def checked_threshold(threshold: object) -> Optional[str]:
    """A ``price`` threshold as ``subscribe_price`` takes it (a string, so it stays exact); a value
    the relay would refuse raises, as a bad interval does."""
    if threshold is None:
        return None
    if not isinstance(threshold, str) or not _THRESHOLD_FORM.fullmatch(threshold) or not 0 < Decimal(threshold) <= MAX_THRESHOLD:
        raise ValueError('threshold must be a decimal string above 0 and at most "1", with at most 8 decimal places')
    return threshold


def checked_interval(interval: object) -> Optional[int]:
    """A pace as ``subscribe_…`` takes it; a value the relay would refuse raises, as a bad depth does."""
    if interval is None:
        return None
    if isinstance(interval, bool) or not isinstance(interval, int) or not MIN_INTERVAL_MS <= interval <= MAX_INTERVAL_MS:
        raise ValueError(f"interval must be a whole number of ms from {MIN_INTERVAL_MS} to {MAX_INTERVAL_MS}")
    return interval


#: The longest ``activity_id`` a ``since`` may name (docs/protocol.md "History since a time").
SINCE_MAX_ID_LENGTH = 128
_DATE_START = re.compile(r"^\d{4}-\d{2}-\d{2}")
_ISO_TIME = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2})?)(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$")


def read_time(what: str, value: object) -> Tuple[datetime, str]:
    """A time as ``since``, ``replay`` and ``history`` take it: an aware ``datetime`` or an ISO 8601
    string with its zone; returns it and the ISO text sent. Anything else raises ``ValueError``."""
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise ValueError(f"{what}: a datetime needs its time zone")
        return value, value.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    match = _ISO_TIME.match(value) if isinstance(value, str) else None
    if match is None:
        raise ValueError(f"{what}: {value!r} is not an ISO 8601 time with its zone (such as 2026-06-01T12:00:00Z)")
    whole, fraction, zone = match.groups()
    # datetime reads at most microseconds, and "Z" only from Python 3.11.
    micro = f".{(fraction or '0')[:6]:0<6}"
    return datetime.fromisoformat(whole + micro + ("+00:00" if zone == "Z" else zone)), str(value)


def checked_time_since(since: object, now: Optional[datetime] = None) -> Optional[str]:
    """A ``since`` of a channel answered from the relay's record (every channel but trades and candles,
    which read their own history: ``checked_since``): a time, not in the future (docs/protocol.md
    "History and replay")."""
    if since is None:
        return None
    at, text = read_time("since", since)
    if at > (now or datetime.now(timezone.utc)):
        raise ValueError(f"since: {text} is in the future")
    return text


def checked_since(since: object, now: Optional[datetime] = None) -> Optional[str]:
    """A ``since`` as ``subscribe_trades`` takes it: an aware ``datetime``, an ISO 8601 time with its zone
    (not in the future) or an ``activity_id`` (a string that does not start as a date); a value no relay
    would take raises ``ValueError``, as a bad depth does. A time past upstream's 24 hours is for a
    relay that records to answer from its record; one that does not refuses it (an ``error`` event)."""
    if since is None:
        return None
    if isinstance(since, datetime):
        at, text = read_time("since", since)
    elif isinstance(since, str) and 0 < len(since) <= SINCE_MAX_ID_LENGTH:
        if not _DATE_START.match(since):
            return since
        at, text = read_time("since", since)
    else:
        raise ValueError(f"since: expected an ISO 8601 time or an activity_id (1 to {SINCE_MAX_ID_LENGTH} characters)")
    if at > (now or datetime.now(timezone.utc)):
        raise ValueError(f"since: {text} is in the future")
    return text


def checked_candles_since(since: object, now: Optional[datetime] = None) -> Optional[str]:
    """A ``since`` as ``subscribe_candles`` takes it: a time as ``checked_since`` takes one (a range of
    candles starts at a time, not at an ``activity_id``). On a source upstream keeps no history of
    (``probability``), or past its 24 hours, only a relay that records answers it; one that does not
    refuses it (an ``error`` event)."""
    text = checked_since(since, now)
    if text is None:
        return None
    if not _DATE_START.match(text):
        raise ValueError(f"since: {text!r} is not an ISO 8601 time with its zone (a candles range starts at a time)")
    return text


def ids_field(channel: object) -> str:
    """Where a request or a ``subscribed`` reply lists its stream ids."""
    return "paths" if channel == "rest" else "markets"


def depth_of(message: Dict[str, Any]) -> Optional[int]:
    """Book messages name their depth (absent: the full book); other channels have none."""
    depth = message.get("depth")
    return depth if message.get("channel") == "book" and isinstance(depth, int) else None


def group_of(message: Dict[str, Any]) -> Optional[str]:
    """A grouped book's messages name its group step; other streams have none."""
    group = message.get("group")
    return group if message.get("channel") == "book" and isinstance(group, str) else None


def stream_key_of(message: Dict[str, Any]) -> Optional[StreamKey]:
    """The stream a relay message (snapshot, update, status, confirmed, stream error) is about."""
    channel = message.get("channel")
    stream_id = message.get("path" if channel == "rest" else "market")
    if not isinstance(channel, str) or not isinstance(stream_id, str):
        return None
    return StreamKey(channel, stream_id, depth_of(message), group_of(message))


def listed_ids(message: Dict[str, Any]) -> List[str]:
    """The stream ids a request or reply lists (empty when it lists none it can read)."""
    ids = message.get(ids_field(message.get("channel")))
    return [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []


def unsubscribe_request(stream: StreamSubscription[Any]) -> Dict[str, Any]:
    request: Dict[str, Any] = {"op": "unsubscribe", "channel": stream.channel, ids_field(stream.channel): [stream.market]}
    if stream.channel == "book":
        request["depth"] = stream.depth
    if stream.group is not None:
        request["group"] = stream.group
    return request


def subscribe_requests(streams: List[StreamSubscription[Any]]) -> List[Dict[str, Any]]:
    """One ``subscribe`` per (channel, depth, book group, interval, threshold, since) and 100 ids, with
    ``resume`` where a stream has a point."""
    Group = Tuple[str, Optional[int], Optional[str], Optional[int], Optional[str], Optional[str]]
    groups: Dict[Group, List[StreamSubscription[Any]]] = {}
    for stream in streams:
        key = (stream.channel, stream.depth, stream.group, stream.interval, stream.threshold, stream.since)
        groups.setdefault(key, []).append(stream)
    requests: List[Dict[str, Any]] = []
    for (channel, depth, step, interval, threshold, since), members in groups.items():
        for start in range(0, len(members), MARKETS_PER_REQUEST):
            chunk = members[start : start + MARKETS_PER_REQUEST]
            request: Dict[str, Any] = {"op": "subscribe", "channel": channel, ids_field(channel): [s.market for s in chunk]}
            if channel == "book":
                request["depth"] = depth
            if step is not None:
                request["group"] = step
            if interval is not None:
                request["interval"] = interval
            if threshold is not None:
                request["threshold"] = threshold
            if since is not None:  # a stream still waiting for its history has no state to resume
                request["since"] = since
            points = {s.market: s.resume_point for s in chunk if s.resume_point is not None and since is None}
            if points:
                request["resume"] = points
            requests.append(request)
    return requests


def adopt_rest_spelling(
    streams: Dict[StreamKey, StreamSubscription[Any]], requested: List[str], answered: List[str]
) -> None:
    """``rest``: the relay spells each path one way (docs/protocol.md "One spelling per path") and its
    ``subscribed`` lists the request's paths so, in order; a stream takes the relay's spelling, which
    its messages carry. A path whose spelling another held stream already has keeps its own."""
    if len(requested) != len(answered):
        return
    for given, spelled in zip(requested, answered):
        stream = streams.get(StreamKey("rest", given, None))
        if given == spelled or stream is None or StreamKey("rest", spelled, None) in streams:
            continue
        del streams[stream.key]
        stream.market = spelled
        streams[stream.key] = stream
