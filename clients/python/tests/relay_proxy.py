"""A TCP proxy in front of a relay whose connections a test can cut, as a network failure would."""

import asyncio
from typing import List, Set


class CuttableProxy:
    def __init__(self, target_host: str, target_port: int) -> None:
        self._target = (target_host, target_port)
        self._writers: Set[asyncio.StreamWriter] = set()
        self._server: "asyncio.AbstractServer | None" = None
        self.port = 0
        self.connections = 0

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _serve(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        relay_reader, relay_writer = await asyncio.open_connection(*self._target)
        pair: List[asyncio.StreamWriter] = [client_writer, relay_writer]
        self._writers.update(pair)
        await asyncio.gather(self._pipe(client_reader, relay_writer), self._pipe(relay_reader, client_writer))

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                chunk = await reader.read(65536)
                if not chunk:
                    break
                writer.write(chunk)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            self._abort(writer)

    def _abort(self, writer: asyncio.StreamWriter) -> None:
        self._writers.discard(writer)
        transport = writer.transport
        if not transport.is_closing():
            transport.abort()

    def cut(self) -> None:
        """Drops every connection at once, without a WebSocket close."""
        for writer in list(self._writers):
            self._abort(writer)

    async def close(self) -> None:
        self.cut()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
