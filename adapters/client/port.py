"""What a listen stream and a followed task need of their session: :class:`ListenSession`,
:class:`TaskSession`, and the ``InputHandler`` type the task follower passes on.

:class:`~mcpwire_adapters.client.session.Session` satisfies both protocols. They exist so that
:mod:`~mcpwire_adapters.client.subscription` and :mod:`~mcpwire_adapters.client.task_follower`
name what they use without importing :mod:`~mcpwire_adapters.client.session`, which imports
them: the imports run one way (session -> subscription, task_follower -> port).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from mcpwire import Client, ClientEvent, OutgoingRequest, ResultReceived
from mcpwire.tasks import Task
from mcpwire.types import InputRequest, ServerCapabilities

__all__ = ["InputHandler", "ListenSession", "TaskSession"]

InputHandler = Callable[[dict[str, InputRequest]], "Mapping[str, Any] | Awaitable[Mapping[str, Any]]"]
"""``on_input(requests)``: the answers (by key) to the typed input requests of one round."""


class ListenSession(Protocol):
    """What a :class:`~mcpwire_adapters.client.subscription.Subscription` uses of its session."""

    @property
    def client(self) -> Client:
        """The engine that builds the listen request (and its -32022 retry)."""
        ...

    @property
    def server_capabilities(self) -> ServerCapabilities | None:
        """What the server declared: an initialize-era listener keeps only what it offers."""
        ...

    async def observe(self, events: list[ClientEvent]) -> None:
        """Shown every batch of events read from the stream before anyone else sees them."""
        ...

    async def subscribe(self, uri: str) -> None:
        """``resources/subscribe`` (initialize era)."""
        ...

    async def unsubscribe(self, uri: str) -> None:
        """``resources/unsubscribe`` (initialize era)."""
        ...


class TaskSession(Protocol):
    """What a :class:`~mcpwire_adapters.client.task_follower.TaskFollower` uses of its session."""

    @property
    def client(self) -> Client:
        """The engine that builds ``tasks/result`` and reads the task's outcome."""
        ...

    #: The ``on_input`` of each task a call follows, by task id: a 2025-11-25 server asks a
    #: task's questions outside the call (GET stream, stdio), naming the task.
    task_inputs: dict[str, InputHandler | None]

    async def send(self, request: OutgoingRequest, *, on_input: InputHandler | None = None) -> ResultReceived:
        """Send ``request`` and follow it to a complete result."""
        ...

    async def get_task(self, task_id: str, *, capabilities: Mapping[str, Any] | None = None) -> Task:
        """``tasks/get``."""
        ...

    async def update_task(self, task_id: str, input_responses: Mapping[str, Any], *,
                          capabilities: Mapping[str, Any] | None = None) -> None:
        """``tasks/update``."""
        ...

    async def cancel_task(self, task_id: str, *, capabilities: Mapping[str, Any] | None = None) -> None:
        """``tasks/cancel``."""
        ...
