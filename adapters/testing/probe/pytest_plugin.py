"""The probe as a pytest plugin: ``pytest --mcp-target URL`` runs every check of ``mcpwire probe``
against the server at URL as a test of its own (docs/probing.md).

Each check is an item named ``mcp_probe[<check id>]``, marked ``mcp_probe`` (``-m mcp_probe``
runs them alone, beside a project's own tests); it passes, fails with the request and the
response as evidence (a MUST of the official text is broken), passes with a warning (a
SHOULD; advice too with ``--mcp-strict``), or is skipped when it does not apply to the server. The checks run once,
together, at the first item (``--mcp-rate`` requests per second, default 10); tools are called
with generated arguments only with ``--mcp-call-tools``. The target may be an http(s) URL or a
command line that starts a stdio server (``--mcp-target 'python server.py --stdio'``).

Installed with the package (its ``pytest11`` entry point); nothing is imported beyond this module
until ``--mcp-target`` is given.
"""

from __future__ import annotations

import shlex
import warnings
from typing import TYPE_CHECKING, Any

import pytest

from ...errors import McpwireAdapterError

if TYPE_CHECKING:
    from .checks import Check
    from .runner import Finding

__all__ = ["ProbeItem", "ProbeWarning", "pytest_addoption", "pytest_collection_modifyitems", "pytest_configure"]

_FINDINGS = pytest.StashKey["dict[str, Finding] | str"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mcp", "MCP server probe (mcpwire)")
    group.addoption("--mcp-target", metavar="URL|COMMAND", default=None,
                    help="run mcpwire's probe checks against this MCP server (an http(s) URL, or a command "
                         "line starting a stdio server), one test per check")
    group.addoption("--mcp-rate", type=float, default=10.0, metavar="N",
                    help="requests per second the probe sends at most (0: no limit; default 10)")
    group.addoption("--mcp-call-tools", action="store_true", default=False,
                    help="let checks call the server's tools with generated arguments (tools have side effects)")
    group.addoption("--mcp-strict", action="store_true", default=False,
                    help="also report this project's conventions beyond the official text (as warnings)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "mcp_probe: a check of mcpwire's probe against --mcp-target")


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("mcp_target"):
        return
    from .table import CHECKS

    for check in CHECKS:
        name = f"mcp_probe[{check.id}]"
        item = ProbeItem.from_parent(session, name=name, nodeid=name, check=check)
        item.add_marker(pytest.mark.mcp_probe)
        items.append(item)


class ProbeFailed(McpwireAdapterError):
    """A check that failed: its finding."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(finding.detail)
        self.finding = finding


class ProbeWarning(McpwireAdapterError, UserWarning):
    """A check that passed with a warning: a SHOULD of the official text not kept (or, with
    ``--mcp-strict``, a convention of this project). A ``UserWarning``, under the one error root."""


class ProbeItem(pytest.Item):
    """One check of the probe against ``--mcp-target``."""

    def __init__(self, *, check: Check, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.check = check

    def runtest(self) -> None:
        findings = _findings(self.config)
        if isinstance(findings, str):
            pytest.fail(findings, pytrace=False)
        finding = findings[self.check.id]
        if finding.status == "n/a":
            pytest.skip(f"not applicable: {finding.detail}")
        if finding.status == "fail":
            raise ProbeFailed(finding)
        if finding.status in ("warn", "advice"):
            warnings.warn(f"mcp_probe[{self.check.id}]: {finding.detail}", ProbeWarning, stacklevel=1)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str:
        if not isinstance(excinfo.value, ProbeFailed):
            return str(super().repr_failure(excinfo))
        from .runner import evidence_json, problem_json

        finding = excinfo.value.finding
        lines = [f"{self.check.id}: {self.check.title} ({self.check.cites})", f"  sends: {self.check.sends}",
                 f"  FAIL: {finding.detail}"]
        for problem in map(problem_json, finding.problems):
            if "quote" in problem:
                lines.append(_escaped(f"  {problem['strength']} ({problem['source']}): \"{problem['quote']}\" "
                                      f"{problem['url'] or ''}".rstrip()))
        for exchange in finding.evidence:
            evidence = evidence_json(exchange)
            lines.append(f"  request: {_request_text(evidence['request'])}")
            lines.append(f"  reply:   {_reply_text(evidence.get('response'), evidence.get('error'))}")
        return "\n".join(lines)

    def reportinfo(self) -> tuple[str, int | None, str]:
        return self.check.cites, None, f"mcp_probe[{self.check.id}]"


def _request_text(request: dict[str, Any]) -> str:
    """``METHOD name: value; ... body`` (a stdio line: ``LINE body``) of evidence_json's request."""
    head = " ".join(f"{name}: {value};" for name, value in request.get("headers", ()))
    return _escaped(" ".join(part for part in (request.get("method"), head, request.get("body")) if part))


def _reply_text(response: dict[str, Any] | None, error: str | None) -> str:
    """``HTTP STATUS (CONTENT-TYPE) BODY`` of evidence_json's response (stdio: no status), then
    why the reading stopped short, if it did; ``(none: why)`` when nothing came back."""
    if response is None:
        return _escaped(f"(none: {error or 'no reply'})")
    kind = next((value for name, value in response.get("headers", ()) if name.lower() == "content-type"),
                "no content-type")
    status = f"HTTP {response['status']} " if response.get("status") else ""
    text = f"{status}({kind}) {response.get('body', '')}"
    return _escaped(text + (f" [then: {error}]" if error else ""))


def _escaped(text: str) -> str:
    """``text`` on one line, control characters escaped: a server's bytes must not drive the terminal."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _findings(config: pytest.Config) -> dict[str, Finding] | str:
    """Every check's finding, from one run of the probe (made at the first item); a string
    saying why when the target could not be probed at all."""
    cached = config.stash.get(_FINDINGS, None)
    if cached is None:
        import anyio

        from .table import CHECKS
        from .runner import probe, probe_stdio

        target = str(config.getoption("mcp_target"))
        rate = float(config.getoption("mcp_rate"))
        call_tools = bool(config.getoption("mcp_call_tools"))
        strict = bool(config.getoption("mcp_strict"))

        async def run() -> list[Finding]:
            if target.startswith(("http://", "https://")):
                return await probe(target, CHECKS, rate=rate, call_tools=call_tools, strict=strict)
            return await probe_stdio(shlex.split(target), CHECKS, rate=rate, call_tools=call_tools, strict=strict)

        from ...client.session import TransportError

        try:
            cached = {finding.subject.id: finding for finding in anyio.run(run)}
        except (TransportError, OSError, ValueError) as exc:
            cached = f"cannot probe {target}: {exc}"
        config.stash[_FINDINGS] = cached
    return cached
