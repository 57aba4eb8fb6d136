"""The connection under a client: one WebSocket at a time to one of its relays, reconnected with
backoff, each time to the next URL of the list; dead when nothing (not even a heartbeat) arrives for
``dead_after`` seconds; ended for good when the relay refuses the client. A draining relay names the
moment to leave (``going_away``, docs/protocol.md "Going away"): the connection then moves to the next
relay at that moment, not at a random one of its own. What the messages mean is
the client's (``client.py``); this module only moves frames. Mirrors packages/client/src/connection/relay-connection.ts.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple, Union

from .backoff import GOING_AWAY, Backoff, reconnect_delay
from .transport import ConnectionClosed, close_of, open_socket, refused_status

#: ``connecting`` (first connection), ``open``, ``reconnecting`` (after a drop), ``closed``.
ConnectionStatus = str

#: Close code of an authentication refusal (docs/protocol.md "Close codes").
POLICY_VIOLATION = 1008

logger = logging.getLogger(__name__)


class Opened(NamedTuple):
    url: str
    reconnect: bool


class Closed(NamedTuple):
    url: str
    code: Optional[int]
    reason: str
    will_reconnect: bool


class Reconnecting(NamedTuple):
    attempt: int
    delay: float
    url: str


class ConnectionListener:
    """What the connection tells its client."""

    def connection_status(self, status: ConnectionStatus) -> None:
        raise NotImplementedError

    def connection_opened(self, opened: Opened) -> None:
        raise NotImplementedError

    def connection_frame(self, frame: Union[str, bytes]) -> None:
        raise NotImplementedError

    def connection_closed(self, closed: Closed) -> None:
        raise NotImplementedError

    def connection_reconnecting(self, reconnecting: Reconnecting) -> None:
        raise NotImplementedError

    def connection_failed(self, url: str, detail: str) -> None:
        raise NotImplementedError

    def connection_refused(self, url: str, detail: str) -> None:
        raise NotImplementedError


class RelayConnection:
    def __init__(
        self,
        urls: List[str],
        listener: ConnectionListener,
        *,
        headers: Dict[str, str],
        dead_after: float,
        backoff: Backoff,
        open_timeout: float,
        random: Callable[[], float],
    ) -> None:
        self.urls = urls
        #: The URL of the relay connected (or being connected) to.
        self.url = urls[0]
        self._listener = listener
        self._headers = headers
        self._dead_after = dead_after
        self._backoff = backoff
        self._open_timeout = open_timeout
        self._random = random
        self._outbox: Optional["asyncio.Queue[str]"] = None
        self._status: ConnectionStatus = "connecting"
        self._opened_once = False
        self._socket: Any = None
        #: When the draining relay asked us to reconnect (loop time), until the next attempt is scheduled.
        self._move_at: Optional[float] = None
        self._move_timer: Optional[asyncio.TimerHandle] = None
        #: The close this client began on the relay's word, kept until it is done.
        self._leaving: Optional["asyncio.Future[None]"] = None
        self._task = asyncio.get_running_loop().create_task(self._run())

    @property
    def status(self) -> ConnectionStatus:
        return self._status

    def send(self, text: str) -> bool:
        """Queues a frame on the open connection; False when there is none."""
        if self._outbox is None:
            return False
        self._outbox.put_nowait(text)
        return True

    def going_away(self, after: float) -> None:
        """The relay is draining (docs/protocol.md "Going away"): in ``after`` seconds this connection is
        left and the next relay's opened at once. Should the relay's 1001 come first, the reconnect still
        waits for that moment rather than a random part of ``going_away_spread``: the relay spread them."""
        socket = self._socket
        if socket is None:
            return
        loop = asyncio.get_running_loop()
        self._move_at = loop.time() + after
        if self._move_timer is not None:
            self._move_timer.cancel()
        self._move_timer = loop.call_later(after, self._leave, socket)

    def _leave(self, socket: Any) -> None:
        self._move_timer = None
        if socket is self._socket:
            self._leaving = asyncio.ensure_future(socket.close(1000, "moving to another relay"))

    async def close(self) -> None:
        """Ends the connection for good."""
        if self._move_timer is not None:
            self._move_timer.cancel()
        # Cancelled again until it ends: on Python before 3.12 a cancel that meets a frame arriving in
        # ``wait_for(recv())`` is lost, and on a busy connection that happens.
        while not self._task.done():
            self._task.cancel()
            await asyncio.wait({self._task}, timeout=0.1)
        if not self._task.cancelled():
            self._task.exception()  # retrieved: the connection is over either way
        self._outbox = None
        self._set_status("closed")

    def _set_status(self, status: ConnectionStatus) -> None:
        if status != self._status:
            self._status = status
            self._listener.connection_status(status)

    async def _run(self) -> None:
        attempt = 0
        index = 0
        while True:
            self.url = self.urls[index]
            code, delivered = await self._connect_once(self.url)
            if self._status == "closed":
                return
            if delivered:
                attempt = 0
            # Every retry goes to the next relay of the list: the one just left may be gone.
            index = (index + 1) % len(self.urls)
            move_at, self._move_at = self._move_at, None
            delay = (
                reconnect_delay(attempt, code, self._backoff, self._random)
                if move_at is None
                else max(0.0, move_at - asyncio.get_running_loop().time())
            )
            self._set_status("reconnecting")
            logger.info("reconnecting to %s in %.2f s (attempt %d)", self.urls[index], delay, attempt + 1)
            self._listener.connection_reconnecting(Reconnecting(attempt + 1, delay, self.urls[index]))
            attempt += 1
            await asyncio.sleep(delay)

    async def _connect_once(self, url: str) -> Tuple[Optional[int], bool]:
        """One connection, from opening to its end: (close code, whether it delivered a message)."""
        logger.debug("connecting to %s", url)
        try:
            socket = await open_socket(url, self._headers, self._open_timeout)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - any failure to connect is retried
            status = refused_status(error)
            if status in (401, 403):
                self._refused(url, f"the relay answered HTTP {status}")
            else:
                logger.warning("could not connect to %s: %s", url, _described(error))
                self._listener.connection_failed(url, _described(error))
            return None, False
        logger.info("connected to %s", url)
        loop = asyncio.get_running_loop()
        outbox: "asyncio.Queue[str]" = asyncio.Queue()
        writer = loop.create_task(_write(socket, outbox))
        watchdog = _Watchdog(loop, socket, self._dead_after)
        delivered = False
        code: Optional[int] = None
        reason = ""
        try:
            self._socket = socket
            self._outbox = outbox
            self._set_status("open")
            self._listener.connection_opened(Opened(url, self._opened_once))
            self._opened_once = True
            while True:
                frame = await socket.recv()
                watchdog.last = loop.time()
                delivered = True
                self._listener.connection_frame(frame)
        except ConnectionClosed as closed:
            code, reason = (None, f"no message for {self._dead_after} s") if watchdog.fired else close_of(closed)
            if self._leaving is not None:
                code, reason = GOING_AWAY, "the relay is draining"
        finally:
            self._socket = None
            self._leaving = None
            if self._move_timer is not None:
                self._move_timer.cancel()
                self._move_timer = None
            self._outbox = None
            watchdog.cancel()
            writer.cancel()
            await _close_quietly(socket)
        if code == POLICY_VIOLATION:
            self._refused(url, f"the relay closed the connection: {reason or 'policy'}")
        else:
            logger.warning("connection to %s lost (code %s): %s", url, code, reason or "no reason given")
            self._listener.connection_closed(Closed(url, code, reason, will_reconnect=True))
        return code, delivered

    def _refused(self, url: str, detail: str) -> None:
        self._set_status("closed")
        self._listener.connection_refused(url, detail)


class _Watchdog:
    """Drops a connection on which nothing arrived for ``dead_after`` seconds. The reader only notes
    each frame's time and one timer checks it once per period: ``asyncio.wait_for`` around every
    receive would cost a task per message (before Python 3.12), as much as handling the message."""

    def __init__(self, loop: asyncio.AbstractEventLoop, socket: Any, dead_after: float) -> None:
        self.last = loop.time()
        self.fired = False
        self._loop = loop
        self._socket = socket
        self._dead_after = dead_after
        self._timer = loop.call_later(dead_after, self._check)

    def _check(self) -> None:
        silent_for = self._loop.time() - self.last
        if silent_for < self._dead_after:
            self._timer = self._loop.call_later(self._dead_after - silent_for, self._check)
            return
        self.fired = True
        self._socket.transport.abort()  # the pending receive ends with ConnectionClosed

    def cancel(self) -> None:
        self._timer.cancel()


def _described(error: BaseException) -> str:
    """An error as a line: some (a timeout) have no text of their own."""
    return str(error) or type(error).__name__


async def _write(socket: Any, outbox: "asyncio.Queue[str]") -> None:
    """Sends the outbox in order; a failed send ends the writer (the reader sees the close)."""
    try:
        while True:
            await socket.send(await outbox.get())
    except ConnectionClosed:
        return


async def _close_quietly(socket: Any) -> None:
    try:
        await asyncio.wait_for(socket.close(), 1.0)
    except (asyncio.TimeoutError, ConnectionClosed, OSError):
        pass
