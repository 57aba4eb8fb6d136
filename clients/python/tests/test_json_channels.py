"""The channels whose state is JSON checked by the canonical-JSON checksum (``rest``, ``candles``) and
the catalogue (``markets``), without a relay: the examples of docs/protocol.md verify with this
package's code, numbers are written as the relay writes them, and a patch that does not apply or a
checksum that does not match asks for a new snapshot."""

import asyncio
import json
import re
from decimal import Decimal
from pathlib import Path

import pytest

from market_relay import CandlesSubscription, MarketsSubscription, RestSubscription, canonical_json, json_checksum
from market_relay.canonical_json import ecmascript_number
from market_relay.channels import canonical_stream_id, catalogue_stream_id
from market_relay.requests import adopt_rest_spelling, subscribe_requests, unsubscribe_request
from test_stream_state import RecordingHost

PROTOCOL = (Path(__file__).resolve().parents[3] / "docs" / "protocol.md").read_text("utf-8")
MARKET = "3f2b8c1e-5d4a-4e6b-9c7d-1a2b3c4d5e6f"


def protocol_examples(channel):
    """The stream messages of ``channel`` the protocol guide shows, parsed as the client parses frames."""
    lines = re.findall(r"^\{\"type\":\"(?:snapshot|update)\",\"channel\":\"%s\".*$" % channel, PROTOCOL, re.M)
    return [json.loads(line, parse_float=Decimal) for line in lines]


def run(scenario):
    return asyncio.run(scenario())


def test_canonical_json_sorts_members_and_drops_whitespace():
    assert canonical_json({"b": [1, "x"], "a": True}) == '{"a":true,"b":[1,"x"]}'
    assert json_checksum({"b": [1, "x"], "a": True}) == 3888204023  # docs/protocol.md "`rest` data"
    # Member names order by UTF-16 code units: U+1F600 (the pair 0xD83D 0xDE00) before U+FF5E, though
    # its code point is greater.
    assert canonical_json({"\uff5e": 2, "\U0001F600": 1, "a": None}) == '{"a":null,"\U0001F600":1,"\uff5e":2}'
    assert canonical_json(["\u00e9\n\"\\\u001f"]) == '["\u00e9\\n\\"\\\\\\u001f"]'


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("0.52", "0.52"), ("182344.5", "182344.5"), ("100", "100"), ("1E+2", "100"), ("123.4500", "123.45"),
        ("-0.0", "0"), ("1e20", "100000000000000000000"), ("1e21", "1e+21"), ("0.000001", "0.000001"),
        ("1e-7", "1e-7"), ("0.0000012", "0.0000012"), ("-2.5e-9", "-2.5e-9"), ("5e-324", "5e-324"),
        ("1.7976931348623157e308", "1.7976931348623157e+308"),
    ],
)
def test_numbers_are_written_as_ecmascript_writes_them(text, written):
    # The same as JSON.stringify of the double each text names (checked against Node).
    assert ecmascript_number(Decimal(text)) == written
    assert canonical_json([json.loads(text, parse_float=Decimal)]) == f"[{written}]"


def test_the_guides_rest_stream_verifies():
    async def scenario():
        snapshot, update = protocol_examples("rest")
        stream = RestSubscription(RecordingHost(), snapshot["path"])
        stream.receive(snapshot)
        assert stream.status == "live" and stream.state["positions"][0]["current_value"] == "61.20"
        before = stream.state
        stream.receive(update)
        assert stream.seq == update["seq"] and stream.status == "live"
        assert stream.state["total_value_usd"] == "63.60" and stream.state["positions"][0]["current_value"] == "63.60"
        assert before["total_value_usd"] == "61.20"  # the earlier state is a separate object
        assert stream.confirmed_at == update["rts"]

    run(scenario)


def test_a_rest_patch_that_does_not_apply_or_does_not_match_resyncs():
    async def scenario():
        snapshot, update = protocol_examples("rest")
        for bad in (
            {**update, "data": [{"op": "remove", "path": "/no/such/member"}]},
            {**update, "data": "not a patch"},
            {**update, "checksum": update["checksum"] + 1},
        ):
            host = RecordingHost()
            stream = RestSubscription(host, snapshot["path"])
            resyncs = []
            stream.on("resync", resyncs.append)
            stream.receive(snapshot)
            stream.receive(bad)
            assert [r.reason for r in resyncs] == ["checksum"] and host.snapshots_requested == 1
            assert stream.status == "resyncing" and stream.state == snapshot["data"]

    run(scenario)


def test_the_guides_candles_streams_verify_and_announce_candles_that_turn_final():
    async def scenario():
        probability_snapshot, probability_update, trades_snapshot = protocol_examples("candles")
        stream = CandlesSubscription(RecordingHost(), probability_snapshot["market"])
        finals = []
        stream.on("final", finals.append)
        stream.receive(probability_snapshot)
        assert stream.status == "live" and len(stream.state) == 3 and finals == []  # history is not announced
        stream.receive(probability_update)
        assert stream.status == "live" and [c["start"][11:16] for c in stream.state] == ["11:58", "11:59", "12:00", "12:01"]
        assert [c["start"][11:16] for c in finals] == ["12:00"] and finals[0]["close"] == Decimal("0.53")
        stream.receive(probability_update)  # an old seq: nothing again
        assert len(finals) == 1 and stream.candles == (MARKET, "1m", "probability")

        trades = CandlesSubscription(RecordingHost(), trades_snapshot["market"])
        trades.receive(trades_snapshot)
        assert trades.status == "live" and trades.state[0]["volume"] == "1250.5"

    run(scenario)


def test_the_catalogue_keeps_records_by_id_and_announces_listed_and_delisted_markets():
    async def scenario():
        other = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
        host = RecordingHost()
        catalogue = MarketsSubscription(host, "all")
        listed, delisted = [], []
        catalogue.on("listed", listed.append)
        catalogue.on("delisted", delisted.append)
        record = {"market_id": MARKET, "status": "ACTIVE", "volume": Decimal("182344.5")}
        base = {"channel": "markets", "market": "all", "epoch": "e1"}
        catalogue.receive({**base, "type": "snapshot", "seq": 4, "data": {MARKET: record}})
        assert catalogue.state == {MARKET: record} and listed == []
        new = {"market_id": other, "status": "ACTIVE"}
        catalogue.receive({**base, "type": "update", "seq": 5, "data": {other: new, MARKET: {**record, "status": "EXPIRED"}}})
        assert listed == [new] and catalogue.state[MARKET]["status"] == "EXPIRED"
        catalogue.receive({**base, "type": "update", "seq": 6, "data": {MARKET: None}})
        assert delisted == [MARKET] and list(catalogue.state) == [other]
        catalogue.receive({**base, "type": "update", "seq": 7, "data": {other: 3}})
        assert catalogue.status == "resyncing" and host.snapshots_requested == 1

    run(scenario)


def test_confirmed_advances_only_for_the_state_held():
    async def scenario():
        stream = MarketsSubscription(RecordingHost(), "active")
        seen = []
        stream.on("confirmed", seen.append)
        base = {"channel": "markets", "market": "active", "epoch": "e1"}
        stream.receive({**base, "type": "snapshot", "seq": 4, "rts": "2025-06-01T12:00:00.061Z", "data": {}})
        assert stream.confirmed_at == "2025-06-01T12:00:00.061Z"
        for message in (
            {**base, "seq": 5, "confirmed": "2025-06-01T12:00:09.000Z"},  # a later state than the one held
            {**base, "epoch": "e2", "seq": 4, "confirmed": "2025-06-01T12:00:09.000Z"},
            {**base, "seq": 4, "confirmed": "2025-06-01T11:59:00.000Z"},  # older than what is known
        ):
            stream.receive_confirmed({"type": "confirmed", **message})
        assert seen == [] and stream.confirmed_at == "2025-06-01T12:00:00.061Z"
        stream.receive_confirmed({"type": "confirmed", **base, "seq": 4, "confirmed": "2025-06-01T12:00:05.118Z"})
        assert seen == ["2025-06-01T12:00:05.118Z"] and stream.confirmed_at == seen[0]

    run(scenario)


def test_stream_ids_of_the_new_channels():
    assert catalogue_stream_id() == "all" and catalogue_stream_id("active", 3) == "active:3"
    assert canonical_stream_id("markets", "all:003") == "all:3"
    assert canonical_stream_id("candles", f"{MARKET.upper()}:1h:trades") == f"{MARKET}:1h:trades"
    assert canonical_stream_id("rest", "/api/tokens") == "/api/tokens"
    for channel, bad in (("markets", "open"), ("candles", f"{MARKET}:2m:trades"), ("rest", "api/tokens"), ("rest", "/" + "a" * 512)):
        with pytest.raises(ValueError):
            canonical_stream_id(channel, bad)


def test_rest_requests_name_paths_and_streams_take_the_relays_spelling():
    host = RecordingHost()
    stream = RestSubscription(host, "/api/markets/X/holders?type=yes")
    [request] = subscribe_requests([stream])
    assert request == {"op": "subscribe", "channel": "rest", "paths": ["/api/markets/X/holders?type=yes"]}
    streams = {stream.key: stream}
    adopt_rest_spelling(streams, request["paths"], ["/api/markets/x/holders?type=YES"])
    assert stream.path == "/api/markets/x/holders?type=YES" and list(streams) == [stream.key]
    assert unsubscribe_request(stream) == {"op": "unsubscribe", "channel": "rest", "paths": [stream.path]}
