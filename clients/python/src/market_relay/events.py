"""Callbacks by event name. A listener may be a plain function or a coroutine function (run as a task);
one that raises never disturbs the client: the exception is logged with its traceback (logger
``market_relay.events``) and goes to ``on_listener_error``."""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
from typing import Any, Callable, Dict, List, Set

Listener = Callable[[Any], Any]

logger = logging.getLogger(__name__)


class Emitter:
    def __init__(self) -> None:
        self._listeners: Dict[str, List[Listener]] = {}
        self._listener_tasks: Set["asyncio.Task[Any]"] = set()

    def on(self, event: str, listener: Listener) -> Callable[[], None]:
        """Calls ``listener(payload)`` on each ``event``; returns the function that removes it."""
        self._listeners.setdefault(event, []).append(listener)
        return lambda: self.off(event, listener)

    def once(self, event: str, listener: Listener) -> Callable[[], None]:
        def wrapper(payload: Any) -> Any:
            self.off(event, wrapper)
            return listener(payload)

        return self.on(event, wrapper)

    def off(self, event: str, listener: Listener) -> None:
        listeners = self._listeners.get(event, [])
        if listener in listeners:
            listeners.remove(listener)

    def emit(self, event: str, payload: Any) -> None:
        for listener in list(self._listeners.get(event, [])):
            try:
                result = listener(payload)
            except Exception as error:  # noqa: BLE001 - a listener's bug must not break the client
                logger.exception("a listener of %r on %s raised", event, self)
                self.on_listener_error(error, event)
                continue
            if inspect.isawaitable(result):
                task = asyncio.ensure_future(result)
                self._listener_tasks.add(task)
                task.add_done_callback(functools.partial(self._listener_done, event))

    def _listener_done(self, event: str, task: "asyncio.Task[Any]") -> None:
        self._listener_tasks.discard(task)
        error = None if task.cancelled() else task.exception()
        if error is not None:
            logger.error("a listener of %r on %s raised", event, self, exc_info=error)
            self.on_listener_error(error, event)

    def on_listener_error(self, error: BaseException, event: str) -> None:
        raise NotImplementedError
