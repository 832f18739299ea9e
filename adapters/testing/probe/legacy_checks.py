"""The probe's checks of the HTTP+SSE transport of revision 2024-11-05
(:data:`LEGACY_CHECKS`; specification 2024-11-05: Basic > Transports > HTTP with SSE): the SSE
stream's first event is ``endpoint``, naming the URI to POST to; the answers come back on the
stream as ``message`` events; a foreign Origin is refused. The rules every transport shares
(initialize, ping, the ids, errors on the stream) are :mod:`mcpwire_adapters.testing.probe.era_checks`'
and run over HTTP+SSE as well.
"""

from __future__ import annotations

from ..era_rules import LEGACY
from ..era_wire import request
from ..judge import problem, rule
from ..rawwire import Exchange, Request, Send, media_type
from ..rawwire_sse import stream_exchange
from ..verdict import NOT_APPLICABLE, PASS, Outcome, Problem
from .checks import HTTP_SSE, Check, Target
from .era_channel import Channel
from .era_checks import with_channel

__all__ = ["LEGACY_CHECKS"]

TRANSPORT, SECURITY = "basic/transports#http-with-sse", "basic/transports#security-warning"


async def _endpoint_first(target: Target, send: Send) -> Outcome:
    """GET of the SSE endpoint: an event stream whose first event is ``endpoint`` with a URI."""
    stream = await stream_exchange(target.url, Request("GET", (("Accept", "text/event-stream"), *target.auth_headers())),
                                   timeout=target.timeout, linger=target.timeout, events=1)
    evidence = [stream.exchange()]
    if stream.status != 200 or not stream.is_event_stream:
        return Outcome.broken(rule("legacy.two-endpoints@2024-11-05"),
                              f"GET answered HTTP {stream.status} with Content-Type "
                              f"{media_type(stream.header('content-type') or '') or 'none'!r}, expected an SSE stream",
                              evidence)
    first = stream.events[0] if stream.events else None
    if first is None or first.event != "endpoint" or not first.data.strip():
        shown = f"event {first.event!r} with data {first.data[:80]!r}" if first else "no event"
        return Outcome.broken(rule("legacy.endpoint-event@2024-11-05"), f"the first event is {shown}, expected "
                                                                         "endpoint naming a URI", evidence)
    return Outcome(PASS, f"endpoint {first.data.strip()[:100]}", evidence)


async def _answered_on_stream(target: Target, opened: Channel, evidence: list[Exchange]) -> Outcome:
    """A ping's POST is accepted (202, advice) and its answer is a ``message`` event (advice:
    the transport says so without a keyword; a missing answer is the ping check's MUST)."""
    assert opened.link is not None
    call = await opened.call(request("ping", "stream-1"))
    evidence.extend(call.exchanges)
    problems: list[Problem] = []
    if call.status != 202:
        problems.append(problem("mcpwire.legacy-post-status", f"the POST was answered HTTP {call.status}"))
    answered = [e for e in opened.link.stream.events if '"stream-1"' in e.data]
    if answered and answered[0].event != "message":
        problems.append(problem("legacy.message-events@2024-11-05", f"the answer came as a {answered[0].event!r} "
                                                                     "event, expected message"))
    elif not answered and call.answer() is not None:
        problems.append(problem("legacy.message-events@2024-11-05", "the answer came in the POST's response, not as "
                                                                     "an event on the SSE stream"))
    elif not answered:
        return Outcome(NOT_APPLICABLE, f"no answer on the stream ({call.error}): the ping check judges that", evidence)
    return Outcome.judged(problems, evidence)


async def _origin(target: Target, send: Send) -> Outcome:
    """A GET with a foreign Origin does not open the stream (the transport: servers MUST
    validate the Origin header; on a loopback server a foreign one is not valid)."""
    if not target.loopback:
        return Outcome(NOT_APPLICABLE, "the target is not on a loopback address (which origins are valid is its own "
                                       "choice)")
    stream = await stream_exchange(target.url, Request("GET", (("Accept", "text/event-stream"),
                                                               ("Origin", "http://evil.example.com"),
                                                               *target.auth_headers())),
                                   timeout=target.timeout, linger=0.5, events=1)
    evidence = [stream.exchange()]
    if stream.status == 0:
        return Outcome.broken(rule("jsonrpc.reply"), f"no response: {stream.error}", evidence)
    if 400 <= stream.status < 500:
        return Outcome(PASS, f"refused with HTTP {stream.status}", evidence)
    return Outcome.broken(rule("era.origin@2024-11-05"), f"HTTP {stream.status}: the stream was opened for a foreign "
                                                          "Origin", evidence)


LEGACY_CHECKS: tuple[Check, ...] = (
    Check("legacy.endpoint-first", "the SSE stream's first event is endpoint, naming the URI to post to", TRANSPORT,
          "GET with Accept: text/event-stream (its first event)", steps=_endpoint_first,
          enforces=("legacy.two-endpoints", "legacy.endpoint-event"), revisions=(LEGACY,), transports=(HTTP_SSE,)),
    Check("legacy.answered-on-stream", "a posted request is accepted (202) and answered as a message event",
          TRANSPORT, "ping posted to the endpoint", steps=with_channel(_answered_on_stream),
          enforces=("legacy.message-events", "mcpwire.legacy-post-status"), revisions=(LEGACY,),
          transports=(HTTP_SSE,)),
    Check("legacy.origin-foreign-refused", "a foreign Origin does not open the SSE stream", SECURITY,
          "GET with Origin: http://evil.example.com", steps=_origin, enforces=("era.origin",), revisions=(LEGACY,),
          transports=(HTTP_SSE,)),
)
