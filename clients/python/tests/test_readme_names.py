"""Every name the README shows is importable from ``market_relay``: the classes it names (CamelCase
words) and whatever its examples import."""

import re
from pathlib import Path

import market_relay

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")

#: CamelCase words of the README that are not the package's: Python's, the protocol's, the JavaScript SDK's, prose.
NOT_OURS = {"JavaScript", "WebSocket", "TimeoutError", "ValueError", "TypedDict", "NamedTuple", "TypeError", "ACTIVE", "ConnectOptions", "PyPI"}


def readme_names():
    camel = set(re.findall(r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b", README))
    imported = set()
    for names in re.findall(r"from market_relay import \(?([^)\n]+)", README):
        imported.update(name.strip() for name in names.split(",") if name.strip())
    return sorted((camel | imported) - NOT_OURS)


def test_every_name_the_readme_uses_is_exported():
    names = readme_names()
    assert "WildcardSubscription" in names and "connect" in names
    missing = [name for name in names if name not in market_relay.__all__ or not hasattr(market_relay, name)]
    assert missing == []


def test_the_wildcard_names_import():
    from market_relay import WildcardChange, WildcardRemoved, WildcardSubscription  # noqa: F401
