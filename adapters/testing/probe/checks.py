"""What a probe check is: :class:`Check`, one rule of MCP 2026-07-28 with the public page that
states it (``cites``), the raw request it sends and what it expects of the answer, or a short
exchange of its own; :class:`Target`, what the runner learned of the server before the checks;
:func:`needs`, a check's precondition on an advertised capability.

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
from dataclasses import dataclass
from typing import Any

from ..judge import Expect
from ..rawwire import VERSION, Request, Send
from ..verdict import Outcome

__all__ = ["SPEC_URL", "UNKNOWN_TOOL", "UNKNOWN_URI", "Check", "Target", "cite_url", "needs"]

UNKNOWN_TOOL = "mcpwire-probe-no-such-tool"
UNKNOWN_URI = "mcpwire-probe://no-such-resource"
SPEC_URL = "https://modelcontextprotocol.io" + f"/specification/{VERSION}/"  # + a page#anchor


def cite_url(cites: str) -> str | None:
    """The link for a check's ``cites`` (None for JSON-RPC 2.0, which has no anchors to link; a
    full URL as it is: another revision's page)."""
    if cites.startswith("JSON-RPC"):
        return None
    return cites if cites.startswith("https://") else SPEC_URL + cites


@dataclass
class Target:
    """What the runner learned about the target before the checks (a discover and a tools/list
    sent with every header and ``_meta`` right), and the options the user gave."""

    url: str
    host: str
    loopback: bool
    discover: dict[str, Any] | None = None
    tools: list[dict[str, Any]] | None = None
    call_tools: bool = False
    stdio: bool = False  # a subprocess speaking NDJSON: no HTTP status, no headers

    def capability(self, name: str) -> Any:
        caps = (self.discover or {}).get("capabilities")
        return caps.get(name) if isinstance(caps, dict) else None


@dataclass(frozen=True)
class Check:
    """One rule: ``build`` gives the request (or a string: why the check is not applicable) and
    ``expect`` judges the reply (one expectation, or several, strongest first); or ``steps``
    runs a short exchange and returns its outcome."""

    id: str
    title: str
    cites: str  # a page#anchor of the 2026-07-28 specification (see SPEC_URL), another page's URL, or "JSON-RPC 2.0 ..."
    sends: str
    build: Callable[[Target], Request | str] | None = None
    expect: Expect | tuple[Expect, ...] | None = None
    steps: Callable[[Target, Send], Awaitable[Outcome]] | None = None
    needs_tool_calls: bool = False
    http_only: bool = False  # a rule of HTTP (statuses, headers): not applicable to stdio
    enforces: tuple[str, ...] = ()  # with steps: the rules (of judge.RULES) its steps hold the server to

    def rules(self) -> tuple[str, ...]:
        """The rules this check holds a server to (keys of :data:`mcpwire_adapters.testing.judge.RULES`),
        strongest expectation first; a response's id is held to the basic page's MUST besides."""
        if self.expect is None:
            return self.enforces
        return tuple(dict.fromkeys(e.rule for e in ((self.expect,) if isinstance(self.expect, Expect) else self.expect)))


def needs(capability: str, build: Callable[[Target], Request]) -> Callable[[Target], Request | str]:
    """``build``, when the target advertises ``capability`` (else why the check does not apply)."""
    def guarded(target: Target) -> Request | str:
        if target.discover is None:
            return "server/discover failed, so the capabilities are unknown"
        if target.capability(capability) is None:
            return f"the server does not advertise {capability}"
        return build(target)
    return guarded
