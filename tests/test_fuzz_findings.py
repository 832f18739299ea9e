"""Regression tests for the engine bugs the fuzz suites found (fuzz/README.md, "Findings").

F1, F2 and F3 were kept here as ``xfail(strict=True)`` until the engine owner fixed them
(commit bcd0d04); they are plain regression tests now. A new finding starts here again as a
strict xfail whose reason is "BUG ...: <the proposed fix>". The minimized atheris inputs are
replayed by tests/test_fuzz_corpus.py.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import mcpwire
from fuzz import invariants
from fuzz.host import INPUT_REQUESTS
from fuzz.targets import NOW, make_client, make_server

SERVER = make_server()
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
META_TEXT = json.dumps(META)


def http(body: bytes, method: str = "server/discover", name: str | None = None,
         extra: tuple[tuple[bytes, bytes], ...] = ()) -> Any:
    headers = [(b"Content-Type", b"application/json"), (b"Accept", b"application/json, text/event-stream"),
               (b"MCP-Protocol-Version", b"2026-07-28"), (b"Mcp-Method", method.encode())]
    if name is not None:
        headers.append((b"Mcp-Name", name.encode()))
    return SERVER.receive_http(mcpwire.HttpRequest(method="POST", target="/mcp", headers=headers + list(extra),
                                                   body=body), now=NOW)


def reply(answer: Any) -> dict[str, Any] | None:
    assert isinstance(answer, tuple), answer
    return invariants.reply_invariants(*answer)


# --- F1: a number Python cannot hold (1e400, more than 4300 digits) in params the engine reads
# escaped as msgspec.ValidationError; now -32602 with the request's id ---------------------------

F1_HTTP = {
    "meta-float": (b'{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"x":1e400}}}',
                   "server/discover", None),
    "meta-digits": (b'{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"x":' + b"9" * 5000
                    + b"}}}", "server/discover", None),
    "name": (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":1e400,"_meta":' + META_TEXT.encode()
             + b"}}", "tools/call", None),
    "cursor": (b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":-1e999,"_meta":'
               + META_TEXT.encode() + b"}}", "tools/list", None),
    "mirrored-argument": (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"region","arguments":'
                          b'{"n":1e400},"_meta":' + META_TEXT.encode() + b"}}", "tools/call", "region"),
    "with-request-state": (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","x":1e400,'
                           b'"requestState":"s","_meta":' + META_TEXT.encode() + b"}}", "tools/call", "echo"),
}


@pytest.mark.parametrize("case", sorted(F1_HTTP))
def test_f1_numbers_out_of_range_in_params_are_invalid_params_on_http(case: str) -> None:
    body, method, name = F1_HTTP[case]
    message = reply(http(body, method, name))
    assert message is not None and message["error"]["code"] == -32602 and message["id"] == 1


def test_f1_numbers_out_of_range_in_a_notification_are_dropped_not_raised() -> None:
    body = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"_meta":{"a":1e400}}}'
    # Never an exception, and never an answer: a notification, however malformed, gets 202.
    head, tail = http(body, "notifications/cancelled")
    assert head.status == 202 and tail.data == b"" and not tail.more
    assert reply((head, tail)) is None


def test_f1_numbers_out_of_range_in_params_are_invalid_params_on_stdio() -> None:
    conn = mcpwire.StdioConnection(SERVER)
    (out,) = conn.receive_data(b'{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"x":1e400}}}\n',
                               now=NOW)
    (message,) = invariants.line_invariants(out)
    assert message["error"]["code"] == -32602 and message["id"] == 1


def test_f1_input_required_on_a_call_with_an_out_of_range_member_answers() -> None:
    # Admitted (the unknown member "x" is skipped at admission), but the requestState scope
    # decodes every member when the host answers input_required.
    body = (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","x":1e400,"_meta":'
            + json.dumps({**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}).encode() + b"}}")
    exchange = http(body, "tools/call", "echo")
    assert isinstance(exchange, mcpwire.HttpExchange)
    out = exchange.input_required({"name": INPUT_REQUESTS["name"]}, state={"a": 1})
    messages = invariants.http_stream_invariants(out)
    assert messages[-1]["error"]["code"] == -32602


# --- F2: on stdio a malformed result took its request out of flight with an ErrorResult of id
# None; now the ErrorResult carries the request's id (MalformedResult) ----------------------------


F2_RESULTS = {
    "null": b"null",
    "array": b"[1]",
    "result-type": b'{"resultType":7}',
    "input-required-empty": b'{"resultType":"input_required"}',
    "input-required-on-discover": b'{"resultType":"input_required","requestState":"s"}',
    "number-out-of-range": b'{"resultType":"complete","x":1e400}',
}


@pytest.mark.parametrize("case", sorted(F2_RESULTS))
def test_f2_a_malformed_result_still_ends_its_own_request(case: str) -> None:
    client = make_client()
    conn = mcpwire.ClientStdioConnection(client)
    request = client.discover() if case == "input-required-on-discover" else client.call_tool("echo", {})
    conn.send(request)
    line = b'{"jsonrpc":"2.0","id":%s,"result":%s}\n' % (json.dumps(request.id).encode(), F2_RESULTS[case])
    (event,) = conn.receive_data(line)
    assert conn.in_flight == 0
    assert isinstance(event, mcpwire.ErrorResult) and event.request_id == request.id, event


# --- F3: HttpResponseParser.feed lost the events before a protocol error in the same chunk; now
# they are returned and the error raised at the next call -----------------------------------------



def test_f3_events_before_a_protocol_error_are_not_lost() -> None:
    body = (b'data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":1}}\n\n'
            b'data: {"jsonrpc":"2.0","id":99,"method":"sampling/createMessage","params":{}}\n\n')
    client = make_client()
    request = client.call_tool("echo", {}, log_level="debug")
    parser = mcpwire.HttpResponseParser(client, request, status=200, content_type=b"text/event-stream")
    events = parser.feed(body)  # fed whole
    assert [type(e) for e in events] == [mcpwire.LogMessage]
    with pytest.raises(mcpwire.RemoteProtocolError, match="Server sent request"):
        parser.close()


def test_f3_fed_in_pieces_the_events_arrive_alike() -> None:
    # The chunked half of F3: the first piece returns the log message.
    body = (b'data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":1}}\n\n',
            b'data: {"jsonrpc":"2.0","id":99,"method":"sampling/createMessage","params":{}}\n\n')
    client = make_client()
    request = client.call_tool("echo", {}, log_level="debug")
    parser = mcpwire.HttpResponseParser(client, request, status=200, content_type=b"text/event-stream")
    assert [type(e) for e in parser.feed(body[0])] == [mcpwire.LogMessage]
    with pytest.raises(mcpwire.RemoteProtocolError, match="Server sent request"):
        parser.feed(body[1])
