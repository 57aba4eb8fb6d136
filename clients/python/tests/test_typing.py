"""A type checker catches a misspelt event name, option or field: mypy --strict over a bot that
misspells them reports exactly those lines (skipped where mypy is not installed)."""

import os
from pathlib import Path

import pytest

BOT = '''
from market_relay import ClientOptions, connect

async def bot() -> None:
    client = connect("ws://relay:8080", heartbeat=5.0)
    book = client.subscribe_book("3f2b8c1e-5d4a-4e6b-9c7d-1a2b3c4d5e6f", depth=10)
    book.on("status", print)
    book.on("stauts", print)  # line 8
    client.on("reconect", print)  # line 9
    connect("ws://relay:8080", hearbeat=5.0)  # line 10
    ClientOptions(open_timeout="10")  # line 11
    async for trade in client.subscribe_trades("3f2b8c1e-5d4a-4e6b-9c7d-1a2b3c4d5e6f").trades():
        print(trade["price"], trade["prise"])  # line 13: a trade is a TradeEntry, not Any
    listed = await client.subscriptions()
    print(listed["subscriptions"][0]["sequence"])  # line 15
'''


def test_mypy_reports_misspelt_event_names_options_and_fields(tmp_path, monkeypatch):
    api = pytest.importorskip("mypy.api")
    bot = tmp_path / "bot.py"
    bot.write_text(BOT)
    monkeypatch.setenv("MYPYPATH", str(Path(__file__).resolve().parents[1] / "src"))
    # A cache the caller shares (test/clients/python-typing.test.ts checks the package first) saves
    # checking the package again.
    cache = os.environ.get("MYPY_CACHE_DIR") or str(tmp_path / "cache")
    report, errors, _ = api.run(["--strict", "--cache-dir", cache, str(bot)])
    lines = sorted({int(line.split(":")[1]) for line in report.splitlines() if line.startswith(str(bot)) and ": error:" in line})
    assert lines == [8, 9, 10, 11, 13, 15], report + errors
