"""market_relay: an asyncio client for the market-relay WebSocket protocol.

``connect(urls)`` returns a ``RelayClient`` (``await connect(urls, timeout=...)``: once connected) that
keeps a connection to one of its relays, resumes every stream after a reconnect and resynchronises a
stream whose ``seq``, epoch or checksum does not follow. It logs under ``market_relay``.
See the package README for a walk-through and docs/protocol.md in the repository for the wire protocol.
"""

from .backoff import Backoff, backoff_delay, reconnect_delay
from .book import (
    BOOK_GROUPS,
    BookDepth,
    BookDepthOption,
    BookState,
    Level,
    apply_book_update,
    book_checksum,
    book_checksum_input,
    book_from_snapshot,
)
from .canonical_json import canonical_json, json_checksum
from .channel_data import (
    Candle,
    CandlesState,
    CandlesStream,
    ConnectionLimits,
    JsonValue,
    LimitUse,
    MarketData,
    MarketListRecord,
    MarketsData,
    OracleData,
    OrderEntry,
    OrderMapState,
    PriceData,
    ProbabilitiesData,
    ProbabilityCandle,
    ProbabilityEntry,
    SubscriptionEntry,
    SubscriptionsMessage,
    TradeEntry,
    TradesCandle,
    TradesState,
)
from .client import RelayClient, connect
from .connection import Closed, Opened, Reconnecting
from .errors import ConnectTimeout, RelayClientError
from .events import (
    ClientEvent,
    EventStream,
    Resync,
    StatusChange,
    StreamChange,
    StreamEvent,
    SubscriptionStatus,
    WildcardEvent,
)
from .json_streams import CandlesSubscription, RestSubscription, apply_candles_update
from .options import ClientOptions
from .streams import (
    BookSubscription,
    CatalogueState,
    MarketClosed,
    MarketsSubscription,
    MarketSubscription,
    OracleSubscription,
    OrdersSubscription,
    PriceSubscription,
    ProbabilitiesSubscription,
    TradesSubscription,
)
from .subscription import StreamSubscription
from .wildcards import WildcardChange, WildcardRemoved, WildcardSubscription

__all__ = [
    "BOOK_GROUPS",
    "Backoff",
    "BookDepth",
    "BookDepthOption",
    "BookState",
    "BookSubscription",
    "Candle",
    "CandlesState",
    "CandlesStream",
    "CandlesSubscription",
    "CatalogueState",
    "ClientEvent",
    "ClientOptions",
    "Closed",
    "ConnectTimeout",
    "ConnectionLimits",
    "EventStream",
    "JsonValue",
    "Level",
    "LimitUse",
    "MarketClosed",
    "MarketData",
    "MarketListRecord",
    "MarketSubscription",
    "MarketsData",
    "MarketsSubscription",
    "Opened",
    "OracleData",
    "OracleSubscription",
    "OrderEntry",
    "OrderMapState",
    "OrdersSubscription",
    "PriceData",
    "PriceSubscription",
    "ProbabilitiesData",
    "ProbabilitiesSubscription",
    "ProbabilityCandle",
    "ProbabilityEntry",
    "Reconnecting",
    "RelayClient",
    "RelayClientError",
    "RestSubscription",
    "Resync",
    "StatusChange",
    "StreamChange",
    "StreamEvent",
    "StreamSubscription",
    "SubscriptionEntry",
    "SubscriptionStatus",
    "SubscriptionsMessage",
    "TradeEntry",
    "TradesCandle",
    "TradesState",
    "TradesSubscription",
    "WildcardChange",
    "WildcardEvent",
    "WildcardRemoved",
    "WildcardSubscription",
    "apply_book_update",
    "apply_candles_update",
    "backoff_delay",
    "book_checksum",
    "book_checksum_input",
    "book_from_snapshot",
    "canonical_json",
    "connect",
    "json_checksum",
    "reconnect_delay",
]
