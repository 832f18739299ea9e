"""The ``mcpwire`` command line: serve an App, inspect any MCP server, call a tool.

    mcpwire serve MODULE:APP [--transport http|stdio] [--host 127.0.0.1] [--port 8000] [--oauth-issuer URL ...]
                  [--tasks-db PATH] [--keys FILE] [--redis URL [--redis-prefix PREFIX]]
    mcpwire inspect URL [--json]
    mcpwire inspect --stdio 'COMMAND [ARG]...' [--json]       (or: mcpwire inspect -- COMMAND [ARG]...)
    mcpwire call URL TOOL [JSON] [--log-level LEVEL] [--root URI]... [--no-input] [--task] [--json]
    mcpwire call --stdio 'COMMAND [ARG]...' TOOL [JSON] ...    (or: mcpwire call TOOL [JSON] -- COMMAND [ARG]...)
    mcpwire read URL URI | prompt URL NAME [JSON] | complete URL prompt:NAME ARGUMENT [VALUE] [--json]
    mcpwire listen URL [--tools] [--prompts] [--resources] [--resource URI]... [--count N] [--json]
    mcpwire probe URL [--json FILE] [--junit FILE] [--only PATTERN]... [--rate N] [--call-tools]
    mcpwire probe [OPTIONS] -- COMMAND [ARG]...                (or: mcpwire probe --stdio 'COMMAND [ARG]...')
    mcpwire fuzz URL [--max-examples N] [--time-budget S] [--seed N] [--tool NAME]... [--all-tools] [--rate N]
    mcpwire fuzz [OPTIONS] -- COMMAND [ARG]...                 mcpwire fuzz --replay FILE [URL]
    mcpwire probe --client 'CLIENT ... {url}' [--stdio] [--only NAME]... [--replay FILE]   (probing a client)
    mcpwire fuzz --client 'CLIENT ... {url}' [--stdio] [--only NAME]... [--max-examples N] [--budget S]

``inspect`` and ``call`` speak 2026-07-28 to servers that do, and fall back to an
initialize-era session (2025-11-25 and older) with servers that do not
(:meth:`Session.connect`); ``--stdio`` starts the server as a subprocess.

(also ``python -m mcpwire_adapters.cli``). Results go to stdout; everything else (progress,
log messages, the questions a server asks, errors) goes to stderr, so ``mcpwire call ... >
out.txt`` captures the result alone. Exit codes: 0 success, 1 the tool answered ``isError``,
2 a JSON-RPC error, 3 the server could not be reached or broke the protocol, 4 a bad command
line (URL, JSON, app), 130 interrupted. Strings a server sends are shown with control
characters escaped, so a server cannot drive the terminal. See docs/cli.md.

The client side runs on :class:`mcpwire_adapters.client.http.HttpClient` or
:class:`mcpwire_adapters.client.stdio.StdioClient` (the -32022 version fallback, the era
fallback and the multi round-trip loop are their :class:`Session`'s); ``inspect`` reads results
as plain JSON so a server that leaves out optional fields, or breaks the schema in an
unimportant way, is still shown.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shlex
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from functools import partial
from typing import Any, NoReturn
from urllib.parse import urlsplit, urlunsplit

import h11
import msgspec

import mcpwire
from mcpwire.tasks import TASKS_EXTENSION
from mcpwire import Client, ErrorCode, ListChanged, LocalProtocolError, RemoteProtocolError, ResourceUpdated
from mcpwire.auth import AuthError
from mcpwire.types import Implementation
from mcpwire.types import SERVER_INFO_META_KEY
from mcpwire.sessions import INITIALIZE_ERA

from .terminal import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_RPC_ERROR,
    EXIT_TOOL_ERROR,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    LIST_COLUMNS,
    Answerer,
    CliError,
    Terminal,
    capabilities_text,
    clean,
    os_reason,
    root_uri,
    summary,
    table,
    trio_run,
)
from .deadline import CallDeadline
from .keys import keys
from .fuzz import add_fuzz_parser, run_fuzz
from .probe import add_probe_parser, run_probe
from .serve import load_app, serve
from ..client.http import HttpClient
from ..client.session import InvalidResult, ServerError, Session, TransportError
from ..client.stdio import StdioClient

__all__ = ["CliError", "load_app", "main"]

_REVISIONS = (mcpwire.PROTOCOL_VERSION, *INITIALIZE_ERA)  # what --protocol-version may name


_LISTS = (  # method, result key, heading, the discover capability that offers it
    ("tools/list", "tools", "Tools", "tools"),
    ("resources/list", "resources", "Resources", "resources"),
    ("resources/templates/list", "resourceTemplates", "Resource templates", "resources"),
    ("prompts/list", "prompts", "Prompts", "prompts"),
)
_MAX_PAGES = 100
_CODE_NAMES: dict[int, str] = {
    ErrorCode.PARSE_ERROR: "parse error", ErrorCode.INVALID_REQUEST: "invalid request",
    ErrorCode.METHOD_NOT_FOUND: "method not found", ErrorCode.INVALID_PARAMS: "invalid params",
    ErrorCode.INTERNAL_ERROR: "internal error", ErrorCode.HEADER_MISMATCH: "header mismatch",
    ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY: "missing client capability",
    ErrorCode.UNSUPPORTED_PROTOCOL_VERSION: "unsupported protocol version",
}
# -- talking to a server ------------------------------------------------------------------------------
def _url(text: str) -> str:
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise CliError(f"not an http(s) URL: {text!r} (for example http://127.0.0.1:8000/mcp)", EXIT_USAGE)
    try:
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError as exc:
        raise CliError(f"bad URL {text!r}: {exc}", EXIT_USAGE) from None
    if not parts.path:  # a bare origin: the endpoint path MCP servers use by convention
        parts = parts._replace(path="/mcp")
    return urlunsplit(parts)


def _headers(values: Sequence[str]) -> list[tuple[bytes, bytes]]:
    out = []
    for value in values:
        name, sep, content = value.partition(":")
        if not sep or not name.strip():
            raise CliError(f"--header needs 'Name: value', got {value!r}", EXIT_USAGE)
        out.append((name.strip().encode("latin-1"), content.strip().encode("latin-1")))
    return out


@contextlib.asynccontextmanager
async def _connection(args: argparse.Namespace, term: Terminal, capabilities: Mapping[str, Any] | None = None,
                      ) -> AsyncIterator[HttpClient | StdioClient]:
    """The client for the command line's target, entered; with ``--oauth``, authorized through
    the browser (adapters/cli/oauth.py)."""
    if not args.oauth:
        async with _session(args, capabilities) as session:
            yield session
        return
    if args.stdio:
        raise CliError("--oauth is for HTTP servers, not --stdio", EXIT_USAGE)
    from .oauth import browser_oauth

    oauth, listener = await browser_oauth(args, term)
    try:
        async with _session(args, capabilities, auth=oauth) as session:
            yield session
    finally:
        await listener.aclose()


def _session(args: argparse.Namespace, capabilities: Mapping[str, Any] | None = None, auth: Any = None,
             ) -> HttpClient | StdioClient:
    pinned = {} if args.protocol_version is None else {"protocol_version": args.protocol_version}
    client = Client(Implementation(name="mcpwire-cli", version=mcpwire.__version__), capabilities=capabilities,
                    validator=mcpwire.jsonschema_validator(), **pinned)
    if args.stdio:
        if args.header:
            raise CliError("--header is for HTTP servers, not --stdio", EXIT_USAGE)
    elif args.env or args.cwd:
        raise CliError("--env and --cwd are for a server started with --stdio", EXIT_USAGE)
    if args.stdio:
        try:
            command = shlex.split(args.url)
        except ValueError as exc:
            raise CliError(f"bad command {args.url!r}: {exc}", EXIT_USAGE) from None
        if not command:
            raise CliError("--stdio needs a command that starts the server", EXIT_USAGE)
        # The server's stderr is ours: its diagnostics show where ours do. Its environment is
        # the safe default set plus what --env gives (no secret it was not given).
        return StdioClient(command, client, probe_timeout=min(args.timeout, 10.0), read_timeout=args.timeout,
                           env=_env(args.env), cwd=args.cwd)
    try:
        return HttpClient(_url(args.url), client, read_timeout=args.timeout, connect_timeout=min(args.timeout, 10.0),
                          extra_headers=_headers(args.header), auth=auth)
    except (ValueError, UnicodeError) as exc:
        raise CliError(f"bad URL {args.url!r}: {exc}", EXIT_USAGE) from None


async def list_all(session: Session, method: str, key: str) -> list[dict[str, Any]]:
    """Every item of a list method as plain JSON objects, following ``nextCursor`` (bounded)."""
    items: list[dict[str, Any]] = []
    cursor: str | None = None
    seen: set[str] = set()
    await session.ready()  # a request is built for what the server speaks
    for _ in range(_MAX_PAGES):
        page = await session.send(session.client.request(method, None if cursor is None else {"cursor": cursor}))
        raw = page.data.get(key)
        items.extend(item for item in (raw if isinstance(raw, list) else []) if isinstance(item, dict))
        cursor = page.data.get("nextCursor")
        if not isinstance(cursor, str) or cursor in seen:
            break
        seen.add(cursor)
    return items


def _error_text(error: ServerError) -> str:
    name = _CODE_NAMES.get(error.code)
    text = f"JSON-RPC error {error.code}{f' ({name})' if name else ''}: {clean(error.error.message)}"
    if error.data is not msgspec.UNSET and error.data is not None:
        text += f"\n  data: {clean(json.dumps(error.data, ensure_ascii=False))}"
    return text


# -- inspect ---------------------------------------------------------------------------------------
async def inspect_server(args: argparse.Namespace, term: Terminal) -> int:
    status = EXIT_OK
    report: dict[str, Any] = {}
    async with _connection(args, term) as session:
        try:
            discovered: dict[str, Any] | None = (await session.connect()).data
        except ServerError as exc:
            if exc.code != ErrorCode.METHOD_NOT_FOUND:
                raise
            term.say(f"warning: no server/discover ({_error_text(exc)}); listing anyway")
            discovered, status = None, EXIT_RPC_ERROR
        era = session.client.initialize_era
        report["initialize" if era else "discover"] = discovered
        capabilities = discovered.get("capabilities") if discovered is not None else None
        for method, key, _, capability in _LISTS:
            if isinstance(capabilities, dict) and capability not in capabilities:
                report[key] = None  # not offered
                continue
            try:
                report[key] = await list_all(session, method, key)
            except ServerError as exc:
                report[key] = {"error": {"code": exc.code, "message": exc.error.message}}
                status = EXIT_RPC_ERROR
        version = session.client.protocol_version
        where = args.url if args.stdio else _url(args.url)
        session_id = session.client.session_id
    if args.json:
        term.out(json.dumps({"url" if not args.stdio else "command": where, "protocolVersion": version, **report},
                            indent=2, ensure_ascii=False))
        return status
    _show_server(term, where, version, discovered, era, session_id)
    for method, key, heading, _ in _LISTS:
        term.out()
        value = report[key]
        if value is None:
            term.out(f"{heading}: not offered")
        elif isinstance(value, dict):
            term.out(f"{heading}: {method} failed with error {value['error']['code']}: {clean(value['error']['message'])}")
        elif not value:
            term.out(f"{heading}: none")
        else:
            headers, row = LIST_COLUMNS[key]
            term.out(f"{heading} ({len(value)})")
            for line in table(headers, [row(item) for item in value], term.out_width):
                term.out(line)
    return status


def _show_server(term: Terminal, where: str, version: str, found: dict[str, Any] | None, era: bool,
                 session_id: str | None) -> None:
    """What server/discover (or, initialize era, initialize) said about the server."""
    meta = found.get("_meta") if found is not None else None
    info = meta.get(SERVER_INFO_META_KEY) if isinstance(meta, dict) else None
    if era and found is not None:
        info = found.get("serverInfo")
    if isinstance(info, dict) and info.get("name"):
        title = f" - {clean(info['title'])}" if info.get("title") else ""
        term.out(f"{clean(info['name'])} {clean(info.get('version', ''))}{title}".rstrip())
    else:
        term.out("(the server did not name itself)")
    rows = [("url", where), ("protocol", f"{version} (initialize-era session)" if era else version)]
    if session_id is not None:
        rows.append(("session", clean(session_id)))
    if found is not None:
        supported = found.get("supportedVersions")
        if isinstance(supported, list):
            rows.append(("supports", ", ".join(clean(v) for v in supported)))
        rows.append(("capabilities", capabilities_text(found.get("capabilities"))))
    for label, value in rows:
        term.out(f"  {label:<13} {value}")
    instructions = found.get("instructions") if found is not None else None
    if isinstance(instructions, str) and instructions.strip():
        lines = clean(instructions, keep_newlines=True).strip().splitlines()
        term.out(f"  {'instructions':<13} {lines[0]}")
        for extra in lines[1:]:
            term.out(f"  {'':<13} {extra}")


# -- call -----------------------------------------------------------------------------------------------
def _arguments_json(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(f"the arguments are not valid JSON: {exc}", EXIT_USAGE) from None
    if not isinstance(value, dict):
        raise CliError('the arguments must be a JSON object, for example \'{"text": "hi"}\'', EXIT_USAGE)
    return value


async def call_tool(args: argparse.Namespace, term: Terminal) -> int:
    arguments = _arguments_json(args.arguments)
    # A call may become a task (the tasks extension): followed to its result, its state shown.
    capabilities: dict[str, Any] = {} if args.no_input else {
        "elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}, "extensions": {TASKS_EXTENSION: {}}}
    answerer = Answerer(term, [root_uri(r) for r in args.root])

    def on_log(event: Any) -> None:
        logger = f" {clean(event.logger)}:" if event.logger else ""
        term.say(f"log [{event.level}]{logger} {clean(event.data)}")

    async with _connection(args, term, capabilities) as session:
        session.on_log = on_log  # also what a session's GET stream brings after the call's answer
        try:  # learn the tools' x-mcp-header annotations (the engine mirrors them into headers)
            await list_all(session, "tools/list", "tools")
        except ServerError:
            pass  # no tools/list: call anyway, the server has the last word
        # A 2025-11-25 server runs a call as a task only when the client asks (params.task).
        task: dict[str, Any] | None = {} if args.task and session.protocol_version == "2025-11-25" else None
        with CallDeadline(args.timeout, f"tools/call {clean(args.tool)!r}") as deadline:  # the whole call
            try:
                result = await session.call_tool(
                    args.tool, arguments, on_input=None if args.no_input else deadline.off_the_clock(answerer),
                    on_progress=lambda p: term.progress(p.progress, p.total, p.message),
                    on_log=on_log, log_level=args.log_level, on_task=term.task, task=task,
                )
            except InvalidResult as invalid:  # shown anyway, with what is wrong with it
                term.end_progress()
                term.say(f"warning: {clean(str(invalid))}")
                result = invalid.result
    term.end_progress()
    data = result.data
    if args.json:
        term.out(json.dumps(data, indent=2, ensure_ascii=False))
    elif result.result_type != "complete":
        term.say(f"note: the server answered with resultType {clean(result.result_type)!r}; the raw result:")
        term.out(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        content = data.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "text":
                text = str(block.get("text", ""))
                term.out(clean(text, keep_newlines=True) if term.out_width else text)
            else:
                term.out(summary(block))
        if "structuredContent" in data and not _mirrored(data["structuredContent"], content):
            term.out("structuredContent:")
            term.out(json.dumps(data["structuredContent"], indent=2, ensure_ascii=False))
    if data.get("isError") is True:
        term.say("error: the tool reported an error (isError)")
        return EXIT_TOOL_ERROR
    return EXIT_OK


def _mirrored(structured: Any, content: Any) -> bool:
    """Whether a text block already says ``structured`` as JSON (the specification: a tool that
    returns structured content SHOULD also return it serialized in a text block): shown once."""
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "text":
            try:
                if json.loads(str(block.get("text", ""))) == structured:
                    return True
            except ValueError:
                continue
    return False


# -- read, prompt, complete --------------------------------------------------------------------------------
async def read_resource(args: argparse.Namespace, term: Terminal) -> int:
    async with _connection(args, term) as session:
        result = await session.read_resource(args.uri)
    if args.json:
        term.out(json.dumps(result.data, indent=2, ensure_ascii=False))
        return EXIT_OK
    contents = result.data.get("contents")
    for item in contents if isinstance(contents, list) else []:
        if isinstance(item, dict) and isinstance(item.get("text"), str):
            term.out(clean(item["text"], keep_newlines=True) if term.out_width else item["text"])
        elif isinstance(item, dict):
            blob = item.get("blob")
            size = len(blob) * 3 // 4 if isinstance(blob, str) else 0
            term.out(f"[blob {clean(str(item.get('mimeType') or 'of no type'))}, about {size} bytes]")
    return EXIT_OK


async def get_prompt(args: argparse.Namespace, term: Terminal) -> int:
    arguments = _arguments_json(args.arguments)
    if not all(isinstance(v, str) for v in arguments.values()):
        raise CliError("prompt arguments are strings, for example '{\"topic\": \"sea\"}'", EXIT_USAGE)
    async with _connection(args, term) as session:
        result = await session.get_prompt(args.name, arguments)
    if args.json:
        term.out(json.dumps(result.data, indent=2, ensure_ascii=False))
        return EXIT_OK
    messages = result.data.get("messages")
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            continue
        block = message.get("content")
        shown = block["text"] if isinstance(block, dict) and block.get("type") == "text" else summary(block)
        term.out(f"{clean(str(message.get('role', '?')))}: {clean(str(shown), keep_newlines=True)}")
    return EXIT_OK


async def complete(args: argparse.Namespace, term: Terminal) -> int:
    kind, sep, target = args.ref.partition(":")
    if not sep or kind not in ("prompt", "resource") or not target:
        raise CliError("REF is prompt:NAME or resource:URI_TEMPLATE", EXIT_USAGE)
    ref = {"type": "ref/prompt", "name": target} if kind == "prompt" else {"type": "ref/resource", "uri": target}
    context = _arguments_json(args.context) if args.context is not None else None
    async with _connection(args, term) as session:
        result = await session.complete(ref, args.argument, args.value, context=context)
    if args.json:
        term.out(json.dumps(result.data, indent=2, ensure_ascii=False))
        return EXIT_OK
    completion = result.data.get("completion")
    values = completion.get("values") if isinstance(completion, dict) else None
    for value in values if isinstance(values, list) else []:
        term.out(clean(str(value)))
    return EXIT_OK


async def listen(args: argparse.Namespace, term: Terminal) -> int:
    """Print the server's list changes and resource updates, one line each (or one JSON object
    each with --json), until ``--count`` of them arrived, the server ends the stream, or Ctrl-C."""
    wanted: dict[str, Any] = {f"{kind}ListChanged": True for kind in ("tools", "prompts", "resources")
                              if getattr(args, kind)}
    if args.resource:
        wanted["resourceSubscriptions"] = list(args.resource)
    if not wanted:
        raise CliError("say what to listen for: --tools, --prompts, --resources or --resource URI", EXIT_USAGE)
    seen = 0
    async with _connection(args, term) as session:
        await session.connect()
        async with session.listen(wanted) as sub:
            honoured = msgspec.to_builtins(sub.acknowledged) if sub.acknowledged is not None else {}
            term.say(f"mcpwire: listening for {clean(json.dumps(honoured))} (Ctrl-C to stop)")
            async for event in sub:
                if isinstance(event, ListChanged):
                    line = {"event": "list_changed", "list": event.kind}
                elif isinstance(event, ResourceUpdated):
                    line = {"event": "resource_updated", "uri": event.uri}
                else:
                    continue  # the acknowledgement: said above
                term.out(json.dumps(line) if args.json else " ".join(clean(str(v)) for v in line.values()))
                seen += 1
                if args.count is not None and seen >= args.count:
                    break
    return EXIT_OK


_CLIENT_COMMANDS: dict[str, Callable[[argparse.Namespace, Terminal], Awaitable[int]]] = {
    "inspect": inspect_server, "call": call_tool, "read": read_resource, "prompt": get_prompt, "complete": complete,
    "listen": listen,
}


# -- the command line -----------------------------------------------------------------------------------
class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # exit 4, keeping 2 for JSON-RPC errors
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:  # type: ignore[override]
        # argparse reports an option no parser knew (``mcpwire call URL TOOL --bogus``) from the
        # top-level parser, with the top-level usage; the usage that lists the options the user
        # meant is the subcommand's, so the subcommand that was chosen reports it.
        parsed, unknown = self.parse_known_args(args, namespace)
        if unknown:
            self._chosen(parsed).error(f"unrecognized arguments: {' '.join(unknown)}")
        return parsed

    def _chosen(self, parsed: argparse.Namespace) -> argparse.ArgumentParser:
        """The subcommand's parser that ``parsed`` went through; this parser without one."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                chosen = action.choices.get(getattr(parsed, action.dest, None) or "")
                if isinstance(chosen, argparse.ArgumentParser):
                    return chosen
        return self


def _port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError("a port is 0 to 65535")
    return value


def _seconds(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError("must be positive")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="mcpwire", description="Serve, inspect and call Model Context Protocol "
                     f"servers ({mcpwire.PROTOCOL_VERSION}, and 2025-11-25 and older on sessions).", epilog="Exit codes: 0 ok, 1 tool isError, "
                     "2 JSON-RPC error, 3 unreachable or broken server, 4 bad command line, 130 interrupted.")
    parser.add_argument("--version", action="version", version=f"mcpwire {mcpwire.__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="serve an App over HTTP or stdio")
    serve.add_argument("app", metavar="MODULE:APP", help="an App, or a function returning one (APP defaults to app)")
    serve.add_argument("--transport", choices=("http", "stdio"), default="http")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=_port, default=8000, help="0 picks a free port (default 8000)")
    serve.add_argument("--allowed-host", action="append", dest="allowed_hosts", metavar="HOST",
                       help="HTTP: answer 403 unless the Host header names HOST, on any port (repeatable; "
                            "against DNS rebinding, e.g. --allowed-host 127.0.0.1 --allowed-host localhost); "
                            "default: MCPWIRE_ALLOWED_HOSTS (comma-separated) if set, else no Host check")
    serve.add_argument("--oauth-issuer", metavar="URL",
                       help="protect the server: accept only JWT access tokens from this authorization server")
    serve.add_argument("--oauth-jwks-url", metavar="URL", help="the issuer's key set (its jwks_uri)")
    serve.add_argument("--oauth-resource", metavar="URL",
                       help="the URL clients use, the tokens' audience (default http://HOST:PORT/mcp)")
    serve.add_argument("--oauth-scope", action="append", default=[], metavar="SCOPE",
                       help="a scope every request needs (repeatable)")
    serve.add_argument("--grace-period", type=_seconds, default=10.0, metavar="SECONDS",
                       help="time requests in flight get to finish when stopping (default 10)")
    serve.add_argument("--keys", metavar="FILE",
                       help="the key file every process of this server shares (`mcpwire keys new FILE`; "
                            "default: MCPWIRE_KEYS if set, else a random key of this process)")
    serve.add_argument("--workers", type=int, metavar="N",
                       help="HTTP: serve with N processes on one port (SO_REUSEPORT), sharing the keyring")
    serve.add_argument("--tasks-db", metavar="PATH",
                       help="an App with tasks: the SQLite file that keeps them across restarts (default "
                            "./mcpwire-tasks.db; :memory: keeps them in memory)")
    serve.add_argument("--redis", metavar="URL",
                       help="share notifications and tasks with the other processes of this server through "
                            "Redis (redis://HOST:PORT/DB; needs mcpwire[redis]); default: MCPWIRE_REDIS if set")
    serve.add_argument("--redis-prefix", metavar="PREFIX",
                       help="with --redis: the start of every key and channel, one per service sharing a Redis "
                            "(default: MCPWIRE_REDIS_PREFIX if set, else mcpwire:NAME: with the server's name)")

    keys_command = commands.add_parser("keys", help="make and rotate the key file a server's processes share")
    keys_command.add_argument("action", choices=("new", "add", "current", "drop", "show"))
    keys_command.add_argument("file", metavar="FILE")
    keys_command.add_argument("id", nargs="?", metavar="ID", help="the key id (add, current, drop; new: default k1)")
    keys_command.add_argument("--current", action="store_true", help="add: make the new key current at once")

    def client_options(command: argparse.ArgumentParser) -> None:
        command.add_argument("url", metavar="URL", help="the MCP endpoint, e.g. http://127.0.0.1:8000/mcp "
                             "(with --stdio: the command that starts the server)")
        command.add_argument("--stdio", action="store_true",
                             help="URL is a command (split as a shell would) starting a server that speaks stdio; "
                                  "or give the command after --")
        command.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                             help="--stdio: a variable for the server (repeatable); it gets only PATH, HOME and "
                                  "the like otherwise")
        command.add_argument("--cwd", metavar="DIR", help="--stdio: the server's working directory")
        command.add_argument("--oauth", action="store_true",
                             help="authorize through the browser when the server asks (OAuth; docs/auth.md)")
        command.add_argument("--token-store", metavar="PATH",
                             help="--oauth: where tokens are kept (default ~/.mcpwire/tokens.json, mode 0600)")
        command.add_argument("--oauth-scope", action="append", default=[], metavar="SCOPE",
                             help="--oauth: a scope to ask for (repeatable; default: what the server names)")
        command.add_argument("-H", "--header", action="append", default=[], metavar="'NAME: VALUE'",
                             help="an extra HTTP header (repeatable), e.g. 'Authorization: Bearer ...'")
        command.add_argument("--timeout", type=_seconds, default=60.0, metavar="SECONDS",
                             help="longest wait for the server (default 60): for each answer and, with call, for "
                                  "the whole tool call (time spent answering its questions aside)")
        command.add_argument("--json", action="store_true", help="print the raw JSON results")
        command.add_argument("--protocol-version", choices=_REVISIONS, metavar="VERSION",
                             help="speak this revision (default: the newest the server speaks; "
                                  f"one of {', '.join(_REVISIONS)})")

    inspect = commands.add_parser("inspect", help="show what a server offers")
    client_options(inspect)

    read = commands.add_parser("read", help="read a resource")
    client_options(read)
    read.add_argument("uri", metavar="URI")

    prompt = commands.add_parser("prompt", help="get a prompt")
    client_options(prompt)
    prompt.add_argument("name", metavar="NAME")
    prompt.add_argument("arguments", metavar="JSON", nargs="?", default="{}",
                        help="the arguments object, string values (default {})")

    complete = commands.add_parser("complete", help="complete an argument of a prompt or a resource template")
    client_options(complete)
    complete.add_argument("ref", metavar="REF", help="prompt:NAME or resource:URI_TEMPLATE")
    complete.add_argument("argument", metavar="ARGUMENT")
    complete.add_argument("value", metavar="VALUE", nargs="?", default="", help="what is typed so far (default empty)")
    complete.add_argument("--context", metavar="JSON", help="the arguments already chosen, as a JSON object")

    listening = commands.add_parser("listen", help="print list changes and resource updates as they come")
    client_options(listening)
    for kind in ("tools", "prompts", "resources"):
        listening.add_argument(f"--{kind}", action="store_true", help=f"the {kind} list changed")
    listening.add_argument("--resource", action="append", default=[], metavar="URI", help="updates of this resource")
    listening.add_argument("--count", type=int, metavar="N", help="stop after N events")

    call = commands.add_parser("call", help="call a tool")
    client_options(call)
    call.add_argument("tool", metavar="TOOL")
    call.add_argument("arguments", metavar="JSON", nargs="?", default="{}", help="the arguments object (default {})")
    call.add_argument("--log-level", choices=mcpwire.LOG_LEVELS, help="ask for log messages at this level and above")
    call.add_argument("--task", action="store_true",
                      help="ask a 2025-11-25 server to run the call as a task, and follow it (on 2026-07-28 the "
                           "tasks extension is always declared: the server decides)")
    call.add_argument("--root", action="append", default=[], metavar="URI",
                      help="answer roots requests with this URI or path (repeatable) instead of asking")
    call.add_argument("--no-input", action="store_true",
                      help="declare no client capabilities: a server that needs input fails the call")
    add_probe_parser(commands)
    add_fuzz_parser(commands)
    return parser


def _transport_text(exc: TransportError, url: str) -> str:
    if str(exc).startswith("cannot connect to "):
        return f"cannot connect to {url}: {os_reason(exc)}"
    return str(exc)


def _protocol_text(exc: RemoteProtocolError | h11.RemoteProtocolError) -> str:
    text = f"unexpected answer from the server: {clean(str(exc))}"
    data = getattr(exc, "data", None)
    if isinstance(data, dict) and data.get("status") in (404, 405):
        text += " (is the URL the server's MCP endpoint?)"
    elif isinstance(data, dict) and data.get("status") in (401, 403):
        text += " (the server requires authorization: try --oauth)"
    return text


def _stdio_after_dashes(argv: Sequence[str]) -> list[str]:
    """``inspect ... -- COMMAND ARGS`` and ``call TOOL [JSON] ... -- COMMAND ARGS``: the words
    after ``--`` are the server command, given to the parser as ``--stdio 'COMMAND ARGS'``."""
    argv = list(argv)
    if "--" not in argv:
        return argv
    cut = argv.index("--")
    head, command = argv[:cut], argv[cut + 1:]
    verb = next((i for i, word in enumerate(head) if word in _CLIENT_COMMANDS or word in ("probe", "fuzz")), None)
    if verb is None or not command:
        return argv
    return [*head[:verb + 1], "--stdio", shlex.join(command), *head[verb + 1:]]


def _env(values: Sequence[str]) -> dict[str, str]:
    out = {}
    for value in values:
        name, sep, content = value.partition("=")
        if not sep or not name:
            raise CliError(f"--env needs NAME=VALUE, got {value!r}", EXIT_USAGE)
        out[name] = content
    return out


def run(argv: Sequence[str] | None, term: Terminal) -> int:
    args = build_parser().parse_args(_stdio_after_dashes(sys.argv[1:] if argv is None else argv))
    try:
        if args.command == "serve":
            return serve(args, term)
        if args.command == "keys":
            return keys(args, term)
        if args.command == "probe":
            return run_probe(args, term)
        if args.command == "fuzz":
            return run_fuzz(args, term)
        return trio_run(partial(_CLIENT_COMMANDS[args.command], args, term))
    except CliError as exc:
        term.say(f"error: {exc}")
        return exc.exit_code
    except ServerError as exc:
        term.say(f"error: {_error_text(exc)}")
        return EXIT_RPC_ERROR
    except TransportError as exc:
        term.say(f"error: {_transport_text(exc, args.url)}")
        return EXIT_UNREACHABLE
    except (RemoteProtocolError, h11.RemoteProtocolError) as exc:
        term.say(f"error: {_protocol_text(exc)}")
        return EXIT_UNREACHABLE
    except AuthError as exc:  # --oauth: the authorization was refused (exc.reason names the rule)
        term.say(f"error: authorization failed ({exc.reason}): {clean(str(exc))}")
        return EXIT_UNREACHABLE
    except LocalProtocolError as exc:  # e.g. no common protocol version
        term.say(f"error: {clean(exc)}")
        return EXIT_UNREACHABLE
    except KeyboardInterrupt:
        term.say("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # stdout closed early (| head): nothing more to say
        return EXIT_OK
    except OSError as exc:  # --stdio: the command could not be started
        term.say(f"error: cannot start {args.url!r}: {exc.strerror or exc}")
        return EXIT_UNREACHABLE
    finally:
        term.end_progress()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mcpwire`` command; returns the exit code."""
    return run(argv, Terminal(sys.stdin, sys.stdout, sys.stderr))

