"""The aggregated order book as a client holds it, how a ``book`` update applies to it, and its checksum.

A port of the relay's reference (``packages/protocol/src/protocol/book.ts``; docs/protocol.md "Maintaining a book" and
"Checksum"). Prices and sizes stay the exact text the relay sent: the checksum is computed over that
text, so it is never parsed into a float nor reformatted. Prices are compared as ``Decimal``.
"""

from __future__ import annotations

import re
import zlib
from decimal import Decimal, InvalidOperation
from typing import Any, Dict, Iterable, List, Literal, NamedTuple, Optional, Sequence, Tuple, Union, cast

#: A book stream's depth (docs/protocol.md "`book` data"): the best 1, 5, 10, 25 or 50 levels per side,
#: or None for the full book (what a message's ``depth`` of null means).
BookDepth = Optional[Literal[1, 5, 10, 25, 50]]
#: What ``subscribe_book`` takes: a depth, or "full" (the same stream as None).
BookDepthOption = Union[BookDepth, Literal["full"]]
BOOK_DEPTHS: Tuple[int, ...] = (1, 5, 10, 25, 50)


def book_depth(depth: object) -> BookDepth:
    """The stream depth ``depth`` asks for ("full" and None: the full book); ValueError for any other."""
    if depth is None or depth == "full":
        return None
    # type() rather than ``in``: True == 1 and 10.0 == 10, and neither is a depth the relay takes.
    if type(depth) is int and depth in BOOK_DEPTHS:
        return cast(BookDepth, depth)
    raise ValueError(f"depth must be {', '.join(map(str, BOOK_DEPTHS))}, 'full' or None, got {depth!r}")


#: The group steps the relay offers (docs/protocol.md "Grouped books"): a grouped book sums its levels
#: into multiples of the step, bids rounded down and asks rounded up.
BOOK_GROUPS: Tuple[str, ...] = ("0.001", "0.002", "0.005", "0.01", "0.02", "0.05", "0.1")


def book_group(group: object) -> Optional[str]:
    """The offered step ``group`` names, in the relay's spelling ("0.050" is "0.05"; None: ungrouped);
    ValueError for any other, as the relay would answer ``bad_request``."""
    if group is None:
        return None
    if isinstance(group, str) and re.fullmatch(r"\d+(\.\d+)?", group):
        for step in BOOK_GROUPS:
            if Decimal(group) == Decimal(step):
                return step
    offered = ", ".join(f'"{step}"' for step in BOOK_GROUPS)
    raise ValueError(f"group must be one of {offered} (a decimal string) or None, got {group!r}")

#: docs/protocol.md "`book` update": exactly this size text means the level is gone.
REMOVED_SIZE = "0"

#: Levels per side the checksum covers (docs/protocol.md "Checksum": i = 0 .. 24).
CHECKSUM_LEVELS = 25

#: Up to this many changes to a side are placed one by one by binary search (an update touches a few
#: levels of a long side); more (a snapshot) rebuild the side and sort it once.
FEW_CHANGES = 16


class Level(NamedTuple):
    """One price level: the relay's decimal strings, unchanged."""

    price: str
    size: str

    def as_decimals(self) -> Tuple[Decimal, Decimal]:
        """The level as exact ``Decimal`` numbers, for arithmetic."""
        return Decimal(self.price), Decimal(self.size)


class BookState(NamedTuple):
    """A verified book: bids best (highest) first, asks best (lowest) first, one entry per price."""

    bids: Tuple[Level, ...] = ()
    asks: Tuple[Level, ...] = ()
    last_price: Optional[str] = None

    @property
    def best_bid(self) -> Optional[Level]:
        return self.bids[0] if self.bids else None

    @property
    def best_ask(self) -> Optional[Level]:
        return self.asks[0] if self.asks else None


class BookFormatError(ValueError):
    """A book message's data is not the protocol's shape."""


def _price_key(price: str) -> Decimal:
    try:
        value = Decimal(price)
    except InvalidOperation as error:
        raise BookFormatError(f"price {price!r} is not a decimal") from error
    if not value.is_finite():
        raise BookFormatError(f"price {price!r} is not a finite decimal")
    return value


def _levels(raw: Any, side: str) -> List[Level]:
    if not isinstance(raw, list):
        raise BookFormatError(f"{side} is not a list")
    levels: List[Level] = []
    for entry in raw:
        if (
            not isinstance(entry, list)
            or len(entry) != 2
            or not isinstance(entry[0], str)
            or not isinstance(entry[1], str)
        ):
            raise BookFormatError(f"{side} entry {entry!r} is not [price, size] strings")
        levels.append(Level(entry[0], entry[1]))  # the price is read (and checked) where it is placed
    return levels


def book_data(raw: Any) -> Tuple[List[Level], List[Level], Optional[str]]:
    """Reads a snapshot's or update's ``data``: (bids, asks, last_price or None). Raises BookFormatError."""
    if not isinstance(raw, dict):
        raise BookFormatError("data is not an object")
    last_price = raw.get("last_price")
    if last_price is not None and not isinstance(last_price, str):
        raise BookFormatError("last_price is not a string")
    return _levels(raw.get("bids", []), "bids"), _levels(raw.get("asks", []), "asks"), last_price


def book_from_snapshot(raw: Any) -> BookState:
    """A snapshot's data as a book: applied to the empty book, exactly as the reference does."""
    return apply_book_update(BookState(), raw)


def apply_book_update(state: BookState, raw: Any) -> BookState:
    """Applies an update's ``data``: size ``"0"`` removes a level, any other size sets it (with the
    update's price text); ``last_price`` replaced when present. Changes may come in any order; of
    several changes to one price the last one wins."""
    bids, asks, last_price = book_data(raw)
    return BookState(
        bids=_apply_side(state.bids, bids, best_first_descending=True),
        asks=_apply_side(state.asks, asks, best_first_descending=False),
        last_price=last_price if last_price is not None else state.last_price,
    )


def _apply_side(
    levels: Tuple[Level, ...], changes: Sequence[Level], best_first_descending: bool
) -> Tuple[Level, ...]:
    if not changes:
        return levels
    if len(changes) <= FEW_CHANGES:
        return _place_each(levels, changes, best_first_descending)
    by_price: Dict[Decimal, Level] = {_price_key(level.price): level for level in levels}
    for change in changes:  # in order: the last change to a price wins
        key = _price_key(change.price)
        if change.size == REMOVED_SIZE:
            by_price.pop(key, None)
        else:
            by_price[key] = change
    ordered = sorted(by_price.items(), key=lambda item: item[0], reverse=best_first_descending)
    return tuple(level for _, level in ordered)


def _place_each(levels: Tuple[Level, ...], changes: Sequence[Level], descending: bool) -> Tuple[Level, ...]:
    """Each change in turn (the last one to a price wins) at its place in the best-first ``levels``,
    found by binary search; only the prices it compares with are read as decimals."""
    side = list(levels)
    for change in changes:
        key = _price_key(change.price)
        low, high = 0, len(side)
        while low < high:
            middle = (low + high) // 2
            held = Decimal(side[middle].price)
            if (held > key) if descending else (held < key):
                low = middle + 1
            else:
                high = middle
        present = low < len(side) and Decimal(side[low].price) == key
        if change.size == REMOVED_SIZE:
            if present:
                del side[low]
        elif present:
            side[low] = change
        else:
            side.insert(low, change)
    return tuple(side)


def book_checksum_input(state: BookState) -> str:
    """The checksum's input: for i = 0 .. 24, ``bid[i].price:bid[i].size:`` if that bid exists, then
    ``ask[i].price:ask[i].size:`` if that ask exists; the final ``:`` dropped."""
    bids, asks = state.bids[:CHECKSUM_LEVELS], state.asks[:CHECKSUM_LEVELS]
    # A Level is a (price, size) tuple: bid + ask is the four texts of one i; then the longer side's rest.
    texts = [":".join(bid + ask) for bid, ask in zip(bids, asks)]
    if len(bids) != len(asks):
        paired = len(texts)
        texts.extend([":".join(level) for level in (bids[paired:] if len(bids) > paired else asks[paired:])])
    return ":".join(texts)


def book_checksum(state: BookState) -> int:
    """CRC-32 (IEEE, zlib's) of the UTF-8 checksum input, unsigned; an empty book gives 0."""
    return zlib.crc32(book_checksum_input(state).encode("utf-8")) & 0xFFFFFFFF


def levels_as_lists(levels: Iterable[Level]) -> List[List[str]]:
    """Levels in the wire's shape, ``[[price, size], ...]``."""
    return [[level.price, level.size] for level in levels]
