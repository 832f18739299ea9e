"""Coverage-guided harness: bytes -> the client engine's readers (HttpResponseParser,
ClientStdioConnection).

Input format: byte 0 picks the reader and the request it answers (low 4 bits: one of
:data:`REQUESTS`; bit 4: stdio instead of HTTP; bits 5-7: the content type), byte 1 the HTTP
status and the chunk size; every other byte is the response body (HTTP) or the server's
stdout (stdio).

Invariants: HTTP: ``feed``/``close`` raise nothing but :class:`~mcpwire.RemoteProtocolError`;
at most one final event (ResultReceived, ErrorResult, InputRequired) per response, for the
request's id; the body fed whole or in chunks gives the same events and the same error.
stdio: ``receive_data``/``receive_eof`` never raise; every final event names a request in
flight (or none), each request gets exactly one (-32000 for those still in flight at end of
file) and none is left in flight; chunking never changes the events.

Run: ``python fuzz/atheris_client.py fuzz/corpus/client -max_total_time=600 -print_final_stats=1``
"""

from __future__ import annotations

from typing import Any, Callable

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # when run as a script
from fuzz._harness import instrumented, main  # noqa: E402

with instrumented(__name__ == "__main__"):
    import mcpwire
    from fuzz import invariants, targets

CONTENT_TYPES = (b"application/json", b"text/event-stream", b"text/event-stream; charset=utf-8",
                 b"application/problem+json", b"text/plain", None, b"APPLICATION/JSON", b"")
STATUSES = (200, 202, 400, 404, 500, 503, 204, 302)


def _requests(client: mcpwire.Client) -> list[mcpwire.OutgoingRequest]:
    return [
        client.discover(),
        client.list_tools(),
        client.call_tool("echo", {"a": 1}, progress_token="p1", log_level="debug"),
        client.call_tool("region", {"region": "eu", "n": 3}),
        client.read_resource("test://static-text", progress_token=7),
        client.get_prompt("greet", {"who": "x"}),
        client.complete({"type": "ref/prompt", "name": "greet"}, "who", "a"),
        client.listen({"toolsListChanged": True, "resourceSubscriptions": ["test://static-text"]}),
        client.list_prompts(cursor="c"),
        client.list_resources(),
        client.list_resource_templates(),
        client.request("x/unknown", {}),
    ]


REQUESTS = len(_requests(targets.make_client()))
FINAL = (mcpwire.ResultReceived, mcpwire.ErrorResult, mcpwire.InputRequired)


def _outcome(run: Callable[[], list[Any]]) -> tuple[list[Any], Any]:
    events: list[Any] = []
    try:
        events = run()
    except mcpwire.RemoteProtocolError as exc:
        return events, (exc.code, exc.message)
    return events, None


def http(body: bytes, selector: int, ctype: bytes | None, status: int, chunk: int) -> None:
    def parse(step: int) -> tuple[list[Any], Any]:
        client = targets.make_client()
        request = _requests(client)[selector % REQUESTS]
        parser = mcpwire.HttpResponseParser(client, request, status=status, content_type=ctype,
                                            max_body_bytes=2048, max_event_bytes=512)
        events: list[Any] = []

        def run() -> list[Any]:
            for start in range(0, len(body), step):
                events.extend(parser.feed(body[start:start + step]))
            events.extend(parser.close())
            return events

        _, error = _outcome(run)
        finals = [e for e in events if isinstance(e, FINAL)]
        if len(finals) > 1 or any(e.request_id != request.id for e in finals):
            raise invariants.Undocumented(f"final events {finals!r} for request {request.id!r}")
        return events, error

    whole = parse(max(len(body), 1))
    if parse(chunk) != whole:
        raise invariants.Undocumented(f"chunking changed the HTTP events: {whole!r}")


def stdio(data: bytes, chunk: int) -> None:
    def run(step: int) -> list[Any]:
        client = targets.make_client()
        conn = mcpwire.ClientStdioConnection(client, max_line_bytes=1024)
        requests = _requests(client)
        for request in requests:
            conn.send(request)
        events: list[Any] = []
        for start in range(0, len(data), step):
            events += conn.receive_data(data[start:start + step])
        events += conn.receive_eof()
        if conn.in_flight:
            raise invariants.Undocumented("requests left in flight after end of file")
        ids = [(type(r.id), r.id) for r in requests]
        finals = [(type(e.request_id), e.request_id) for e in events
                  if isinstance(e, FINAL) and e.request_id is not None]
        if len(finals) != len(set(finals)) or not set(finals) <= set(ids):
            raise invariants.Undocumented(f"final events {finals!r} for requests {ids!r}")
        missing = len(ids) - len(finals)  # every request ends with exactly one final event
        if missing:
            raise invariants.Undocumented(f"{missing} requests without a final event: {events!r}")
        return events

    whole = run(max(len(data), 1))
    if run(chunk) != whole:
        raise invariants.Undocumented("chunking changed the stdio events")


def test_one_input(data: bytes) -> None:
    if len(data) < 2:
        return
    selector, knob, body = data[0], data[1], data[2:]
    chunk = (knob >> 3) + 1
    if selector & 0x10:
        stdio(body, chunk)
    else:
        http(body, selector & 0x0F, CONTENT_TYPES[selector >> 5], STATUSES[knob & 7], chunk)


if __name__ == "__main__":
    main(test_one_input)
