"""``await connect(...)``: the client once connected, a ``ConnectTimeout`` within ``timeout`` when no
relay answers (the client then closed), ``refused`` when the relay refuses; the typed options."""

import asyncio
import inspect
import time

import pytest

from market_relay import Backoff, ClientOptions, ConnectTimeout, RelayClient, RelayClientError, connect
from test_client_fake_relay import FAST, ScriptedRelay, free_port


def test_awaiting_connect_gives_the_client_once_connected():
    async def scenario():
        relay = ScriptedRelay()
        await relay.start()
        try:
            client = await connect(relay.url, timeout=5, backoff=FAST)
            assert client.status == "open" and client.url == relay.url
            async with client:
                assert await client.connected() is client
        finally:
            await relay.close()

    asyncio.run(scenario())


def test_awaiting_connect_to_nothing_raises_within_its_timeout_and_closes_the_client():
    async def scenario():
        gone = f"ws://127.0.0.1:{free_port()}/v1/ws"
        started = time.monotonic()
        with pytest.raises(ConnectTimeout) as raised:
            await connect(gone, timeout=2)
        elapsed = time.monotonic() - started
        # The client it made is closed: nothing of it keeps running or retrying.
        assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []
        return raised.value, elapsed

    error, elapsed = asyncio.run(scenario())
    assert elapsed < 3.5  # 2 s, and the close after it, with room for a busy machine
    assert error.code == "connect_timeout" and isinstance(error, asyncio.TimeoutError)
    assert isinstance(error.__cause__, RelayClientError) and error.__cause__.code == "connection_failed"


def test_awaiting_connect_to_a_relay_refusing_the_key_raises_refused():
    async def answer_403(reader, writer):
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        await writer.drain()
        writer.close()

    async def scenario():
        server = await asyncio.start_server(answer_403, "127.0.0.1", 0)
        try:
            with pytest.raises(RelayClientError) as raised:
                await connect(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", api_key="k", timeout=5)
            return raised.value
        finally:
            server.close()
            await server.wait_closed()

    error = asyncio.run(scenario())
    assert error.code == "refused" and "HTTP 403" in str(error) and error.__cause__.code == "refused"


def test_connect_takes_the_fields_of_client_options_with_their_defaults():
    keywords = {
        name: parameter.default
        for name, parameter in inspect.signature(connect).parameters.items()
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY
    }
    fields = {name: getattr(ClientOptions(), name) for name in ClientOptions.__dataclass_fields__}
    assert keywords == fields


def test_options_are_checked_when_made():
    with pytest.raises(ValueError, match="heartbeat"):
        ClientOptions(heartbeat=0)
    with pytest.raises(TypeError):
        connect("ws://127.0.0.1:1", hearbeat=5)  # a misspelt option is an error, not ignored

    async def scenario():
        client = RelayClient("ws://127.0.0.1:1", ClientOptions(backoff=Backoff(base=0.01), dead_after=1))
        assert client.options.dead_after_seconds == 1
        await client.close()

    asyncio.run(scenario())
