"""market_relay: an asyncio client for the market-relay WebSocket protocol.

``connect(urls)`` returns a ``RelayClient`` that keeps a connection to one of its relays, resumes every
stream after a reconnect and resynchronises a stream whose ``seq``, epoch or checksum does not follow.
See the package README for a walk-through and docs/protocol.md in the repository for the wire protocol.
"""

from .backoff import Backoff, backoff_delay, reconnect_delay
from .book import (
    BookState,
    Level,
    apply_book_update,
    book_checksum,
    book_checksum_input,
    book_from_snapshot,
)
from .client import RelayClient, connect
from .connection import Closed, Opened, Reconnecting
from .errors import RelayClientError
from .streams import (
    BookSubscription,
    MarketClosed,
    MarketSubscription,
    OracleSubscription,
    OrdersSubscription,
    PriceSubscription,
    ProbabilitiesSubscription,
    TradesSubscription,
)
from .subscription import Resync, StatusChange, StreamChange, StreamSubscription

__all__ = [
    "Backoff",
    "BookState",
    "BookSubscription",
    "Closed",
    "Level",
    "MarketClosed",
    "MarketSubscription",
    "Opened",
    "OracleSubscription",
    "OrdersSubscription",
    "PriceSubscription",
    "ProbabilitiesSubscription",
    "Reconnecting",
    "RelayClient",
    "RelayClientError",
    "Resync",
    "StatusChange",
    "StreamChange",
    "StreamSubscription",
    "TradesSubscription",
    "apply_book_update",
    "backoff_delay",
    "book_checksum",
    "book_checksum_input",
    "book_from_snapshot",
    "connect",
    "reconnect_delay",
]
