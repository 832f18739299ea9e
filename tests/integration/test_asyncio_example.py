"""examples/asyncio_server.py: the core driven by plain asyncio, proven loop-agnostic.

The example runs as a real subprocess; this test talks to it with the client engine
(``mcpwire.Client`` + ``mcpwire.ClientStdioConnection``), bytes over pipes, itself on asyncio.
It checks a tools/call with progress, a multi round-trip (input_required, then the retry with
the signed requestState), cancellation, and that neither trio, anyio, h11 nor the App layer
was imported by the example (its ``MCPWIRE_EXAMPLE_CHECK=1`` report, and ``-X importtime``):
of ``mcpwire_adapters`` it uses only :class:`~mcpwire_adapters.NeedInput`, which needs only
msgspec. Every read has a timeout.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from mcpwire import Client, ClientEvent, ClientStdioConnection, ErrorResult, InputRequired, OutgoingRequest, Progress, ResultReceived
from mcpwire.types import ElicitRequest, ElicitResult, Implementation

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "asyncio_server.py"
TIMEOUT = 15.0
FORBIDDEN = ("trio", "anyio", "h11")
# Of mcpwire_adapters, the example loads the package (with its error root and the table of old
# paths), the app package's front door and the module of NeedInput, nothing else: none of App.
ADAPTER_MODULES = {
    "mcpwire_adapters", "mcpwire_adapters._moved", "mcpwire_adapters.errors", "mcpwire_adapters.app",
    "mcpwire_adapters.app.need_input",
}


class Example:
    """The example in a subprocess, and a client engine reading its stdout."""

    def __init__(self, process: asyncio.subprocess.Process, client: Client) -> None:
        self.process = process
        self.client = client
        self.connection = ClientStdioConnection(client)
        self.pending: list[ClientEvent] = []
        self.lines: list[bytes] = []  # every line received, for checks on the raw stream

    @classmethod
    async def start(cls, client: Client, *python_options: str) -> Example:
        process = await asyncio.create_subprocess_exec(
            sys.executable, *python_options, str(EXAMPLE),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "MCPWIRE_EXAMPLE_CHECK": "1"},
        )
        return cls(process, client)

    async def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        await self.process.stdin.drain()

    async def events_until_final(self, request: OutgoingRequest) -> list[ClientEvent]:
        """Send ``request``; return its events up to and including its final one."""
        await self.send(self.connection.send(request))
        events: list[ClientEvent] = []
        while True:
            while self.pending:
                event = self.pending.pop(0)
                if getattr(event, "request_id", None) != request.id:
                    continue
                events.append(event)
                if isinstance(event, (ResultReceived, ErrorResult, InputRequired)):
                    return events
            await self._read()

    async def _read(self) -> None:
        assert self.process.stdout is not None
        chunk = await asyncio.wait_for(self.process.stdout.read(65536), TIMEOUT)
        assert chunk, "the example closed stdout"
        self.lines.extend(line for line in chunk.splitlines() if line)
        self.pending.extend(self.connection.receive_data(chunk))

    async def finish(self) -> tuple[int, str]:
        """Close stdin; the exit code and stderr."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        rest, err = await asyncio.wait_for(self.process.communicate(), TIMEOUT)
        self.lines.extend(line for line in rest.splitlines() if line)
        return await asyncio.wait_for(self.process.wait(), TIMEOUT), err.decode()


def text_of(event: ClientEvent) -> str:
    assert isinstance(event, ResultReceived), event
    content = event.data["content"]
    assert isinstance(content, list)
    return str(content[0]["text"])


def imported_modules(stderr: str) -> set[str]:
    """Module names of the ``-X importtime`` lines (top-level packages and full names)."""
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            names |= {name, name.split(".")[0]}
    return names


def check_report(stderr: str) -> None:
    reports = [line for line in stderr.splitlines() if line.startswith("MCPWIRE_EXAMPLE_CHECK ")]
    assert reports, stderr
    assert json.loads(reports[-1].split(" ", 1)[1]) == {"loaded": []}


def test_progress_and_a_multi_round_trip_on_asyncio() -> None:
    async def scenario() -> None:
        client = Client(Implementation(name="asyncio-test", version="1"), capabilities={"elicitation": {"form": {}}})
        example = await Example.start(client, "-X", "importtime")
        try:
            found = await example.events_until_final(client.discover())
            assert isinstance(found[-1], ResultReceived)
            assert found[-1].data["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "asyncio-example"

            events = await example.events_until_final(client.call_tool("count", {"n": 3}, progress_token="tok"))
            progress = [e for e in events if isinstance(e, Progress)]
            assert [(p.progress, p.total, p.message) for p in progress] == [
                (1, 3, "step 1 of 3"), (2, 3, "step 2 of 3"), (3, 3, "step 3 of 3")]
            assert text_of(events[-1]) == "counted to 3"

            asked = (await example.events_until_final(client.call_tool("greet", {})))[-1]
            assert isinstance(asked, InputRequired)
            question = asked.input_requests["name"]
            assert isinstance(question, ElicitRequest) and question.params.message == "What is your name?"
            assert isinstance(asked.request_state, str)  # signed by the engine, echoed by the retry
            retry = client.retry(asked, {"name": ElicitResult(action="accept", content={"name": "Ada"})})
            answered = await example.events_until_final(retry)
            assert text_of(answered[-1]) == "Hello, Ada! (state from round 1)"

            bad = await example.events_until_final(client.call_tool("add", {"a": 1, "b": "two"}))
            assert isinstance(bad[-1], ResultReceived) and bad[-1].data["isError"] is True
        finally:
            code, stderr = await example.finish()
        assert code == 0, stderr
        check_report(stderr)
        loaded = imported_modules(stderr)
        assert "mcpwire" in loaded and "msgspec" in loaded and "asyncio" in loaded  # the log is real
        assert loaded.isdisjoint(FORBIDDEN), sorted(loaded & set(FORBIDDEN))
        adapters = {name for name in loaded if name.split(".")[0] == "mcpwire_adapters"}
        assert adapters == ADAPTER_MODULES, sorted(adapters)

    asyncio.run(scenario())


def test_cancellation_and_concurrent_requests() -> None:
    async def scenario() -> None:
        client = Client(Implementation(name="asyncio-test", version="1"))
        example = await Example.start(client)
        try:
            sleeping = client.call_tool("sleep", {"seconds": 30})
            await example.send(example.connection.send(sleeping))
            # While it sleeps, another request is answered.
            added = await example.events_until_final(client.call_tool("add", {"a": 2, "b": 40}))
            assert text_of(added[-1]) == "2 + 40 = 42"
            await example.send(example.connection.cancel(sleeping, "changed my mind"))
            again = await example.events_until_final(client.call_tool("add", {"a": 1, "b": 1}))
            assert text_of(again[-1]) == "1 + 1 = 2"
        finally:
            # The cancelled sleep is gone, so stdin's end stops the process at once (no grace wait).
            code, stderr = await asyncio.wait_for(example.finish(), 4)
        assert code == 0, stderr
        check_report(stderr)
        answered = {json.loads(line).get("id") for line in example.lines}
        assert sleeping.id not in answered

    asyncio.run(scenario())
