"""What a probe check is: :class:`Check`, one rule with the public page that states it
(``cites``), the revisions and the transport it holds in, the raw request it sends and what it
expects of the answer, or a short exchange of its own; :class:`Target`, what the runner learned
of the server before the checks (the revision and transport it negotiated among them);
:func:`needs`, a check's precondition on an advertised capability.

A check of 2026-07-28 holds in that revision only; a check of the initialize era is written
once for the revisions whose text states its rule, and the runner runs it once per revision the
server negotiated (:meth:`Check.bound`: its ``key`` is then ``id@revision``), each problem
citing that revision's sentence.

A check builds its request from what the target said about itself (its discover result and
tool list) and states what a conforming server answers as an
:class:`~mcpwire_adapters.testing.judge.Expect`, judged by :func:`mcpwire_adapters.testing.judge.judge`.
A check whose precondition does not hold (no ``tools`` capability, a non-loopback URL) says why
it is not applicable instead of guessing. Multi-step checks (a multi round-trip round, a listen
stream) carry a ``steps`` coroutine instead of a single request, returning an
:class:`~mcpwire_adapters.testing.verdict.Outcome`.

Each expectation names its rule of :data:`mcpwire_adapters.testing.judge.RULES`, and so its
strength: a check fails only on a MUST of the official text (the specification and schema of the
revision, JSON-RPC 2.0, an HTTP RFC), warns on a SHOULD, and gives as advice (shown with
``--strict``) what is this project's convention only (the codes and statuses of docs/errors.md,
its id bounds). A report we cannot defend from the official text would be a bug in the tool. The
rows are in :mod:`mcpwire_adapters.testing.probe.table`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, Final

from ..era_rules import era_rule, spec_page
from ..judge import RULES, Expect
from ..rawwire import VERSION, Exchange, Request, Send
from ..verdict import Outcome

__all__ = ["HTTP_SSE", "SPEC_URL", "STDIO", "STREAMABLE_HTTP", "TRANSPORTS", "UNKNOWN_TOOL", "UNKNOWN_URI", "Check",
           "Target", "Tokens", "cite_url", "needs"]

STREAMABLE_HTTP: Final = "streamable-http"
HTTP_SSE: Final = "http+sse"  # the HTTP+SSE transport of 2024-11-05
STDIO: Final = "stdio"
TRANSPORTS: Final = (STREAMABLE_HTTP, HTTP_SSE, STDIO)

UNKNOWN_TOOL = "mcpwire-probe-no-such-tool"
UNKNOWN_URI = "mcpwire-probe://no-such-resource"
SPEC_URL = "https://modelcontextprotocol.io" + f"/specification/{VERSION}/"  # + a page#anchor


def cite_url(cites: str, revision: str = VERSION) -> str | None:
    """The link for a check's ``cites`` in ``revision``'s specification (None for JSON-RPC 2.0,
    which has no anchors to link; a full URL as it is)."""
    if cites.startswith("JSON-RPC"):
        return None
    return cites if cites.startswith("https://") else spec_page(revision, cites)


@dataclass(frozen=True)
class Tokens:
    """Bearer tokens the user gave for a server that asks for authorization: ``access`` (sent
    with every request), ``narrow`` (valid, with too small a scope) and ``foreign`` (valid,
    issued for another audience). None: not given (the checks needing it are not applicable)."""

    access: str | None = None
    narrow: str | None = None
    foreign: str | None = None


@dataclass
class Target:
    """What the runner learned about the target before the checks (a discover and a tools/list
    sent with every header and ``_meta`` right; for the initialize era, the result of an
    ``initialize`` naming the revision), the revision and transport the checks run in, and the
    options the user gave."""

    url: str
    host: str
    loopback: bool
    discover: dict[str, Any] | None = None
    tools: list[dict[str, Any]] | None = None
    call_tools: bool = False
    stdio: bool = False  # a subprocess speaking NDJSON: no HTTP status, no headers
    revision: str = VERSION
    transport: str = STREAMABLE_HTTP
    initialized: dict[str, Any] | None = None  # the InitializeResult negotiated for ``revision`` (initialize era)
    command: tuple[str, ...] = ()  # stdio: the command that starts the server
    timeout: float = 10.0
    rate: float = 0.0
    tokens: Tokens = field(default_factory=Tokens)
    challenge: Exchange | None = None  # the 401 the server answered without a token, if any
    opening: tuple[Exchange, ...] = ()  # stdio: the initialize that opened the revision's connection
    transcript: list[bytes] | None = None  # stdio: every line the server wrote so far

    def capability(self, name: str) -> Any:
        source = self.initialized if self.initialized is not None else self.discover
        caps = (source or {}).get("capabilities")
        return caps.get(name) if isinstance(caps, dict) else None

    def auth_headers(self) -> tuple[tuple[str, str], ...]:
        """The user's access token as a header (for the requests that do not go through the
        runner's sender: the GET streams)."""
        return (("Authorization", f"Bearer {self.tokens.access}"),) if self.tokens.access else ()

    def rule(self, name: str) -> str:
        """The id of rule ``name`` as this target's revision states it (``era.ping@2025-06-18``)."""
        return era_rule(name, self.revision)


@dataclass(frozen=True)
class Check:
    """One rule: ``build`` gives the request (or a string: why the check is not applicable) and
    ``expect`` judges the reply (one expectation, or several, strongest first); or ``steps``
    runs a short exchange and returns its outcome."""

    id: str
    title: str
    cites: str  # a page#anchor of the specification of the revision it runs in, a page's URL, or "JSON-RPC 2.0 ..."
    sends: str
    build: Callable[[Target], Request | str] | None = None
    expect: Expect | tuple[Expect, ...] | None = None
    steps: Callable[[Target, Send], Awaitable[Outcome]] | None = None
    needs_tool_calls: bool = False
    http_only: bool = False  # a rule of HTTP (statuses, headers): not applicable to stdio
    enforces: tuple[str, ...] = ()  # with steps: the rules (of judge.RULES) its steps hold the server to
    revisions: tuple[str, ...] = (VERSION,)  # the revisions whose text states the rule
    transports: tuple[str, ...] = (STREAMABLE_HTTP, STDIO)  # the transports it holds on
    revision: str = VERSION  # the revision it runs in (bound by the runner)

    @property
    def key(self) -> str:
        """The check's id, and the revision it ran in when that is not 2026-07-28 (``era.ping@2025-06-18``)."""
        return self.id if self.revision == VERSION else f"{self.id}@{self.revision}"

    @property
    def cite(self) -> str | None:
        """The link of the page it cites, in the revision it runs in."""
        return cite_url(self.cites, self.revision)

    def holds(self, revision: str, transport: str) -> bool:
        """Whether the check applies to a server speaking ``revision`` over ``transport``."""
        return revision in self.revisions and transport in self.transports

    def bound(self, revision: str) -> Check:
        """This check, run in ``revision``."""
        return self if revision == self.revision else replace(self, revision=revision)

    def rules(self) -> tuple[str, ...]:
        """The rules this check holds a server to (keys of :data:`mcpwire_adapters.testing.judge.RULES`),
        strongest expectation first; a response's id is held to the basic page's MUST besides. An
        initialize-era rule is named without its revision (``era.ping``): :meth:`rules_in` names
        the rows of one revision."""
        if self.expect is None:
            return self.enforces
        return tuple(dict.fromkeys(e.rule for e in ((self.expect,) if isinstance(self.expect, Expect) else self.expect)))

    def rules_in(self, revision: str) -> tuple[str, ...]:
        """:meth:`rules`, each an id of the table as ``revision`` states it (those that
        revision states: a row of the table)."""
        named = (r if r in RULES else era_rule(r, revision) for r in self.rules())
        return tuple(r for r in named if r in RULES)


def needs(capability: str, build: Callable[[Target], Request]) -> Callable[[Target], Request | str]:
    """``build``, when the target advertises ``capability`` (else why the check does not apply)."""
    def guarded(target: Target) -> Request | str:
        if target.discover is None:
            return "server/discover failed, so the capabilities are unknown"
        if target.capability(capability) is None:
            return f"the server does not advertise {capability}"
        return build(target)
    return guarded
