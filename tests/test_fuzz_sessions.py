"""The initialize-era session surface under a hypothesis state machine: our client engine
opens sessions on the fuzz server (every initialize-era revision), sends requests built for
them, notifications, stray responses, GET and DELETE, with headers dropped, repeated, wrong
or stale, and bodies of arbitrary bytes, and the test plays the host (completing exchanges).

Invariants: the engine never raises; every reply is a well-formed HTTP answer with a status
the transport specification allows and, when it has a body, one JSON-RPC message; an open
session answers, a deleted one answers 404 and is gone from the store; the store never holds
more than its bound; a request before initialize is 400 and opens nothing; a server-to-client
request is answered, timed out or cancelled and then nothing waits on it; no stream is left
registered. On stdio (a server of the initialize era only): any sequence of lines, whole or
in any chunking, gives the same outputs, each line one JSON-RPC message.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, consumes, initialize, invariant, rule

import mcpwire
from fuzz.bounds import budget
from fuzz.targets import CLIENT_CAPS, NOW, make_server
from mcpwire import HttpExchange, HttpRequest, InputArrived, ResponseBody, ResponseHead, SessionClosed
from mcpwire.sessions import HttpBatch, MemorySessionStore, SessionStream
from mcpwire.types import CallToolResult, Implementation, TextContent

ERA = ("2025-11-25", "2025-06-18", "2025-03-26")
STATUSES = {200, 202, 400, 404, 405, 406, 409, 413, 415, 503}
MAX_SESSIONS = 4
METHODS = ("ping", "tools/list", "resources/list", "prompts/list", "tools/call", "logging/setLevel",
           "resources/subscribe", "completion/complete", "nope/nope")


def check_reply(answer: Any) -> tuple[int, Any]:
    assert isinstance(answer, tuple), answer
    heads = [part for part in answer if isinstance(part, ResponseHead)]
    assert len(heads) == 1 and heads[0].status in STATUSES, heads
    body = b"".join(part.data for part in answer if isinstance(part, ResponseBody))
    if not body:
        return heads[0].status, None
    message = json.loads(body)
    assert message["jsonrpc"] == "2.0" and "id" in message and ("result" in message) != ("error" in message), message
    return heads[0].status, message


class Open:
    def __init__(self, client: mcpwire.Client, session_id: str) -> None:
        self.client = client
        self.session_id = session_id


class Sessions(RuleBasedStateMachine):
    sessions = Bundle("sessions")

    @initialize()
    def setup(self) -> None:
        self.server = make_server(session_ids=(f"s{i}" for i in itertools.count()),
                                  sessions=MemorySessionStore(max_sessions=MAX_SESSIONS, idle_timeout=3600))
        self.open: set[str] = set()
        self.deleted: set[str] = set()

    def _send(self, method: str, headers: list[tuple[bytes, bytes]], body: bytes) -> Any:
        answer = self.server.receive_http(HttpRequest(method=method, target="/mcp", headers=headers, body=body), now=NOW)
        return self._handle(answer)

    def _handle(self, answer: Any) -> Any:
        if isinstance(answer, HttpBatch):  # a 2025-03-26 batch: every answer handled, one stream
            outcomes = [self._handle(part) for part in answer.answers]
            assert answer.has_requests == any(o is None or o[0] != 202 for o in outcomes), outcomes
            return None
        if isinstance(answer, HttpExchange):  # the host answers: a tool's result, else a minimal fit
            event = answer.event
            result = CallToolResult(content=[TextContent(text="ok")]) if isinstance(event, mcpwire.ToolCall) else None
            try:
                out = answer.complete(result) if result is not None else answer.fail(RuntimeError("host"))
            except mcpwire.LocalProtocolError:
                return None
            heads = [part for part in out if isinstance(part, ResponseHead)]
            assert not heads or heads[0].status in STATUSES
            return None
        if isinstance(answer, SessionStream):
            answer.start()
            answer.cancel()
            return None
        if isinstance(answer, SessionClosed):
            return check_reply(answer.reply)
        if isinstance(answer, (InputArrived, mcpwire.Cancelled)):
            return check_reply(answer.reply)
        return check_reply(answer)

    @rule(target=sessions, version=st.sampled_from(ERA))
    def open_session(self, version: str) -> Any:
        client = mcpwire.Client(Implementation(name="fuzz", version="1"), capabilities=CLIENT_CAPS,
                                protocol_version=version)
        request = client.initialize()
        answer = self.server.receive_http(HttpRequest(method="POST", target="/mcp", headers=list(request.headers),
                                                      body=request.body), now=NOW)
        status, message = check_reply(answer)
        assert isinstance(answer, tuple)
        if len(self.open) >= MAX_SESSIONS:
            assert status == 503 and message["error"]["code"] == -32603
            return None
        assert status == 200 and message["result"]["protocolVersion"] == version
        session_id = dict(answer[0].headers)[b"mcp-session-id"].decode()
        assert session_id not in self.open | self.deleted
        self.open.add(session_id)
        parsed = mcpwire.HttpResponseParser(client, request, status=200, content_type=b"application/json")
        event = (parsed.feed(answer[1].data) + parsed.close())[-1]
        assert isinstance(event, mcpwire.ResultReceived)
        note = client.accept_initialize(event, session_id)
        assert self._send("POST", list(note.headers), note.body) == (202, None)
        return Open(client, session_id)

    @rule(session=sessions, method=st.sampled_from(METHODS), level=st.sampled_from(["debug", "warning", "loud"]),
          headers=st.sampled_from(["as built", "no version", "no session", "repeated session", "bad version"]))
    def request(self, session: Open | None, method: str, level: str, headers: str) -> None:
        if session is None:
            return
        params: dict[str, Any] = {"level": level} if method == "logging/setLevel" else {}
        if method == "tools/call":
            params = {"name": "echo", "arguments": {"text": "x"}}
        elif method == "resources/subscribe":
            params = {"uri": "test://static"}
        elif method == "completion/complete":
            params = {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": "A"}}
        request = session.client.request(method, params) if session.client.initialized else None
        if request is None:
            return
        sent = [(k, v) for k, v in request.headers]
        if headers == "no version":
            sent = [(k, v) for k, v in sent if k.lower() != b"mcp-protocol-version"]
        elif headers == "no session":
            sent = [(k, v) for k, v in sent if k.lower() != b"mcp-session-id"]
        elif headers == "repeated session":
            sent += [(b"Mcp-Session-Id", session.session_id.encode())]
        elif headers == "bad version":
            sent = [(k, v) for k, v in sent if k.lower() != b"mcp-protocol-version"] + [(b"MCP-Protocol-Version", b"2024-11-05")]
        outcome = self._send("POST", sent, request.body)
        if outcome is None:
            return
        status, message = outcome
        if session.session_id in self.deleted:
            assert status in (404, 400), outcome
        elif headers in ("no session", "repeated session", "bad version"):
            assert status == 400, outcome
        else:
            assert status == 200, outcome  # after admission, errors travel with 200

    @rule(session=sessions, body=st.binary(max_size=64) | st.sampled_from([b"[]", b"{}", b"null", b'{"jsonrpc":"2.0"}']))
    def garbage(self, session: Open | None, body: bytes) -> None:
        if session is None:
            return
        headers = [(b"Content-Type", b"application/json"), (b"Accept", b"application/json, text/event-stream"),
                   (b"Mcp-Session-Id", session.session_id.encode()), (b"MCP-Protocol-Version", b"2025-11-25")]
        self._send("POST", headers, body)

    @rule(session=sessions, size=st.integers(0, 4), notes=st.integers(0, 2))
    def batch(self, session: Open | None, size: int, notes: int) -> None:
        if session is None or not session.client.initialized:
            return
        requests = [session.client.request("ping") for _ in range(size)]
        note = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
        body = json.dumps([json.loads(r.body) for r in requests] + [note] * notes).encode()
        headers = list(requests[0].headers) if requests else list(session.client.notification("x").headers)
        outcome = self._send("POST", headers, body)
        if session.session_id in self.deleted:
            assert outcome is not None and outcome[0] == 404
        elif session.client.protocol_version != "2025-03-26" or size + notes == 0:
            assert outcome is not None and outcome[0] == 400, outcome  # no batches there; an empty one
        else:
            assert outcome is None  # an HttpBatch, handled

    @rule(session=sessions, rid=st.integers(0, 5) | st.text(max_size=3))
    def stray_response(self, session: Open | None, rid: Any) -> None:
        if session is None or session.session_id in self.deleted:
            return
        answer = session.client.answer(mcpwire.ServerRequest(request_id=rid, method="roots/list", request=None,
                                                             params={}, for_request=None), {"roots": []})
        assert self._send("POST", list(answer.headers), answer.body) == (202, None)

    @rule(session=sessions)
    def get_stream(self, session: Open | None) -> None:
        if session is None or not session.client.initialized:
            return
        outcome = self._send("GET", list(session.client.stream_headers()), b"")
        if session.session_id in self.deleted:
            assert outcome is not None and outcome[0] == 404
        else:
            assert outcome is None  # a SessionStream (opened, then dropped by the test host)

    @rule(session=consumes(sessions))
    def delete(self, session: Open | None) -> None:
        if session is None:
            return
        headers = session.client.end_session()
        if headers is None:
            return
        was_open = session.session_id in self.open
        outcome = self._send("DELETE", list(headers), b"")
        assert outcome is not None and outcome[0] == (200 if was_open else 404), outcome
        self.open.discard(session.session_id)
        self.deleted.add(session.session_id)

    @rule(version=st.sampled_from(ERA), method=st.sampled_from(["POST", "GET", "DELETE"]),
          header=st.booleans())
    def before_initialize(self, version: str, method: str, header: bool) -> None:
        headers = [(b"Content-Type", b"application/json"), (b"Accept", b"application/json, text/event-stream")]
        if header:
            headers.append((b"MCP-Protocol-Version", version.encode()))
        body = b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}' if method == "POST" else b""
        before = len(self.server.sessions)
        outcome = self._send(method, headers, body)
        assert outcome is not None
        status, message = outcome
        # Without any header the request is the stateless generation's (GET, DELETE: 405).
        expected = 400 if header or method == "POST" else 405
        assert status == expected and message["error"]["code"] in (-32600, -32020), outcome
        assert len(self.server.sessions) == before

    @rule(session=sessions, ending=st.sampled_from(["answer", "timeout", "cancel", "stray", "error"]))
    def input_round(self, session: Open | None, ending: str) -> None:
        """A tool asks the client (elicitation): the round ends one way or another, and then
        nothing waits for an answer."""
        if session is None or session.session_id in self.deleted or not session.client.initialized:
            return
        request = session.client.request("tools/call", {"name": "echo", "arguments": {"text": "x"}})
        answer = self.server.receive_http(HttpRequest(method="POST", target="/mcp", headers=list(request.headers),
                                                      body=request.body), now=NOW)
        if not isinstance(answer, HttpExchange):
            check_reply(answer)
            return
        question = {"q": {"method": "elicitation/create", "params": {"mode": "form", "message": "Name?",
                                                                     "requestedSchema": {"type": "object"}}}}
        frames = b"".join(part.data for part in answer.input_required(question) if isinstance(part, ResponseBody))
        asked = [json.loads(line[6:]) for line in frames.split(b"\n") if line.startswith(b"data: {")]
        stored = self.server.sessions.get(session.session_id, NOW)
        assert stored is not None and stored.waiting == len(asked) == 1
        rid = asked[0]["id"]
        if ending == "timeout":
            answer.input_timed_out(1)
        elif ending == "cancel":
            note = session.client.notification("notifications/cancelled", {"requestId": request.id})
            cancelled = self.server.receive_http(HttpRequest(method="POST", target="/mcp", headers=list(note.headers),
                                                             body=note.body), now=NOW)
            assert isinstance(cancelled, mcpwire.Cancelled) and check_reply(cancelled.reply) == (202, None)
            answer.cancel()
        else:
            rid = rid if ending != "stray" else f"{rid}x"
            message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid}
            if ending == "error":
                message["error"] = {"code": -1, "message": "declined"}
            else:
                message["result"] = {"action": "accept", "content": {"name": "A"}}
            headers = [(k, v) for k, v in request.headers]
            arrived = self.server.receive_http(HttpRequest(method="POST", target="/mcp", headers=headers,
                                                           body=json.dumps(message).encode()), now=NOW)
            if ending == "stray":
                assert check_reply(arrived) == (202, None)  # dropped
                answer.input_timed_out(1)
            else:
                assert isinstance(arrived, InputArrived) and arrived.ready
                assert check_reply(arrived.reply) == (202, None)
                try:
                    answer.resume()
                except mcpwire.ProtocolError as exc:  # the client declined: the host fails the call
                    assert ending == "error"
                    answer.fail(exc)
                else:
                    answer.complete(CallToolResult(content=[TextContent(text="ok")]))
        assert stored.waiting == 0

    @invariant()
    def store_matches(self) -> None:
        if hasattr(self, "server"):
            assert len(self.server.sessions) == len(self.open) <= MAX_SESSIONS
            assert self.server.open_streams == 0  # every stream the test host opened, it dropped


TestSessions = Sessions.TestCase
TestSessions.settings = settings(max_examples=budget(60), stateful_step_count=30, deadline=None,
                                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


# -- stdio: a connection of the initialize era ---------------------------------------------------------

ERA_LINES = [
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},'
    b'"clientInfo":{"name":"c","version":"1"}}}',
    b'{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},'
    b'"clientInfo":{"name":"c","version":"1"}}}',
    b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
    b'{"jsonrpc":"2.0","id":3,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":4,"method":"tools/list"}',
    b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}',
    b'{"jsonrpc":"2.0","id":6,"method":"logging/setLevel","params":{"level":"info"}}',
    b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}',
    b'{"jsonrpc":"2.0","id":7,"result":{"roots":[]}}',
    b'[{"jsonrpc":"2.0","id":8,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]',
    b'[]',
    b'[[]]',
    b'{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"inputResponses":{}}}',
    b'{"jsonrpc":"2.0","id":10,"method":"server/discover","params":{"_meta":'
    b'{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}',
    b'{"jsonrpc":"2.0","id":1',
]


def stdio_outputs(data: list[bytes]) -> list[Any]:
    server = make_server(supported_versions=ERA)
    conn = mcpwire.StdioConnection(server)
    seen: list[Any] = []
    outputs = [out for chunk in data if chunk for out in conn.receive_data(chunk, now=NOW)]
    for out in outputs + conn.receive_eof(now=NOW):
        if isinstance(out, bytes):
            for line in out.splitlines():
                message = json.loads(line)
                assert isinstance(message, dict) and message["jsonrpc"] == "2.0", message
                assert ("result" in message) != ("error" in message), message
                seen.append(message)
        elif isinstance(out, mcpwire.StdioExchange):
            seen.append(("exchange", out.request_id))
            out.cancel()
        else:
            seen.append(type(out).__name__)
    return seen


@settings(max_examples=budget(200), deadline=None)
@given(st.lists(st.sampled_from(ERA_LINES), max_size=12), st.data())
def test_stdio_initialize_era_lines_give_answers_whatever_the_chunking(lines: list[bytes], data: st.DataObject) -> None:
    stream = b"".join(line + b"\n" for line in lines)
    whole = stdio_outputs([stream])
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=6)))
    pieces = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)])]
    assert stdio_outputs(pieces) == whole
