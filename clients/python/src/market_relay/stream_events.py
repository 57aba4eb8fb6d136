"""What a stream's events carry (``subscription.py`` emits them), and the statuses a stream goes
through. The same fields as the JavaScript SDK's payloads (packages/client/src/subscriptions/
stream-subscription.ts ``StreamEvents``): ``StreamChange`` is its ``{ message, state }``, ``Resync``
its ``{ reason, detail }``, ``StatusChange`` its ``{ status, reason }``."""

from __future__ import annotations

from typing import Any, Dict, Literal, NamedTuple, Optional

#: ``pending`` (no snapshot yet), ``live``, ``stale`` (connection down or upstream failing: the
#: last known state), ``resyncing`` (the last verified state, a snapshot requested), ``closed``.
SubscriptionStatus = Literal["pending", "live", "stale", "resyncing", "closed"]


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
