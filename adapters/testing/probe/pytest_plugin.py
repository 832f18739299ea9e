"""The probe as a pytest plugin: ``pytest --mcp-target URL`` runs every check of ``mcpwire probe``
against the server at URL as a test of its own (docs/probing.md).

Each check is an item named ``mcp_probe[<check id>]``, marked ``mcp_probe`` (``-m mcp_probe``
runs them alone, beside a project's own tests); it holds in every revision the server
negotiated where the check applies: it passes, fails with the request and the response as
evidence when any revision's MUST is broken (each revision's findings listed), passes with a
warning (a SHOULD; advice too with ``--mcp-strict``), or is skipped when it applies to none. The checks run once,
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

_FINDINGS = pytest.StashKey["dict[str, list[Finding]] | str"]()
_RANK = {"fail": 0, "warn": 1, "advice": 2, "pass": 3, "n/a": 4}


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
    """A check that failed (in at least one revision): its findings, one per revision."""

    def __init__(self, findings: list[Finding]) -> None:
        super().__init__("; ".join(f.detail for f in findings if f.status == "fail"))
        self.findings = findings


class ProbeWarning(McpwireAdapterError, UserWarning):
    """A check that passed with a warning: a SHOULD of the official text not kept (or, with
    ``--mcp-strict``, a convention of this project). A ``UserWarning``, under the one error root."""


class ProbeItem(pytest.Item):
    """One check of the probe against ``--mcp-target``."""

    def __init__(self, *, check: Check, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.check = check

    def runtest(self) -> None:
        found = _findings(self.config)
        if isinstance(found, str):
            pytest.fail(found, pytrace=False)
        findings = found.get(self.check.id, [])
        if not findings:
            pytest.skip("not applicable: the server negotiated no revision or transport this check holds in")
        worst = min(findings, key=lambda f: _RANK[f.status])
        if worst.status == "n/a":
            pytest.skip("not applicable: " + "; ".join(f"{f.subject.key}: {f.detail}" for f in findings))
        if worst.status == "fail":
            raise ProbeFailed(findings)
        for finding in findings:
            if finding.status in ("warn", "advice"):
                warnings.warn(f"mcp_probe[{finding.subject.key}]: {finding.detail}", ProbeWarning, stacklevel=1)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str:
        if not isinstance(excinfo.value, ProbeFailed):
            return str(super().repr_failure(excinfo))
        from .runner import evidence_json, problem_json

        lines = [f"{self.check.id}: {self.check.title} ({self.check.cites})", f"  sends: {self.check.sends}"]
        for finding in excinfo.value.findings:
            if finding.status != "fail":
                continue
            lines.append(f"  FAIL ({finding.subject.key}): {finding.detail}")
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


def _findings(config: pytest.Config) -> dict[str, list[Finding]] | str:
    """Every check's findings (one per revision it ran in), from one run of the probe (made at
    the first item); a string saying why when the target could not be probed at all."""
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
            grouped: dict[str, list[Finding]] = {}
            for finding in anyio.run(run):
                grouped.setdefault(finding.subject.id, []).append(finding)
            cached = grouped
        except (TransportError, OSError, ValueError) as exc:
            cached = f"cannot probe {target}: {exc}"
        config.stash[_FINDINGS] = cached
    return cached
