"""Coverage-guided harness: bytes -> a parsed HTTP request -> Server.receive_http.

Input format (a small structured decoder, so libFuzzer's mutations of the seed corpus stay
meaningful)::

    METHOD SP TARGET LF
    name: value LF          (any number of header lines; the first ": " splits name and value)
    LF
    body                    (every remaining byte)

A header ``x-fuzz-plan: N`` also picks which host plan (``fuzz.host.PLANS``) answers an
exchange; the server sees it too and ignores it. Invariant: the answer is a documented reply,
an exchange whose every output is documented, or a listen stream likewise; nothing raises.

Run: ``python fuzz/atheris_http.py fuzz/corpus/http -max_total_time=600 -print_final_stats=1``
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # when run as a script
from fuzz._harness import instrumented, main  # noqa: E402

with instrumented(__name__ == "__main__"):
    import mcpwire
    from fuzz import host, invariants, targets

SERVER = targets.make_server()


def parse(data: bytes) -> tuple[mcpwire.HttpRequest, int]:
    """The request the input stands for, and the host plan number."""
    head, sep, body = data.partition(b"\n\n")
    if not sep:
        head, body = data, b""
    lines = head.split(b"\n")
    method, _, target = lines[0].partition(b" ")
    headers: list[tuple[bytes, bytes]] = []
    plan = 0
    for line in lines[1:]:
        name, _, value = line.partition(b": ")
        if name.lower() == b"x-fuzz-plan":
            plan = int(value) if value.isdigit() and len(value) < 6 else 0
        headers.append((name, value))
    request = mcpwire.HttpRequest(method=method.decode("latin-1"), target=target.decode("latin-1"),
                                  headers=headers, body=body)
    return request, plan


def run_stream(stream: mcpwire.HttpListenStream) -> None:
    events = list(stream.start())
    for delivery in (SERVER.list_changed("tools"), SERVER.list_changed("prompts"),
                     SERVER.resource_updated("test://static-text/sub"), SERVER.close_listeners()):
        for target, out in delivery:
            if target is stream:
                events.extend(out)
    stream.cancel()
    invariants.http_stream_invariants(events)


def test_one_input(data: bytes) -> None:
    request, plan_number = parse(data)
    answer = SERVER.receive_http(request, now=targets.NOW)
    if isinstance(answer, tuple):
        invariants.reply_invariants(*answer)
    elif isinstance(answer, mcpwire.HttpExchange):
        plan = host.PLANS[plan_number % len(host.PLANS)]
        out, _host_error = host.drive(answer, plan)  # a LocalProtocolError is the host's, documented
        finished = answer.state is mcpwire.ExchangeState.DONE
        if out:
            invariants.http_stream_invariants(out, final=finished)
    elif isinstance(answer, mcpwire.HttpListenStream):
        run_stream(answer)
    else:
        raise invariants.Undocumented(f"receive_http returned {answer!r}")
    assert SERVER.open_listeners == 0


if __name__ == "__main__":
    main(test_one_input)
