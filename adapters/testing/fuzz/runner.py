"""``mcpwire fuzz``: hypothesis-driven fuzzing of any MCP server, over Streamable HTTP or stdio,
in revision 2026-07-28 or in one of the initialize era (``revision``: a session is opened first,
and every case is sent on it; :mod:`mcpwire_adapters.testing.fuzz.era_cases` and
:mod:`mcpwire_adapters.testing.fuzz.era_oracle`), or over the HTTP+SSE transport of 2024-11-05
(:mod:`mcpwire_adapters.testing.fuzz.legacy`), with every failure shrunk and written as a
replayable file (docs/fuzzing.md). This module owns
the public entry points (:func:`fuzz`, :func:`fuzz_stdio`, :func:`replay`), the run itself
(hypothesis in a worker thread, shrinking, one failure per bug), the report
(:class:`FuzzReport`) and the replay of a failure's file (written, with its ``curl`` script, by
:mod:`mcpwire_adapters.testing.fuzz.reproducers`).

    report = await fuzz("http://127.0.0.1:8000/mcp", max_examples=200, seed=1, out_dir="fuzz-out")
    report = await fuzz_stdio(["python", "server.py"], time_budget=60)
    result = await replay("fuzz-out/failure-1.json")

Each case is one request, valid or mutated at one layer (:mod:`mcpwire_adapters.testing.fuzz.strategies`),
or a stateful sequence (discover, lists by their cursors, tool calls through their rounds,
listen, cancel: :func:`mcpwire_adapters.testing.fuzz.cases.run_sequence`). Every answer is judged by
the one judge (:func:`mcpwire_adapters.testing.demand.judge_step`) against what the oracle reads
from the request (:func:`mcpwire_adapters.testing.fuzz.oracle.expect_for`), and after each case the
target must still answer a well-formed server/discover (on stdio every message is followed by
one). Each problem names the rule it breaks and so its strength (:mod:`mcpwire_adapters.testing.judge`):
a MUST of the official text makes a failure, a SHOULD a warning, this project's own conventions
advice (reported with ``strict`` only). A request that gets no answer within ``timeout`` breaks
no rule (a tool may run that long): it is reported as slow, with the time it exceeded. A failing
case is shrunk by hypothesis, then by :func:`mcpwire_adapters.testing.fuzz.shrink.shortest` to the
fewest of its steps that still fail (at best its one request), and written, as sent, to
``out_dir``: a JSON file that :func:`replay` (``mcpwire fuzz --replay FILE``) sends again and
judges again, with a ``curl`` script (HTTP) or a line file (stdio) beside it. Each finding is a
:data:`Failure`.

Safe by default, as the probe: only the named target is contacted, at most ``rate`` requests a
second, and tools are called (with arguments drawn from their own ``inputSchema``) only when
named in ``tools`` or with ``all_tools=True``. The HTTP and stdio plumbing is the probe's too
(:func:`mcpwire_adapters.testing.rawwire.http_sender`, :func:`mcpwire_adapters.testing.rawwire_stdio.stdio_sender`).
Needs hypothesis: ``pip install 'mcpwire[probe]'``.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import threading
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeAlias
from urllib.parse import urlsplit

import anyio
import anyio.from_thread
import anyio.to_thread

try:
    import hypothesis
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import strategies as st
    from hypothesis.database import DirectoryBasedExampleDatabase
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("mcpwire fuzz needs hypothesis: pip install 'mcpwire[probe]'") from exc

from ...client.session import TransportError
from ...errors import McpwireAdapterError, UsageError
from ..demand import judge_step
from ..era_rules import ERA_REVISIONS, LEGACY, SESSION_REVISIONS
from ..era_wire import ERA_BASE, EraSession, initialize, notification, open_session, request, response_of
from ..judge import ECHO, NULL, rule
from ..probe.checks import HTTP_SSE
from ..probe.dialect import negotiate_http
from ..rawwire import (
    UNSENDABLE,
    VERSION,
    Exchange,
    Reply,
    Request,
    Send,
    first_result,
    http_sender,
    is_loopback_host,
    meta,
    paced,
    rpc,
    sent_id,
    timed_out,
)
from ..rawwire_sse import LEGACY_HEADERS
from ..rawwire_stdio import discover_sentinel, ping_sentinel, stdio_sender
from ..verdict import FAIL, Finding, Problem, status_of, visible
from .cases import Info, Step, decode_step, run_sequence, single_steps
from .era_cases import era_single_steps, run_era_sequence
from .legacy import LegacyConnection, judge_legacy
from .oracle import Context, expect_for
from .reproducers import FORMAT, curl_command, write_failure
from .shrink import shortest

__all__ = ["FLAKY", "Failure", "FuzzReport", "Progress", "ReplayResult", "Slow", "curl_command", "fuzz", "fuzz_stdio",
           "replay"]

Progress = Callable[[int, int, float], None]  # (cases run, failures found, seconds elapsed)


Failure: TypeAlias = Finding[list[Step]]
"""A case that broke a rule, shrunk: ``subject`` is its steps as sent, ``status`` "fail" (a MUST),
"warn" (a SHOULD) or "advice", ``problems`` what is wrong (each with its rule), ``evidence``
what came back; ``flaky`` and ``path`` (the replay file, once written)."""

FLAKY = ("flaky: the case did not fail again when hypothesis replayed it, so it was not shrunk; it may "
         "depend on timing or on what the server did before (replay the file to see whether it still fails)")


@dataclass(frozen=True)
class Slow:
    """Requests that got no (complete) answer within ``budget`` seconds: no rule is broken (a
    tool may run that long). ``step``: the first as sent; ``kind``: what they were (the method,
    and the tool called); ``count``: how many."""

    step: Step
    budget: float
    kind: str
    count: int = 1


@dataclass
class FuzzReport:
    """What a run found: ``findings`` (each case that broke a rule, its strength in its status;
    :attr:`failures` the MUST ones), ``slow`` (requests past the time allowed, not failures),
    how many ``cases`` in how many ``seconds``."""

    target: str
    seed: int
    cases: int = 0
    seconds: float = 0.0
    findings: list[Failure] = field(default_factory=list)
    slow: list[Slow] = field(default_factory=list)

    @property
    def failures(self) -> list[Failure]:
        """The findings that break a MUST (the run's exit status is non-zero only for these)."""
        return [f for f in self.findings if f.status == FAIL]

    @property
    def rate(self) -> float:
        return self.cases / self.seconds if self.seconds > 0 else 0.0


class _CaseFailed(McpwireAdapterError):
    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass
class _Options:
    max_examples: int
    time_budget: float | None
    seed: int
    database: str | None
    out_dir: str | None
    progress: Progress | None
    sequences: bool
    target: str
    strict: bool = False
    timeout: float = 10.0


async def _listed(send: Send, info: Info, method: str, key: str) -> list[Any]:
    """The items of one list request (2026-07-28: with its _meta; the initialize era: on the session)."""
    if info.revision == VERSION:
        got = first_result((await send(rpc(method, {"_meta": meta()}, rpc_id=f"fuzz-{key}")))[1])
    else:
        body = request(method, f"fuzz-{key}", {})
        got = (response_of((await send(_era_request(info, body)))[1]) or {}).get("result")
    items = (got or {}).get(key) if isinstance(got, dict) else None
    return items if isinstance(items, list) else []


def _era_request(info: Info, message: Any, **kw: Any) -> Request:
    """``message`` as sent on the run's initialize-era connection (HTTP: with the session's
    headers; HTTP+SSE: its Content-Type)."""
    if info.session is not None:
        return info.session.post(message, **kw)
    return Request("POST", LEGACY_HEADERS if info.http_sse else (), json.dumps(message).encode(),
                   rpc_id=message.get("id"), **kw)


async def _gather(send: Send, info: Info, tools: Sequence[str], all_tools: bool, unreachable: str) -> Info:
    """What the target offers, asked with well-formed requests before the run (``info`` says
    the revision; for the initialize era its InitializeResult is already in)."""
    if info.revision == VERSION:
        first = await send(rpc("server/discover", rpc_id="fuzz-discover"))
        if first[1] is None:
            raise TransportError(f"{unreachable}: {first[2]}")
        info.discover = first_result(first[1])
    caps = info.capabilities
    if "tools" in caps:
        info.tools = [t for t in await _listed(send, info, "tools/list", "tools") if isinstance(t, dict)]
    unknown = sorted(set(tools) - {str(t.get("name")) for t in info.tools})
    if unknown:
        raise UsageError(f"the server lists no tool named {', '.join(unknown)}")
    info.allowed_tools = [t for t in info.tools if all_tools or t.get("name") in tools]
    if "resources" in caps:
        info.resources = [str(r["uri"]) for r in await _listed(send, info, "resources/list", "resources")
                          if isinstance(r, dict) and isinstance(r.get("uri"), str)][:20]
    if "prompts" in caps:
        info.prompts = [p for p in await _listed(send, info, "prompts/list", "prompts") if isinstance(p, dict)][:20]
    if not info.stdio and info.revision == VERSION:  # does it serve clients older than 2025-06-18 (no MCP-Protocol-Version header)?
        older = await send(Request("POST", ERA_BASE, json.dumps(initialize("2025-03-26", "fuzz-older")).encode(),
                                   rpc_id="fuzz-older"))
        info.initialize_era = (first_result(older[1]) or {}).get("protocolVersion") == "2025-03-26"
    return info


def _judge(step: Step, reply: Reply | None, error: str | None, context: Context) -> list[Problem]:
    """Every problem with the answer to one step (no answer at all is one; no answer in time is none)."""
    if context.http_sse:
        return judge_legacy(step.judge, step.request, reply, error, lambda: expect_for(step.request, context))
    return judge_step(step.judge, step.request, reply, error, lambda: expect_for(step.request, context),
                      stdio=context.stdio, revision=context.revision)


def _context(info: Info, loopback: bool) -> Context:
    known = info.discover if info.revision == VERSION else info.initialized
    caps = info.capabilities if known is not None else None
    return Context(stdio=info.stdio, loopback=loopback, capabilities=frozenset(caps) if caps is not None else None,
                   header_tools=info.header_tools(), initialize_era=info.initialize_era, revision=info.revision,
                   session_id=info.session.session_id if info.session is not None else None, http_sse=info.http_sse)


def _barrier(info: Info) -> Request:
    """A request whose answer shows every earlier line was read (stdio): a ping in the initialize era."""
    if info.revision != VERSION:
        return replace(_era_request(info, request("ping", "fuzz-barrier")), answered=True)
    return replace(rpc("server/discover", rpc_id="fuzz-barrier"), answered=True)


def _alive_name(info: Info) -> str:
    return "server/discover" if info.revision == VERSION else "ping"


def _alive(info: Info) -> Request:
    """A well-formed request the target must still answer after a case."""
    if info.revision != VERSION:
        return _era_request(info, request("ping", "fuzz-alive"))
    return rpc("server/discover", rpc_id="fuzz-alive")


def _awaited(step: Step, context: Context) -> Step:
    """Tell the stdio (or HTTP+SSE) sender which answer to wait for: none, the one with the id
    the body carries (a body mutation may leave it readable), a null one, or either."""
    expect, rpc_id = expect_for(step.request, context), sent_id(step.request)
    if expect.batch:  # a batch: wait for the answer to each of its requests
        return replace(step, request=replace(step.request, answered=True, rpc_id=tuple(expect.batch)))
    if expect.silent or expect.id is None:  # nothing, or not settled (a blank line, say): the sentinel only
        return replace(step, request=replace(step.request, answered=False))
    if expect.id == NULL or (expect.id == ECHO and rpc_id is not None):
        return replace(step, request=replace(step.request, answered=True, rpc_id=None if expect.id == NULL else rpc_id))
    return replace(step, request=replace(step.request, rpc_id=rpc_id))  # echo-or-null: either


def _signature(step: Step, problems: Sequence[str]) -> str:
    return step.label.split(".")[0] + "|" + re.sub(r"'[^']*'|\"[^\"]*\"|\b\d{3,}\b", "_", problems[0])[:100]


def _slow_kind(step: Step) -> str:
    """What makes requests slow alike: the method, and the tool (prompt) called; the case's
    label when the bytes hold no method name."""
    try:
        message = json.loads(step.request.body)
    except ValueError:
        return step.label
    method = message.get("method") if isinstance(message, dict) else None
    if not isinstance(method, str):
        return step.label
    params = message.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    return f"{method} of {name}" if isinstance(name, str) else method


async def _engine(send: Send, info: Info, loopback: bool, options: _Options,
                  fresh: Callable[[], Coroutine[Any, Any, None]] | None = None) -> FuzzReport:
    """Run hypothesis (in a worker thread: its loop is synchronous) against ``send``; ``fresh``,
    if given, runs before each case and each replay of one (HTTP+SSE: a stream the server ended
    is opened again, so no case spans two)."""
    context = _context(info, loopback)
    report = FuzzReport(target=options.target, seed=options.seed)
    started = time.monotonic()
    deadline = started + options.time_budget if options.time_budget else None
    known: set[str] = set()
    lock = threading.Lock()
    case: dict[str, Any] = {}  # the current case's steps and evidence, and the last failing one

    async def send_one(request: Request) -> Exchange:
        return await send(request)

    slow: dict[str, Slow] = {}

    def note_slow(step: Step) -> None:
        kind = _slow_kind(step)
        with lock:
            seen = slow.get(kind)
            slow[kind] = replace(seen, count=seen.count + 1) if seen else Slow(step, options.timeout, kind)

    def prepared(step: Step) -> Step:
        return _awaited(step, context) if (info.stdio or info.http_sse) and step.judge == "oracle" \
            and step.request.answered is None else step

    def call(step: Step) -> list[Any]:
        step = prepared(step)
        sent = anyio.from_thread.run(send_one, step.request)
        if sent[2] is not None and sent[2].startswith(UNSENDABLE):
            hypothesis.reject()  # the generator's fault, not the server's: draw another case
        case["steps"].append(step)
        case["evidence"].append(sent)
        if timed_out(sent[2]):
            note_slow(step)  # no rule broken: the request may take that long
        problems = visible(_judge(step, sent[1], sent[2], context), strict=options.strict)
        if problems:
            raise _CaseFailed(problems)
        return sent[1].messages() if sent[1] is not None and sent[1].body else []

    def alive() -> None:
        probe = Step(_alive(info), label="alive")
        sent = anyio.from_thread.run(send_one, probe.request)
        if first_result(sent[1]) is None and not timed_out(sent[2]):  # busy past the time allowed is not gone
            case["steps"].append(probe)
            case["evidence"].append(sent)
            raise _CaseFailed([Problem(f"the target no longer answers a well-formed {_alive_name(info)} after the "
                                       f"case ({sent[2] or f'HTTP {sent[1].status if sent[1] else 0}'})",
                                       rule("jsonrpc.reply"))])

    def replayed(steps: list[Step], signature: str) -> Failure | None:
        """``steps`` sent again in order: the failure they end in, if it is one of ``signature``."""
        if info.stdio:
            anyio.from_thread.run(send_one, _barrier(info))
        if fresh is not None:
            anyio.from_thread.run(fresh)
        evidence: list[Exchange] = []
        for number, step in enumerate(steps, 1):
            sent = anyio.from_thread.run(send_one, step.request)
            evidence.append(sent)
            if step.label == "alive":
                if first_result(sent[1]) is not None or timed_out(sent[2]):
                    return None
                last = steps[-2] if len(steps) > 1 else step
                gone = [Problem(f"the target no longer answers a well-formed {_alive_name(info)} after the case "
                                f"({sent[2] or f'HTTP {sent[1].status if sent[1] else 0}'})", rule("jsonrpc.reply"))]
                return Failure.judged(steps, gone, evidence) if _signature(last, gone) == signature else None
            problems = visible(_judge(step, sent[1], sent[2], context), strict=options.strict)
            if problems:
                if number == len(steps) and _signature(step, problems) == signature:
                    return Failure.judged(steps, problems, evidence)
                return None
        return None

    def body(data: st.DataObject) -> None:
        if deadline is not None and time.monotonic() > deadline:
            return
        case.update(steps=[], evidence=[])
        if info.stdio:  # a barrier: late answers to the last case's lines are read and dropped here
            anyio.from_thread.run(send_one, _barrier(info))
        if fresh is not None:
            anyio.from_thread.run(fresh)
        era = info.revision != VERSION
        try:
            if options.sequences and data.draw(st.integers(0, 3), label="kind") == 3:  # 0, the simplest: one request
                (run_era_sequence if era else run_sequence)(data, info, call)
            else:
                call(data.draw(era_single_steps(info) if era else single_steps(info), label="case"))
            if not info.stdio:
                alive()
        except _CaseFailed as failed:
            last = case["steps"][-1] if case["steps"][-1].label != "alive" or len(case["steps"]) < 2 \
                else case["steps"][-2]
            signature = _signature(last, failed.problems)
            if signature in known:
                return  # found and written already: look for other bugs
            case["failed"] = (signature, Failure.judged(list(case["steps"]), failed.problems, case["evidence"]))
            raise
        finally:
            with lock:
                report.cases += 1
            if options.progress is not None:
                options.progress(report.cases, len(report.findings), time.monotonic() - started)

    def _shortened(failure: Failure, signature: str) -> Failure:
        """``failure`` with its steps cut to the fewest that still fail the same way when sent
        again (the evidence and problems are that replay's)."""
        if len(failure.subject) < 2:
            return failure
        found: dict[int, Failure] = {}

        def fails(candidate: list[Step]) -> bool:
            again = replayed(candidate, signature)
            if again is not None:
                found[len(candidate)] = again
            return again is not None

        fewer = shortest(failure.subject, fails, last_is_check=failure.subject[-1].label == "alive")
        shorter = found.get(len(fewer))
        if len(fewer) == len(failure.subject) or shorter is None:
            return failure
        return shorter  # it failed again when replayed: not flaky

    database = DirectoryBasedExampleDatabase(options.database) if options.database else None

    def run_rounds() -> None:
        examples, round_ = 0, 0
        while examples < options.max_examples and (deadline is None or time.monotonic() < deadline):
            size = min(100, options.max_examples - examples)
            test = given(st.data())(body)
            test._hypothesis_internal_database_key = hashlib.sha256(  # type: ignore[attr-defined]
                f"mcpwire-fuzz {options.target}".encode()).digest()
            test = hypothesis.seed(options.seed + round_)(test)  # before settings: seed() alone turns the database off
            test = settings(max_examples=size, deadline=None, database=database, derandomize=False,
                            suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet, print_blob=False,
                            report_multiple_bugs=False, phases=[p for p in Phase if p.name != "explain"])(test)
            case.pop("failed", None)
            flaky = False
            try:
                test()
            except (_CaseFailed, hypothesis.errors.Unsatisfiable):  # a failure (kept below); or every case redrawn
                pass
            except (hypothesis.errors.Flaky, hypothesis.errors.FlakyFailure, BaseExceptionGroup):
                flaky = True
            if "failed" in case:
                signature, failure = case.pop("failed")
                failure.flaky = flaky
                known.add(signature)
                failure = _shortened(failure, signature)
                report.findings.append(failure)
                if options.out_dir:
                    failure.path = write_failure(Path(options.out_dir), len(report.findings), failure, info, context,
                                                 options.target, options.strict)
            examples += size
            round_ += 1

    await anyio.to_thread.run_sync(run_rounds)
    report.slow = list(slow.values())
    report.seconds = time.monotonic() - started
    return report


async def fuzz(url: str, *, max_examples: int = 100, time_budget: float | None = None, seed: int = 0,
               database: str | None = None, out_dir: str | None = None, rate: float = 0.0,
               tools: Sequence[str] = (), all_tools: bool = False, timeout: float = 10.0,
               sequences: bool = True, progress: Progress | None = None, strict: bool = False,
               revision: str | None = None) -> FuzzReport:
    """Fuzz the MCP endpoint ``url``: up to ``max_examples`` cases (and at most
    ``time_budget`` seconds), from ``seed``; hypothesis' examples kept in ``database`` (a
    directory) when given; findings written to ``out_dir`` when given; ``strict``: this
    project's conventions beyond the official text are findings too (advice). A request with
    no answer within ``timeout`` seconds is slow, not a failure. ``revision``: the revision to
    fuzz (an initialize-era one: a session is opened first, and every request carries its
    headers; 2024-11-05: over its HTTP+SSE transport, ``url`` the SSE endpoint); by default
    2026-07-28 if the server answers server/discover, else the newest initialize-era revision
    it negotiates, else 2024-11-05 over HTTP+SSE when the probe's negotiation finds that
    transport there. :class:`TransportError` when the first request gets no answer (or no
    revision is negotiated); ``ValueError`` for a tool that is not listed."""
    host = urlsplit(url).hostname or ""
    options = _Options(max_examples, time_budget, seed, database, out_dir, progress, sequences, url, strict, timeout)
    if revision != LEGACY:
        send = http_sender(url, rate, timeout)
        info = await _open_http(send, url, revision, timeout, rate)
        if info is not None:
            info = await _gather(send, info, tools, all_tools, f"cannot reach {url}")
            return await _engine(send, info, is_loopback_host(host), options)
    async with anyio.create_task_group() as group:
        connection = LegacyConnection(group, url, timeout=timeout, rate=rate)
        try:
            info = Info(stdio=False, revision=LEGACY, http_sse=True, initialized=await connection.open())
            info = await _gather(connection.send, info, tools, all_tools, f"no answer from {url}")
            report = await _engine(connection.send, info, is_loopback_host(host), options, fresh=connection.ensure)
        finally:
            connection.close()
    return report


async def _open_http(send: Send, url: str, revision: str | None, timeout: float, rate: float) -> Info | None:
    """The revision to fuzz over Streamable HTTP, and for the initialize era the session opened
    for the run; None when nothing is negotiated there but the probe's negotiation finds the
    HTTP+SSE transport of 2024-11-05 (every POST refused, a GET whose first event is ``endpoint``)."""
    if revision in (None, VERSION):
        first = await send(rpc("server/discover", rpc_id="fuzz-discover"))
        if first[1] is None:
            raise TransportError(f"cannot reach {url}: {first[2]}")
        if revision == VERSION or first_result(first[1]) is not None:
            return Info(stdio=False)
    for candidate in (revision,) if revision is not None else SESSION_REVISIONS:
        assert candidate is not None
        if candidate not in SESSION_REVISIONS:
            raise UsageError(f"cannot fuzz {candidate}: one of {', '.join((VERSION, *ERA_REVISIONS))}")
        evidence: list[Exchange] = []
        session = await open_session(send, candidate, evidence, rpc_id="fuzz-init")
        if isinstance(session, EraSession):
            return Info(stdio=False, revision=candidate, session=session, initialized=session.result)
        if revision is not None:
            raise TransportError(f"{url}: {session}")
    if (await negotiate_http(send, url, timeout=timeout, rate=rate)).transport == HTTP_SSE:
        return None
    raise TransportError(f"{url} negotiates no revision: server/discover and initialize got no result, and a GET "
                         "opened no HTTP+SSE stream")


async def fuzz_stdio(command: Sequence[str], *, max_examples: int = 100, time_budget: float | None = None,
                     seed: int = 0, database: str | None = None, out_dir: str | None = None, rate: float = 0.0,
                     tools: Sequence[str] = (), all_tools: bool = False, timeout: float = 10.0,
                     sequences: bool = True, progress: Progress | None = None, strict: bool = False,
                     revision: str | None = None) -> FuzzReport:
    """Fuzz a server started as ``command`` speaking NDJSON on stdio (one process for the run;
    every message is followed by a request whose answer shows it is still alive:
    server/discover, or in the initialize era a ping, after the ``initialize`` that opened the
    connection). ``revision`` as in :func:`fuzz` (the default picks it with a process per try)."""
    target = shlex.join(command)
    options = _Options(max_examples, time_budget, seed, database, out_dir, progress, sequences, target, strict, timeout)
    chosen = revision or await _stdio_revision(command, timeout)
    era = chosen != VERSION
    async with stdio_sender(command, timeout=timeout, sentinel=ping_sentinel if era else discover_sentinel) as raw:
        send = paced(raw, rate)
        info = Info(stdio=True, revision=chosen)
        if era:
            result = await _stdio_initialize(send, chosen)
            if result is None:
                raise TransportError(f"{target}: initialize naming {chosen} was not answered with {chosen}")
            info.initialized = result
        info = await _gather(send, info, tools, all_tools, f"no answer from {target}")
        return await _engine(send, info, False, options)


async def _stdio_initialize(send: Send, revision: str) -> dict[str, Any] | None:
    """``initialize`` naming ``revision`` and ``notifications/initialized``: the InitializeResult,
    or None when the server answered another revision (or nothing)."""
    sent = await send(Request("POST", (), json.dumps(initialize(revision, "fuzz-init")).encode(), rpc_id="fuzz-init",
                              sentinel=False))
    result = (response_of(sent[1]) or {}).get("result")
    if not isinstance(result, dict) or result.get("protocolVersion") != revision:
        return None
    await send(Request("POST", (), json.dumps(notification("notifications/initialized")).encode(), answered=False))
    return result


async def _stdio_revision(command: Sequence[str], timeout: float) -> str:
    """The newest revision a stdio server negotiates (a process per try)."""
    async with stdio_sender(command, timeout=timeout) as raw:
        first = await raw(rpc("server/discover", rpc_id="fuzz-discover"))
        if first_result(first[1]) is not None:
            return VERSION
    for revision in ERA_REVISIONS:
        async with stdio_sender(command, timeout=timeout, sentinel=ping_sentinel) as raw:
            if await _stdio_initialize(raw, revision) is not None:
                return revision
    raise TransportError(f"{shlex.join(command)} negotiates no revision: server/discover and initialize got no result")


@dataclass
class ReplayResult:
    """Each step of a replay file as sent again: the exchange and its problems (none: it
    conforms now; advice only when the run that wrote the file was strict, or ``strict``)."""

    target: str
    steps: list[tuple[Step, Exchange, list[str]]]

    @property
    def reproduced(self) -> bool:
        """Whether a step still breaks a rule."""
        return any(problems for _, _, problems in self.steps)

    @property
    def failed(self) -> bool:
        """Whether a step still breaks a MUST (a warning or advice reproduced is no failure)."""
        return any(status_of(problems) == FAIL for _, _, problems in self.steps)


async def replay(path: str | Path, *, timeout: float = 10.0, target: str | None = None,
                 strict: bool | None = None) -> ReplayResult:
    """Send the steps of the replay file at ``path`` again, in order, and judge each with the
    oracle and the context the file records. ``target`` replaces the file's (a URL, or a
    command for a stdio file); ``strict`` the file's strictness. A step with no answer within
    ``timeout`` has no problem (it is slow, as in the run)."""
    document = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise UsageError(f"{path} is not an mcpwire fuzz replay file")
    kind = document["target"]["kind"]
    where = target or str(document["target"]["url" if kind != "stdio" else "command"])
    recorded = document.get("context", {})
    caps = recorded.get("capabilities")
    revision = str(recorded.get("revision", VERSION))
    context = Context(stdio=kind == "stdio", loopback=bool(recorded.get("loopback", True)),
                      capabilities=frozenset(caps) if isinstance(caps, list) else None,
                      header_tools=frozenset(recorded.get("headerTools", [])),
                      initialize_era=bool(recorded.get("initializeEra", False)), revision=revision,
                      http_sse=kind == HTTP_SSE)
    shown = bool(document.get("strict", False)) if strict is None else strict
    steps = [decode_step(s) for s in document["steps"]]
    out: list[tuple[Step, Exchange, list[str]]] = []
    if kind == "stdio":
        era = revision != VERSION
        async with stdio_sender(shlex.split(where), timeout=timeout, sentinel=ping_sentinel if era else
                                discover_sentinel) as send:
            if era and await _stdio_initialize(send, revision) is None:
                raise TransportError(f"{where}: initialize naming {revision} was not answered with {revision}")
            for step in steps:
                sent: Exchange = await send(step.request)
                out.append((step, sent, visible(_judge(step, sent[1], sent[2], context), strict=shown)))
        return ReplayResult(where, out)
    if kind == HTTP_SSE:  # a connection of its own, initialized
        async with anyio.create_task_group() as group:
            connection = LegacyConnection(group, where, timeout=timeout)
            try:
                await connection.open()
                return ReplayResult(where, await _replayed_steps(connection.send, steps, context, shown))
            finally:
                connection.close()
    send_http = http_sender(where, 0, timeout)
    if revision != VERSION:  # a session of its own; the steps' session id is replaced by the new one
        session = await open_session(send_http, revision, [], rpc_id="fuzz-init")
        if isinstance(session, str):
            raise TransportError(f"{where}: {session}")
        context = replace(context, session_id=session.session_id)
        steps = [_in_session(step, recorded.get("session"), session.session_id) for step in steps]
    return ReplayResult(where, await _replayed_steps(send_http, steps, context, shown))


async def _replayed_steps(send: Send, steps: list[Step], context: Context,
                          strict: bool) -> list[tuple[Step, Exchange, list[str]]]:
    """Each of ``steps`` sent in order, judged (the liveness check's: still answered)."""
    alive = "server/discover" if context.revision == VERSION else "ping"
    out: list[tuple[Step, Exchange, list[str]]] = []
    for step in steps:
        _, answer, error = sent = await send(step.request)
        if step.label == "alive":
            problems: list[str] = [] if first_result(answer) is not None or timed_out(error) else [
                Problem(f"the target does not answer a well-formed {alive}", rule("jsonrpc.reply"))]
        else:
            problems = visible(_judge(step, answer, error, context), strict=strict)
        out.append((step, sent, problems))
    return out


def _in_session(step: Step, old: Any, new: str | None) -> Step:
    """``step`` with the recorded session id ``old`` replaced by the replay's session's ``new``."""
    if old is None or new is None:
        return step
    headers = tuple((k, new if k.lower() == "mcp-session-id" and v == old else v) for k, v in step.request.headers)
    return replace(step, request=replace(step.request, headers=headers))
