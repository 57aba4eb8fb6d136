"""The relay's record read back (docs/history.md): a ``replay`` as an async iterator whose messages are
applied to streams of the live kinds, each state verified as a live one is (``replay.py``); the
client's replays, checked, sent and fed by id (``replays.py``); and the NDJSON export read as it
streams (``export_reader.py``). Mirrors the JavaScript SDK's packages/client/src/history/."""

from .export_reader import history_url, read_history
from .replay import Replay, ReplayItem, ReplayMessage, ReplayResync, ReplayGap
from .replays import Replays, replay_request

__all__ = [
    "Replay",
    "ReplayGap",
    "ReplayItem",
    "ReplayMessage",
    "ReplayResync",
    "Replays",
    "history_url",
    "read_history",
    "replay_request",
]
