"""What the tests share. The tests that need a relay read where it is from the environment, set by
the repository's test/clients/python*.test.ts, which start a simulator and relays and run these tests
against them (``npm test`` runs them): MARKET_RELAY_URL (or MARKET_RELAY_URLS and MARKET_RELAY_CONTROL
for failover), MARKET_RELAY_MARKET (an active market) and MARKET_RELAY_BOOK_RECORD (a file the depth-10
book's verified states are written to, for comparison with a JavaScript client's). Without them those
tests are skipped; the pure ones always run."""

import os
import sys
from pathlib import Path

import pytest

try:
    import market_relay  # noqa: F401 - installed (pip install ./clients/python)
except ImportError:  # a checkout without installing: test the source
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))


def env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.skip(f"{name} is not set: run through test/clients/python*.test.ts (npm test)")
    return value
