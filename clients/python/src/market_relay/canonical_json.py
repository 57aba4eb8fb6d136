"""The checksum of the ``rest`` and ``candles`` channels: the CRC-32 of a state's RFC 8785 canonical
JSON (docs/protocol.md "`rest` data"), as the relay computes it (packages/protocol/src/protocol/json-patch.ts): no
whitespace, object members sorted by their names' UTF-16 code units, strings and numbers written as
ECMAScript's ``JSON.stringify`` writes them.

Numbers arrive as ``int`` or ``Decimal`` (the client never parses a binary float). The relay wrote
each as ECMAScript writes a double, the shortest digits that round-trip, so the digits of the
``Decimal`` are those digits and only the notation is ECMAScript's to restore (``1e+21``, ``1e-7``,
``0.000001``, no trailing zeros), exactly, without a float.
"""

from __future__ import annotations

import json
import zlib
from decimal import Decimal
from typing import Any, List


def canonical_json(value: Any) -> str:
    """RFC 8785 text of a JSON value (dict, list, str, int, Decimal, bool, None)."""
    parts: List[str] = []
    _write(value, parts)
    return "".join(parts)


def json_checksum(value: Any) -> int:
    """CRC-32 (IEEE, zlib's) of the value's canonical JSON in UTF-8, unsigned."""
    return zlib.crc32(canonical_json(value).encode("utf-8")) & 0xFFFFFFFF


def _write(value: Any, parts: List[str]) -> None:
    if isinstance(value, dict):
        parts.append("{")
        for index, key in enumerate(sorted(value, key=_utf16_order)):
            if not isinstance(key, str):
                raise ValueError(f"object member name {key!r} is not a string")
            if index:
                parts.append(",")
            parts.append(_string(key))
            parts.append(":")
            _write(value[key], parts)
        parts.append("}")
    elif isinstance(value, (list, tuple)):
        parts.append("[")
        for index, item in enumerate(value):
            if index:
                parts.append(",")
            _write(item, parts)
        parts.append("]")
    elif value is None or isinstance(value, bool):
        parts.append(json.dumps(value))
    elif isinstance(value, str):
        parts.append(_string(value))
    elif isinstance(value, (int, Decimal)):
        parts.append(ecmascript_number(value))
    else:
        raise ValueError(f"{type(value).__name__} is not a JSON value")


def _string(text: str) -> str:
    # Python's escaping with ensure_ascii off is JSON.stringify's: \" \\ \b \f \n \r \t, other
    # control characters as \u00xx, everything else as itself.
    return json.dumps(text, ensure_ascii=False)


def _utf16_order(key: Any) -> bytes:
    return key.encode("utf-16-be", "surrogatepass") if isinstance(key, str) else b""


def ecmascript_number(value: "int | Decimal") -> str:
    """ECMAScript's Number::toString notation of the number's digits (ECMA-262 6.1.6.1.20)."""
    number = Decimal(value)
    if not number.is_finite():
        raise ValueError(f"{value} is not a finite number")
    if number.is_zero():
        return "0"  # -0 too
    sign, digit_tuple, exponent = number.normalize().as_tuple()
    digits = "".join(map(str, digit_tuple))
    k = len(digits)
    n = int(exponent) + k  # the decimal point after n digits
    minus = "-" if sign else ""
    if k <= n <= 21:
        return minus + digits + "0" * (n - k)
    if 0 < n <= 21:
        return minus + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return minus + "0." + "0" * -n + digits
    power = n - 1
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{minus}{mantissa}e{'+' if power >= 0 else '-'}{abs(power)}"
