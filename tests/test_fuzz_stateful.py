"""Invariant 4 (fuzz/README.md): our client engine against our server engine, through bytes.

A hypothesis RuleBasedStateMachine drives one client engine and one server engine (the fuzz
server, with a small page size) over a stdio connection whose bytes travel both ways in
arbitrary pieces, plus whole HTTP exchanges, with the test playing the host on the server
side: progress, logs, MRTR rounds (the client engine's own retries, requestState echoed from
the bytes), pagination, subscriptions (acknowledgements, list_changed, resource updates,
graceful close), cancellation, and errors of every origin (unknown method, bad params, a
failing handler, an application error, a result that breaks its outputSchema).

Invariant: every request gets exactly one final event (result, error or input_required) with
its own id, never one for a request it cancelled, and nothing is lost or duplicated: at the
end, once the host has answered everything, nothing is left in flight. A request state comes
back to the host exactly as it was issued.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import event as note
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

import mcpwire
from msgspec import UNSET
from fuzz.bounds import budget
from fuzz.host import INPUT_REQUESTS, result_for
from fuzz.targets import NOW, make_client, make_server

FINAL = (mcpwire.ResultReceived, mcpwire.ErrorResult, mcpwire.InputRequired)
ANSWERS = {
    "name": {"action": "accept", "content": {"name": "Alice"}},
    "url": {"action": "accept"},
    "sample": {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"},
    "roots": {"roots": [{"uri": "file:///tmp"}]},
}
KINDS = ["discover", "tools", "prompts", "echo", "add", "typed", "structured", "region", "read", "template", "prompt",
         "complete", "listen", "unknown_method", "unknown_tool", "bad_args"]


def key(request_id: Any) -> tuple[type, Any]:
    return (type(request_id), request_id)


class ClientAgainstServer(RuleBasedStateMachine):
    @initialize()
    def setup(self) -> None:
        self.server = make_server()
        self.client = make_client()
        self.conn = mcpwire.ClientStdioConnection(self.client)
        self.server_conn = mcpwire.StdioConnection(self.server)
        self.to_server = b""
        self.to_client = b""
        self.sent: dict[Any, mcpwire.OutgoingRequest] = {}  # every stdio request, by key
        self.finals: Counter[Any] = Counter()
        self.cancelled: set[Any] = set()
        self.exchanges: dict[Any, mcpwire.StdioExchange] = {}  # admitted, not yet answered by the host
        self.progress: dict[Any, float] = {}
        self.rounds: list[mcpwire.InputRequired] = []  # input_required results waiting for a retry
        self.issued: dict[int, Any] = {}  # states the host put in requestState, by serial
        self.serial = 0
        self.tokens = 0

    # -- building requests -------------------------------------------------------------------------
    def build(self, kind: str, progress: bool) -> mcpwire.OutgoingRequest:
        c = self.client
        kw: dict[str, Any] = {}
        if progress:
            self.tokens += 1
            kw["progress_token"] = f"p{self.tokens}"
            kw["log_level"] = "debug"
        if kind == "discover":
            return c.discover(**kw)
        if kind == "tools":
            return c.list_tools(**kw)
        if kind == "prompts":
            return c.list_prompts(**kw)
        if kind in ("echo", "structured"):
            return c.call_tool(kind, {"x": [1, "two"]}, **kw)
        if kind == "add":
            return c.call_tool("add", {"a": 1, "b": 2.5}, **kw)
        if kind == "typed":
            return c.call_tool("typed", {"a": 3}, **kw)
        if kind == "region":
            return c.call_tool("region", {"region": "eu", "n": 2}, **kw)
        if kind == "read":
            return c.read_resource("test://static-text", **kw)
        if kind == "template":
            return c.read_resource("test://template/7/data", **kw)
        if kind == "prompt":
            return c.get_prompt("greet", {"who": "bob"}, **kw)
        if kind == "complete":
            return c.complete({"type": "ref/prompt", "name": "pair"}, "arg1", "te", **kw)
        if kind == "listen":
            return c.listen({"toolsListChanged": True, "promptsListChanged": True,
                             "resourceSubscriptions": ["test://static-text"]})
        if kind == "unknown_method":
            return c.request("ping", {}, **kw)
        if kind == "unknown_tool":
            return c.call_tool("nope", {}, **kw)
        return c.call_tool("add", {"a": "not a number"}, **kw)  # a tool execution error (isError)

    # -- stdio ----------------------------------------------------------------------------------------
    @rule(kind=st.sampled_from(KINDS), progress=st.booleans())
    def send(self, kind: str, progress: bool) -> None:
        if len(self.sent) - len(self.finals) - len(self.cancelled) > 40:
            return  # stay under the connection's in-flight bound (64)
        request = self.build(kind, progress)
        self.sent[key(request.id)] = request
        self.to_server += self.conn.send(request)

    @rule(fraction=st.floats(0, 1))
    def pump_to_server(self, fraction: float) -> None:
        cut = round(len(self.to_server) * fraction)
        data, self.to_server = self.to_server[:cut], self.to_server[cut:]
        for item in self.server_conn.receive_data(data, now=NOW):
            self.server_output(item)

    def server_output(self, item: Any) -> None:
        if isinstance(item, bytes):
            self.to_client += item
        elif isinstance(item, mcpwire.StdioExchange):
            event = item.event
            state = getattr(event, "state", None)
            if state is not None:
                # The state comes back exactly as the host issued it, bound to this call.
                assert self.issued[state["serial"]] == state, (self.issued.get(state["serial"]), state)
                note("stdio: a requestState came back verified")
            self.exchanges[key(item.request_id)] = item
        elif isinstance(item, mcpwire.StdioListenStream):
            self.to_client += item.start()
        elif isinstance(item, mcpwire.Cancelled):
            self.exchanges.pop(key(item.request_id), None)
        else:
            raise AssertionError(item)

    def pick(self, index: int) -> tuple[Any, mcpwire.StdioExchange]:
        keys = sorted(self.exchanges, key=repr)
        k = keys[index % len(keys)]
        return k, self.exchanges[k]

    @precondition(lambda self: self.exchanges)
    @rule(index=st.integers(0, 50), message=st.none() | st.text(max_size=5))
    def host_progress(self, index: int, message: str | None) -> None:
        k, exchange = self.pick(index)
        value = self.progress.get(k, 0.0) + 1
        self.progress[k] = value
        self.to_client += exchange.progress(value, total=10.0, message=message)
        self.to_client += exchange.log("info", {"step": value})

    @precondition(lambda self: self.exchanges)
    @rule(index=st.integers(0, 50), how=st.sampled_from(["complete", "complete", "input", "fail", "app_error"]),
          variant=st.integers(0, 7))
    def host_answer(self, index: int, how: str, variant: int) -> None:
        k, exchange = self.pick(index)
        del self.exchanges[k]
        event = exchange.event
        mrtr = isinstance(event, (mcpwire.ToolCall, mcpwire.ResourceRead, mcpwire.PromptGet))
        if how == "input" and mrtr:
            self.serial += 1
            previous = getattr(event, "state", UNSET)
            state = {"serial": self.serial, "round": previous["round"] + 1 if isinstance(previous, dict) else 1}
            self.issued[self.serial] = state
            asks = ["name", "sample", "roots", "url"][: 1 + variant % 4]
            out = exchange.input_required({a: INPUT_REQUESTS[a] for a in asks}, state=state)
        elif how == "fail":
            out = exchange.fail(RuntimeError("handler crashed"))
        elif how == "app_error":
            out = exchange.fail(mcpwire.ProtocolError("application error", code=-32050))
        else:
            result = result_for(event, variant % 3 if isinstance(event, mcpwire.CompletionRequest) else variant)
            out = exchange.complete(result)
        self.to_client += out

    @rule(how=st.sampled_from(["complete", "input", "input", "fail", "app_error"]), variant=st.integers(0, 7))
    def round_trip(self, how: str, variant: int) -> None:
        """Everything delivered both ways, with one exchange answered in between."""
        self.pump_to_server(1.0)
        if self.exchanges:
            self.host_progress(variant, None)
            self.host_answer(variant, how, variant)
        self.pump_to_client(1.0)

    @rule(kind=st.sampled_from(["echo", "typed", "read", "template", "prompt"]), rounds=st.integers(1, 3),
          progress=st.booleans())
    def mrtr_chain(self, kind: str, rounds: int, progress: bool) -> None:
        """One call through ``rounds`` input_required rounds to its result, over stdio, while
        whatever else is in flight stays in flight."""
        request = self.build(kind, progress)
        for round_number in range(rounds + 1):
            self.sent[key(request.id)] = request
            self.to_server += self.conn.send(request)
            self.pump_to_server(1.0)
            exchange = self.exchanges.get(key(request.id))
            assert exchange is not None, f"{request.method} was not admitted"
            index = sorted(self.exchanges, key=repr).index(key(request.id))
            if progress:
                self.host_progress(index, "working")
            self.host_answer(index, "input" if round_number < rounds else "complete", round_number)
            self.pump_to_client(1.0)
            mine = [e for e in self.rounds if e.request_id == request.id]
            if round_number == rounds:
                assert not mine and key(request.id) in self.finals
                return
            assert len(mine) == 1, f"round {round_number} of {kind} gave no input_required"
            self.rounds.remove(mine[0])
            request = self.client.retry(mine[0], {k: ANSWERS[k] for k in mine[0].input_requests})
            note("stdio: an MRTR retry was sent")

    @rule(fraction=st.floats(0, 1))
    def pump_to_client(self, fraction: float) -> None:
        cut = round(len(self.to_client) * fraction)
        data, self.to_client = self.to_client[:cut], self.to_client[cut:]
        self.client_events(self.conn.receive_data(data))

    def client_events(self, events: list[Any]) -> None:
        for ev in events:
            if isinstance(ev, FINAL):
                if ev.request_id is None:
                    # Unattributable: only ever a late answer to a request we cancelled.
                    assert self.cancelled, ev
                    continue
                k = key(ev.request_id)
                assert k in self.sent, f"a final event for a request never sent: {ev!r}"
                assert k not in self.cancelled, f"a final event for a cancelled request: {ev!r}"
                self.finals[k] += 1
                assert self.finals[k] == 1, f"two final events for {ev.request_id!r}"
                if isinstance(ev, mcpwire.InputRequired):
                    self.rounds.append(ev)
                note(f"stdio final: {type(ev).__name__}")
            elif isinstance(ev, mcpwire.Progress):
                assert key(ev.request_id) in self.sent and key(ev.request_id) not in self.finals, ev
            elif isinstance(ev, (mcpwire.ListenAck, mcpwire.ListChanged, mcpwire.ResourceUpdated)):
                note(f"stdio: {type(ev).__name__}")
                sub = key(ev.subscription_id)
                assert self.sent[sub].method == "subscriptions/listen" and sub not in self.finals, ev

    @precondition(lambda self: self.rounds)
    @rule(index=st.integers(0, 20))
    def retry(self, index: int) -> None:
        event = self.rounds.pop(index % len(self.rounds))
        answers = {k: ANSWERS[k] for k in event.input_requests}
        request = self.client.retry(event, answers)
        assert request.params.get("requestState") == event.request_state or event.request_state is UNSET
        self.sent[key(request.id)] = request
        self.to_server += self.conn.send(request)

    @rule(index=st.integers(0, 50))
    def cancel(self, index: int) -> None:
        open_keys = sorted((k for k in self.sent if k not in self.finals and k not in self.cancelled), key=repr)
        if not open_keys:
            return
        k = open_keys[index % len(open_keys)]
        self.cancelled.add(k)
        note("stdio: a request was cancelled")
        self.to_server += self.conn.cancel(self.sent[k], "changed my mind")

    @rule(kind=st.sampled_from(["tools", "prompts", "resources"]))
    def list_changed(self, kind: Any) -> None:
        for _, out in self.server.list_changed(kind):
            self.to_client += out
        for _, out in self.server.resource_updated("test://static-text"):
            self.to_client += out

    @rule()
    def close_listeners(self) -> None:
        for _, out in self.server.close_listeners():
            self.to_client += out

    # -- HTTP: one whole exchange per rule -------------------------------------------------------------
    @rule(kind=st.sampled_from(KINDS[:-4] + ["unknown_method", "unknown_tool"]), how=st.sampled_from(
        ["complete", "input", "fail", "cancel"]), pieces=st.lists(st.integers(1, 64), max_size=5))
    def http_call(self, kind: str, how: str, pieces: list[int]) -> None:
        if kind == "listen":
            kind = "discover"
        request = self.build(kind, progress=True)
        rounds, expected = 0, None  # type: tuple[int, Any]
        while True:
            final = self.http_round(request, how, pieces, expected)
            if not isinstance(final, mcpwire.InputRequired) or rounds > 3:
                return
            rounds += 1
            expected = {"http": request.id}  # what the host put in the requestState of that round
            request = self.client.retry(final, {k: ANSWERS[k] for k in final.input_requests})
            how = "complete" if rounds > 1 else how

    def http_round(self, request: mcpwire.OutgoingRequest, how: str, pieces: list[int], expected: Any) -> Any:
        answer = self.server.receive_http(mcpwire.HttpRequest(
            method="POST", target="/mcp", headers=list(request.headers), body=request.body), now=NOW)
        events: list[Any]
        if isinstance(answer, tuple):
            events = list(answer)
        else:
            assert isinstance(answer, mcpwire.HttpExchange), answer
            events = list(answer.progress(1.0, total=2.0)) + list(answer.log("warning", "w"))
            event = answer.event
            # The retry's state is what the host issued in the round before, verified.
            assert getattr(event, "state", None) == expected, (event, expected)
            mrtr = isinstance(event, (mcpwire.ToolCall, mcpwire.ResourceRead, mcpwire.PromptGet))
            if how == "cancel":
                answer.cancel()  # the client went away: nothing more is sent, no final expected
                assert answer.complete(result_for(event)) == []
                return None
            if how == "input" and mrtr:
                events += answer.input_required({"name": INPUT_REQUESTS["name"]}, state={"http": request.id})
            elif how == "fail":
                events += answer.fail(mcpwire.ProtocolError("nope", code=-32602))
            else:
                events += answer.complete(result_for(event, 0))
        head, parts = events[0], events[1:]
        assert isinstance(head, mcpwire.ResponseHead)
        body = b"".join(p.data for p in parts if isinstance(p, mcpwire.ResponseBody))
        parser = mcpwire.HttpResponseParser(self.client, request, status=head.status,
                                            content_type=dict(head.headers).get(b"content-type"))
        got: list[Any] = []
        size = 0
        for step in pieces + [len(body)]:
            got += parser.feed(body[size:size + step])
            size += step
        got += parser.close()
        finals = [e for e in got if isinstance(e, FINAL)]
        assert len(finals) == 1 and finals[0].request_id == request.id, got
        assert parser.done
        note(f"http final: {type(finals[0]).__name__}")
        return finals[0]

    @rule(page=st.integers(1, 4), method=st.sampled_from(["tools/list", "resources/list", "prompts/list"]))
    def paginate_over_http(self, page: int, method: str) -> None:
        server = make_server(page_size=page) if page != 3 else self.server
        pages = self.client.paginate(method)
        while (request := pages.next_request()) is not None:
            answer = server.receive_http(mcpwire.HttpRequest(
                method="POST", target="/mcp", headers=list(request.headers), body=request.body), now=NOW)
            assert isinstance(answer, tuple), answer
            head, body = answer
            parser = mcpwire.HttpResponseParser(self.client, request, status=head.status, content_type=b"application/json")
            (result,) = parser.feed(body.data) + parser.close()
            assert isinstance(result, mcpwire.ResultReceived), result
            pages.add(result)
        names = [str(getattr(i, "name", None) or getattr(i, "uri", None)) for i in pages.items]
        assert not pages.truncated and names == sorted(names) and len(names) == len(set(names)), names

    # -- invariants ------------------------------------------------------------------------------------
    @invariant()
    def nothing_duplicated(self) -> None:
        assert all(n == 1 for n in self.finals.values())
        assert not (set(self.finals) & self.cancelled)

    def teardown(self) -> None:
        if not hasattr(self, "server"):
            return
        # Drain: deliver everything, let the host answer everything, retry every round, until
        # quiet. Then every request that was not cancelled has exactly one final event.
        for _ in range(50):
            self.pump_to_server(1.0)
            for _ in range(len(self.exchanges)):
                self.host_answer(0, "complete", 0)
            self.close_listeners()
            self.pump_to_client(1.0)
            while self.rounds:
                self.retry(0)
            if not (self.to_server or self.to_client or self.exchanges or self.rounds):
                break
        expected = {k for k in self.sent if k not in self.cancelled}
        lost = sorted((self.sent[k].method, k[1]) for k in expected - set(self.finals))
        assert not lost, f"requests without a final event: {lost}"
        assert self.conn.in_flight == 0
        assert self.server_conn.in_flight == 0
        assert self.server.open_listeners == 0


ClientAgainstServer.TestCase.settings = settings(
    max_examples=budget(100), stateful_step_count=50,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
TestClientAgainstServer = ClientAgainstServer.TestCase
