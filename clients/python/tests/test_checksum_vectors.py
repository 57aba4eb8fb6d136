"""The checksum test vectors shared with the JavaScript SDK (clients/vectors/checksum-v1.json): every
step applies to its book, checksum input and checksum with this package's code."""

import json
from pathlib import Path

import pytest

from conftest import summed_by_hand
from market_relay import BookState, apply_book_update, book_checksum, book_checksum_input

VECTORS = json.loads((Path(__file__).resolve().parents[2] / "vectors" / "checksum-v1.json").read_text("utf-8"))


def test_the_file_is_version_1_with_cases():
    assert VECTORS["version"] == 1
    assert len(VECTORS["cases"]) >= 10


@pytest.mark.parametrize("case", VECTORS["cases"], ids=[case["name"] for case in VECTORS["cases"]])
def test_each_step_gives_its_book_and_checksum(case):
    book = BookState()
    for index, step in enumerate(case["steps"]):
        book = apply_book_update(BookState() if step["type"] == "snapshot" else book, step["data"])
        assert [list(level) for level in book.bids] == step["book"]["bids"], f"step {index}"
        assert [list(level) for level in book.asks] == step["book"]["asks"], f"step {index}"
        assert book.last_price == step["book"].get("last_price"), f"step {index}"
        assert book_checksum_input(book) == step["input"], f"step {index}"
        assert book_checksum(book) == step["checksum"], f"step {index}"


@pytest.mark.parametrize("case", [c for c in VECTORS["cases"] if "group" in c], ids=lambda case: case["name"])
def test_each_grouped_step_is_its_upstream_levels_summed_into_the_step(case):
    depth = case["depth"]
    for index, step in enumerate(case["steps"]):
        upstream = step["grouped_from"]
        bids, asks = summed_by_hand(upstream["bids"], upstream["asks"], case["group"])
        assert bids[:depth] == step["book"]["bids"], f"step {index}"
        assert asks[:depth] == step["book"]["asks"], f"step {index}"


def test_the_grouped_cases_are_there():
    assert {"group-0.05-full", "group-0.01-depth-5"} <= {c["name"] for c in VECTORS["cases"]}


def checksums(name):
    case = next(case for case in VECTORS["cases"] if case["name"] == name)
    return [step["checksum"] for step in case["steps"]]


def test_what_the_tricky_cases_show():
    beyond = checksums("beyond-25-levels")
    assert beyond[1] == beyond[0]  # the 27th bid is outside the checksum
    assert beyond[2] != beyond[1]
    size_text = checksums("size-text")
    assert len(set(size_text)) == 3  # "3.50" -> "3.5" and "0.10" -> "0.1" change the checksum
    last_price = checksums("last-price-only")
    assert last_price[0] == last_price[1]
    assert checksums("empty-book") == [0, checksums("empty-book")[1], 0]
