"""Tests of the ``mcpwire`` command line (``mcpwire_adapters.cli.commands``).

``inspect`` and ``call`` run as real subprocesses against the conformance fixture over HTTP
(started once for the module), and against a small foreign server written with the standard
library (missing optional fields, a -32022 version fallback). ``serve`` runs a test app module
over HTTP (stopped by SIGINT) and over stdio. The terminal pieces (progress line, form
answers) are also tested in-process. Every wait has a timeout.
"""

from __future__ import annotations

import io
import json
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from _lines import LineQueue, fixture_served, serving
from _stdlib_http import serving_http
import trio

import mcpwire
from mcpwire.types import (
    CreateMessageRequest,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequest,
    ElicitRequestURLParams,
    ElicitResult,
    SamplingMessage,
    TextContent,
)
from mcpwire_adapters.cli.terminal import Answerer, Terminal, table
from mcpwire_adapters.cli.commands import CliError
from mcpwire_adapters.client.http import HttpClient

REPO = Path(__file__).resolve().parents[3]
TIMEOUT = 20.0
CLI = [sys.executable, "-m", "mcpwire_adapters.cli"]


def run_cli(*args: str, stdin: str = "", cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], input=stdin, capture_output=True, text=True, timeout=TIMEOUT, cwd=cwd)


def expected_failure(done: subprocess.CompletedProcess[str], code: int) -> str:
    assert done.returncode == code, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("error: ") or "\nerror: " in done.stderr, done.stderr
    return done.stderr


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with fixture_served() as served:
        yield served


# -- inspect ---------------------------------------------------------------------------------------
def test_inspect_shows_server_tools_resources_templates_prompts(url: str) -> None:
    done = run_cli("inspect", url)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("mcpwire-conformance 0.1.0\n")
    assert f"  url           {url}\n" in out
    assert "  supports      2026-07-28\n" in out
    assert ("  capabilities  tools (listChanged), resources (subscribe), prompts (listChanged), completions, logging,"
            " extensions (io.modelcontextprotocol/tasks)\n") in out
    for heading in ("Tools (", "Resources (2)", "Resource templates (1)", "Prompts (5)"):
        assert f"\n{heading}" in out
    assert re.search(r"\n  custom_header_region +region +Echoes its region argument", out)
    assert re.search(r"\n  test_simple_text +Returns one text content block\n", out)
    assert re.search(r"\n  test://static-text +static_text +text/plain +A static text resource", out)
    assert re.search(r"\n  test://template/\{id\}/data +template_data +text/plain", out)
    assert re.search(r"\n  test_prompt_with_arguments +arg1 arg2 +A prompt with two required arguments", out)
    # Aligned: every row's description starts under the DESCRIPTION heading.
    tools = out.split("\nTools (")[1].split("\n\n")[0].splitlines()[1:]
    column = tools[0].index("DESCRIPTION")
    assert all(row[column - 2:column] == "  " and row[column] != " " for row in tools[1:])


def test_inspect_json(url: str) -> None:
    done = run_cli("inspect", url, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["discover"]["supportedVersions"] == ["2026-07-28"]
    assert "test_tool_with_progress" in {tool["name"] for tool in report["tools"]}
    assert [t["uriTemplate"] for t in report["resourceTemplates"]] == ["test://template/{id}/data"]


# -- call ------------------------------------------------------------------------------------------
def test_call_prints_text(url: str) -> None:
    done = run_cli("call", url, "test_simple_text")
    assert (done.returncode, done.stdout) == (0, "This is a simple text response for testing.\n"), done.stderr


def test_call_with_arguments(url: str) -> None:
    done = run_cli("call", url, "custom_header_region", '{"region": "eu-west"}')
    assert done.returncode == 0, done.stderr
    assert "eu-west" in done.stdout


def test_call_shows_progress_as_lines_when_not_a_tty(url: str) -> None:
    done = run_cli("call", url, "test_tool_with_progress")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Progress computation completed: 5050\n"
    assert done.stderr.splitlines() == [
        "progress 0/100 (0%) Starting computation",
        "progress 50/100 (50%) First half complete",
        "progress 100/100 (100%) Computation complete",
    ]


def test_call_follows_a_task_showing_each_state_and_prints_its_result(url: str) -> None:
    done = run_cli("call", url, "slow_compute", '{"seconds": 0.3, "label": "cli"}')
    assert (done.returncode, done.stdout) == (0, "Computed cli in 0.3 s\n"), done.stderr
    states = [line.split(": ", 1)[1] for line in done.stderr.splitlines() if line.startswith("task ")]
    assert states[0] == "working Computing cli" and states[-1] == "completed", done.stderr
    assert len(states) == len(set(states))  # each state once, however often it was polled


def test_call_task_asks_a_2025_11_25_session_for_a_task_and_follows_it(url: str) -> None:
    done = run_cli("call", url, "slow_compute", '{"seconds": 0.3, "label": "old"}', "--protocol-version",
                   "2025-11-25", "--task")
    assert (done.returncode, done.stdout) == (0, "Computed old in 0.3 s\n"), done.stderr
    states = [line.split(": ", 1)[1] for line in done.stderr.splitlines() if line.startswith("task ")]
    assert states[0].startswith("working") and states[-1] == "completed", done.stderr
    # The same call without --task is an ordinary one on that session: no task is followed.
    plain = run_cli("call", url, "slow_compute", '{"seconds": 0.1, "label": "old"}', "--protocol-version", "2025-11-25")
    assert plain.returncode == 0 and not [line for line in plain.stderr.splitlines() if line.startswith("task ")]


def test_call_answers_a_tasks_input_request_from_stdin(url: str) -> None:
    done = run_cli("call", url, "confirm_delete", stdin="a\ny\n")
    assert (done.returncode, done.stdout) == (0, "Deleted\n"), done.stderr
    assert "input_required" in done.stderr and "Delete the file?" in done.stderr


def test_a_failed_task_fails_the_call_with_its_error(url: str) -> None:
    done = run_cli("call", url, "protocol_error_job")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "-32603" in done.stderr and "Internal error" in done.stderr


def test_call_answers_elicitation_from_stdin(url: str) -> None:
    done = run_cli("call", url, "test_input_required_result_elicitation", stdin="a\nAda\n")
    assert (done.returncode, done.stdout) == (0, "Hello, Ada!\n"), done.stderr
    assert "? The server asks (user_name): What is your name?" in done.stderr
    assert "name (string, required): Ada" in done.stderr


def test_call_elicitation_decline_and_end_of_input(url: str) -> None:
    done = run_cli("call", url, "test_input_required_result_elicitation", stdin="d\n")
    assert (done.returncode, done.stdout) == (0, "No name given: the user chose decline.\n"), done.stderr
    done = run_cli("call", url, "test_input_required_result_elicitation", stdin="")
    assert (done.returncode, done.stdout) == (0, "No name given: the user chose cancel.\n"), done.stderr
    assert "(end of input)" in done.stderr


def test_call_answers_sampling_elicitation_and_roots(url: str) -> None:
    done = run_cli("call", url, "test_input_required_result_multiple_inputs", "--root", "file:///srv/data",
                   stdin="a\nBob\nHi there\n")
    assert (done.returncode, done.stdout) == (0, "Bob: Hi there (roots: file:///srv/data)\n"), done.stderr
    assert "  user: Generate a greeting" in done.stderr


def test_call_asks_for_roots(url: str) -> None:
    done = run_cli("call", url, "test_input_required_result_list_roots", stdin="file:///a\nfile:///b\n\n")
    assert (done.returncode, done.stdout) == (0, "Client roots (2): file:///a, file:///b\n"), done.stderr


def test_call_log_messages(url: str) -> None:
    done = run_cli("call", url, "test_logging_tool", "--log-level", "error")
    assert done.returncode == 0, done.stderr
    assert "log [error] conformance: error message" in done.stderr
    assert "log [emergency] conformance: emergency message" in done.stderr
    assert "warning message" not in done.stderr


def test_call_summarises_non_text_content(url: str) -> None:
    done = run_cli("call", url, "test_multiple_content_types")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "Multiple content types test:",
        "[image image/png, about 69 bytes]",
        "[embedded resource test://mixed-content-resource (application/json, 27 characters of text)]",
    ]


def test_call_tool_error_exits_1(url: str) -> None:
    done = run_cli("call", url, "test_error_handling")
    assert done.returncode == 1
    assert done.stdout == "This tool intentionally returns an error for testing\n"
    assert "isError" in done.stderr


def test_json_rpc_error_exits_2(url: str) -> None:
    stderr = expected_failure(run_cli("call", url, "no_such_tool"), 2)
    assert "JSON-RPC error -32602 (invalid params): Unknown tool: no_such_tool" in stderr
    stderr = expected_failure(run_cli("call", url, "test_missing_capability", "--no-input"), 2)
    assert "-32021" in stderr and '"sampling"' in stderr


def test_bad_command_lines_and_unreachable_servers(url: str) -> None:
    assert "not valid JSON" in expected_failure(run_cli("call", url, "x", "{nope"), 4)
    assert "JSON object" in expected_failure(run_cli("call", url, "x", "[1, 2]"), 4)
    assert "not an http(s) URL" in expected_failure(run_cli("inspect", "ftp://example.com/"), 4)
    with socket.socket() as probe:  # a port nobody listens on: bound, never listening, so refused
        probe.bind(("127.0.0.1", 0))  # and held, so no other process can take it meanwhile
        port = probe.getsockname()[1]
        stderr = expected_failure(run_cli("inspect", f"http://127.0.0.1:{port}/mcp"), 3)
    assert f"cannot connect to http://127.0.0.1:{port}/mcp: Connection refused" in stderr
    assert run_cli("frobnicate").returncode == 4
    for args, complaint in ((("serve", "x:app", "--port", "65536"), "mcpwire serve: error: argument --port: a port is 0 to 65535"),
                            (("inspect", url, "--timeout", "0"), "mcpwire inspect: error: argument --timeout: must be positive")):
        done = run_cli(*args)  # refused by the argument parser, before any import or connection
        assert done.returncode == 4 and done.stderr.rstrip().endswith(complaint), done.stderr


# -- a foreign server: missing optional fields, -32022 ------------------------------------------------
class ForeignHandler(BaseHTTPRequestHandler):
    """A minimal 2026-07-28 server that answers the first request -32022 and omits every
    optional field (no serverInfo, no ttlMs/cacheScope, bare tools and resources)."""

    calls: list[str] = []
    authorizations: list[str | None] = []

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        method = message["method"]
        self.calls.append(method)
        self.authorizations.append(self.headers.get("Authorization"))
        status, body = 200, {"jsonrpc": "2.0", "id": message["id"]}
        if len(self.calls) == 1:
            status = 400
            body["error"] = {"code": -32022, "message": "Unsupported protocol version",
                             "data": {"supported": ["2026-07-28"], "requested": "?"}}
        elif method == "server/discover":
            body["result"] = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}}
        elif method == "tools/list":
            body["result"] = {"tools": [{"name": "bare", "inputSchema": {"type": "object"}},
                                        {"name": "schemaless"},
                                        {"name": "claims", "inputSchema": {"type": "object"},
                                         "outputSchema": {"type": "object", "properties": {"n": {"type": "string"}}}}]}
        elif method == "tools/call":
            text = '{"n": 1}' if message["params"]["name"] == "mirror" else "ok"  # mirror: the text says it too
            body["result"] = {"content": [{"type": "text", "text": text}], "structuredContent": {"n": 1}}
        else:
            status, body["error"] = 404, {"code": -32601, "message": "Method not found"}
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def foreign() -> Iterator[str]:
    ForeignHandler.calls = []
    ForeignHandler.authorizations = []
    with serving_http(ForeignHandler) as url:
        yield url


def test_inspect_tolerates_a_sparse_foreign_server(foreign: str) -> None:
    done = run_cli("inspect", foreign)
    assert done.returncode == 0, done.stderr
    assert ForeignHandler.calls[:2] == ["server/discover", "server/discover"]  # -32022, then the retry
    out = done.stdout
    assert out.startswith("(the server did not name itself)\n")
    assert "  capabilities  tools\n" in out
    assert re.search(r"\n  bare\s*\n", out) and re.search(r"\n  schemaless\s*\n", out)
    assert "Resources: not offered" in out and "Prompts: not offered" in out


def test_extra_headers_go_with_every_request(foreign: str) -> None:
    done = run_cli("call", foreign, "bare", "-H", "Authorization: Bearer t0k")
    assert done.returncode == 0, done.stderr
    # tools/list (to learn x-mcp-header annotations) refused -32022 and retried, then the call
    assert ForeignHandler.calls == ["tools/list", "tools/list", "tools/call"]
    assert ForeignHandler.authorizations == ["Bearer t0k"] * len(ForeignHandler.calls)
    assert "--header needs 'Name: value'" in expected_failure(run_cli("call", foreign, "bare", "-H", "no colon"), 4)


def test_call_prints_structured_content_from_a_foreign_server(foreign: str) -> None:
    done = run_cli("call", foreign.removesuffix("/mcp").rstrip("/"), "bare")  # a bare origin means /mcp
    assert done.returncode == 0, done.stderr
    assert done.stdout == 'ok\nstructuredContent:\n{\n  "n": 1\n}\n'
    claims = run_cli("call", foreign, "claims")  # its structuredContent breaks its outputSchema
    assert claims.returncode == 0 and claims.stdout.startswith("ok\n"), claims.stderr
    assert "warning: structuredContent of tool 'claims' does not match its outputSchema" in claims.stderr
    mirrored = run_cli("call", foreign, "mirror")
    assert mirrored.returncode == 0 and mirrored.stdout == '{"n": 1}\n', mirrored.stderr  # shown once


# -- serve -----------------------------------------------------------------------------------------
APP_SOURCE = '''
from mcpwire_adapters import App

app = App("cli-test-app", "2.0")
print("cli_test_app imported")  # over stdio this must not reach stdout


@app.tool(description="Echo the text back")
async def echo(ctx, arguments):
    print("echoing")
    return str(arguments.get("text", ""))


def make_app():
    return app


def make_number():
    return 42
'''


@pytest.fixture
def app_dir(tmp_path: Path) -> Path:
    (tmp_path / "cli_test_app.py").write_text(APP_SOURCE)
    return tmp_path


def test_serve_http_answers_and_stops_on_sigint(app_dir: Path) -> None:
    process = subprocess.Popen([*CLI, "serve", "cli_test_app:app", "--port", "0"], cwd=app_dir,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    try:
        lines = LineQueue(process.stderr)
        url = lines.wait_for(r"serving cli-test-app 2\.0 at (http://127\.0\.0\.1:\d+/mcp)").group(1)

        async def discover_and_call() -> tuple[dict[str, Any], str]:
            with trio.fail_after(TIMEOUT):
                async with HttpClient(url) as client:
                    found = await client.discover()
                    result = await client.call_tool("echo", {"text": "hello"})
                    return found.data, result.data["content"][0]["text"]

        found, echoed = trio.run(discover_and_call)
        assert found["_meta"]["io.modelcontextprotocol/serverInfo"] == {"name": "cli-test-app", "version": "2.0"}
        assert echoed == "hello"
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=TIMEOUT) == 0
        lines.wait_for(r"mcpwire: stopped")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_serve_stdio_with_a_file_and_a_factory(app_dir: Path) -> None:
    client = mcpwire.Client(mcpwire.types.Implementation(name="test", version="1"))
    requests = client.discover().line + client.call_tool("echo", {"text": "over stdio"}).line
    done = subprocess.run([*CLI, "serve", str(app_dir / "cli_test_app.py") + ":make_app", "--transport", "stdio"],
                          input=requests, capture_output=True, timeout=TIMEOUT, cwd=REPO)
    assert done.returncode == 0, done.stderr
    answers = {m["id"]: m["result"] for m in map(json.loads, done.stdout.splitlines())}  # JSON lines only
    assert answers[1]["supportedVersions"] == ["2026-07-28"]
    assert answers[2]["content"] == [{"type": "text", "text": "over stdio"}]
    assert b"serving cli-test-app 2.0 on stdio" in done.stderr
    assert b"cli_test_app imported\n" in done.stderr and b"echoing\n" in done.stderr


def test_serve_refuses_what_is_not_an_app(app_dir: Path) -> None:
    assert "cannot import 'no_such_module'" in expected_failure(
        run_cli("serve", "no_such_module:app", cwd=app_dir), 4)
    assert "has no attribute 'nope'" in expected_failure(run_cli("serve", "cli_test_app:nope", cwd=app_dir), 4)
    assert "neither an App nor callable without arguments" in expected_failure(
        run_cli("serve", "cli_test_app:echo", cwd=app_dir), 4)
    assert "returned int, not a mcpwire_adapters.App" in expected_failure(
        run_cli("serve", "cli_test_app:make_number", cwd=app_dir), 4)
    assert "expected MODULE:APP, got ':app'" in expected_failure(run_cli("serve", ":app", cwd=app_dir), 4)
    assert "no such file: missing/app.py" in expected_failure(run_cli("serve", "missing/app.py:app", cwd=app_dir), 4)


# -- the terminal, in-process --------------------------------------------------------------------------
class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_one_updating_line_on_a_tty() -> None:
    err = FakeTty()
    term = Terminal(io.StringIO(), io.StringIO(), err)
    term.progress(50, 100, "half")
    term.progress(100, 100, None)
    term.progress(7, None, "no total\x1b[31m")
    term.say("done")
    assert err.getvalue() == (
        "\r[############............]  50% half"
        "\r[########################] 100%     "
        "\r[        working         ] 7 no total\\x1b[31m"
        "\ndone\n"
    )


def test_form_fields_are_typed_and_checked() -> None:
    answers = "4\ngreen\n" "x\n2.5\n12\n0\n7\n" "1,3\n" "maybe\nno\n" "\n" "\n" "2.5\n" "a\nabcde\nabc\n"
    errors = io.StringIO()
    ask = Answerer(Terminal(io.StringIO(answers), io.StringIO(), errors), [])
    colours = {"type": "string", "enum": ["red", "green", "blue"]}
    assert ask.field("colour", colours, True) == "green"
    assert ask.field("n", {"type": "integer", "minimum": 1, "maximum": 10}, True) == 7
    assert ask.field("many", {"type": "array", "items": {"enum": ["red", "green", "blue"]}}, True) == ["red", "blue"]
    assert ask.field("ok", {"type": "boolean"}, True) is False
    assert ask.field("s", {"type": "string", "default": "dflt"}, False) == "dflt"
    assert ask.field("t", {"type": "string"}, False) is None
    assert ask.field("x", {"type": "number"}, True) == 2.5
    assert ask.field("code", {"type": "string", "minLength": 2, "maxLength": 4}, True) == "abc"
    said = errors.getvalue()
    for complaint in ("'4' is not one of the choices", "an integer is needed", "the maximum is 10", "the minimum is 1",
                      "answer y or n", "at least 2 characters", "at most 4 characters"):
        assert complaint in said


def test_url_elicitation_asks_for_consent_and_sampling_needs_a_reply() -> None:
    errors = io.StringIO()
    ask = Answerer(Terminal(io.StringIO("d\n"), io.StringIO(), errors), [])
    visit = ElicitRequest(params=ElicitRequestURLParams(message="Sign in", url="https://example.com/login"))
    assert ask({"login": visit}) == {"login": ElicitResult(action="decline")}
    assert "https://example.com/login" in errors.getvalue()

    question = CreateMessageRequest(params=CreateMessageRequestParams(
        messages=[SamplingMessage(role="user", content=TextContent(text="Capital of France?"))], max_tokens=10))
    ask = Answerer(Terminal(io.StringIO("Paris\n"), io.StringIO(), io.StringIO()), [])
    reply = ask({"q": question})["q"]
    assert isinstance(reply, CreateMessageResult) and reply.role == "assistant"
    assert reply.content == TextContent(text="Paris")
    ask = Answerer(Terminal(io.StringIO(""), io.StringIO(), io.StringIO()), [])
    with pytest.raises(CliError) as raised:
        ask({"q": question})
    assert raised.value.exit_code == 130


def test_table_keeps_names_whole_and_cuts_to_the_width() -> None:
    rows = [["a_rather_long_tool_name", "x", "a description that is far too long for the terminal"]]
    lines = table(("NAME", "ARGUMENTS", "DESCRIPTION"), rows, width=50)
    assert lines == ["  NAME                     ARGUMENTS  DESCRIPTION",
                     "  a_rather_long_tool_name  x          a descri..."]  # 49: no wrap at 50


# -- initialize-era servers, over HTTP and stdio --------------------------------------------------------
STDIO_APP = f"{sys.executable} {REPO / 'tests' / 'stdio_app.py'} --versions 2025-11-25,2025-06-18"


@pytest.fixture(scope="module")
def era_url() -> Iterator[str]:
    """The stdio test app's tools served over HTTP, initialize era only."""
    script = (
        "import sys, trio\n"
        f"sys.path.insert(0, {str(REPO / 'tests')!r})\n"
        "from stdio_app import build_app\n"
        "from mcpwire_adapters.serve.trio_h11.server import serve_http\n"
        "async def main():\n"
        "    async with trio.open_nursery() as n:\n"
        "        host, port = await n.start(serve_http, build_app('era-http', ('2025-06-18',)))\n"
        "        print(f'http://{host}:{port}/mcp', flush=True)\n"
        "        await trio.to_thread.run_sync(sys.stdin.read)\n"
        "        n.cancel_scope.cancel()\n"
        "trio.run(main)\n"
    )
    with serving([sys.executable, "-c", script], r"^http://\S+$") as ready:
        yield ready.group(0)


def test_inspect_and_call_an_initialize_era_server_over_http(era_url: str) -> None:
    done = run_cli("inspect", era_url)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("era-http 1.0\n")
    assert "  protocol      2025-06-18 (initialize-era session)\n" in done.stdout
    assert re.search(r"\n  session       \S+\n", done.stdout) and "\nTools (8)" in done.stdout
    report = json.loads(run_cli("inspect", era_url, "--json").stdout)
    assert report["initialize"]["serverInfo"]["name"] == "era-http" and "discover" not in report
    done = run_cli("call", era_url, "greet", stdin="a\nAda\n")
    assert done.returncode == 0 and done.stdout == "Hello, Ada\n", done.stderr
    assert "The server asks (1): Name?" in done.stderr


def test_inspect_and_call_over_stdio_either_generation() -> None:
    done = run_cli("inspect", "--stdio", STDIO_APP)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("stdio-test 1.0\n")
    assert "  protocol      2025-11-25 (initialize-era session)\n" in done.stdout
    modern = run_cli("inspect", "--stdio", f"{sys.executable} {REPO / 'tests' / 'stdio_app.py'}")
    assert modern.returncode == 0 and "  protocol      2026-07-28\n" in modern.stdout, modern.stderr
    done = run_cli("call", "--stdio", STDIO_APP, "greet", stdin="a\nBo\n")
    assert done.returncode == 0 and done.stdout == "Hello, Bo\n", done.stderr
    done = run_cli("call", "--stdio", STDIO_APP, "progress")
    assert done.returncode == 0 and done.stdout == "done\n" and "3/3" in done.stderr, done.stderr


def test_stdio_command_lines_that_cannot_work() -> None:
    assert "--header is for HTTP" in expected_failure(run_cli("inspect", "--stdio", "x", "-H", "A: b"), 4)
    assert "needs a command" in expected_failure(run_cli("inspect", "--stdio", "  "), 4)
    assert "bad command" in expected_failure(run_cli("inspect", "--stdio", "'unclosed"), 4)
    stderr = expected_failure(run_cli("inspect", "--stdio", "/nonexistent/server"), 3)
    assert "cannot start '/nonexistent/server': No such file or directory" in stderr


ENV_SERVER = (
    "import json, os, sys\n"
    "for line in sys.stdin:\n"
    "    m = json.loads(line)\n"
    "    if m.get('method') == 'initialize':\n"
    "        r = {'protocolVersion': '2025-06-18', 'capabilities': {'tools': {}}, 'serverInfo': {'name': 'env', 'version': '1'}}\n"
    "    elif m.get('method') == 'tools/list':\n"
    "        r = {'tools': [{'name': 'env', 'inputSchema': {'type': 'object'}}]}\n"
    "    elif m.get('method') == 'tools/call':\n"
    "        seen = {k: os.environ.get(k) for k in ('MCPWIRE_TEST_SECRET', 'GREETING')}\n"
    "        r = {'content': [{'type': 'text', 'text': json.dumps([seen, os.getcwd()])}]}\n"
    "    elif 'id' in m:  # server/discover, say: a 2025 server's -32601, so no wait for the probe\n"
    "        print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'error': {'code': -32601, 'message': 'no'}}), flush=True)\n"
    "        continue\n"
    "    else:\n"
    "        continue\n"
    "    print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': r}), flush=True)\n"
)


def test_stdio_after_dashes_with_env_and_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPWIRE_TEST_SECRET", "do not leak")
    script = tmp_path / "env_server.py"
    script.write_text(ENV_SERVER)
    done = run_cli("call", "env", "--env", "GREETING=hi", "--cwd", str(tmp_path), "--", sys.executable, str(script))
    assert done.returncode == 0, done.stderr
    seen, cwd = json.loads(done.stdout)
    assert seen == {"MCPWIRE_TEST_SECRET": None, "GREETING": "hi"}  # only the safe set, plus --env
    assert Path(cwd) == tmp_path
    inspected = run_cli("inspect", "--", sys.executable, str(script))
    assert inspected.returncode == 0 and "  protocol      2025-06-18 (initialize-era session)\n" in inspected.stdout
    assert "--env needs NAME=VALUE" in expected_failure(run_cli("inspect", "--env", "x", "--", sys.executable, str(script)), 4)
    assert "are for a server started with --stdio" in expected_failure(run_cli("inspect", "http://127.0.0.1:1/mcp", "--cwd", "."), 4)


# -- read, prompt, complete --------------------------------------------------------------------------


def test_read_prompt_and_complete(url: str) -> None:
    done = run_cli("read", url, "test://static-text")
    assert done.returncode == 0 and done.stdout == "This is a static text resource for testing.\n", done.stdout
    raw = json.loads(run_cli("read", url, "test://static-text", "--json").stdout)
    assert raw["contents"][0]["uri"] == "test://static-text"
    done = run_cli("prompt", url, "test_prompt_with_arguments", '{"arg1": "a", "arg2": "b"}')
    assert done.returncode == 0 and done.stdout == "user: Prompt with arguments: arg1='a', arg2='b'\n", done.stdout
    assert "strings" in expected_failure(run_cli("prompt", url, "test_prompt_with_arguments", '{"arg1": 1}'), 4)
    done = run_cli("complete", url, "prompt:test_prompt_with_arguments", "arg1", "")
    assert done.returncode == 0 and done.stdout.strip(), done.stderr
    assert "REF is prompt:NAME" in expected_failure(run_cli("complete", url, "nope", "arg1"), 4)


def test_read_over_stdio_from_an_initialize_era_server() -> None:
    done = run_cli("read", "test://note", "--", *STDIO_APP.split())
    assert done.returncode == 0 and done.stdout == "a note\n", done.stderr


@pytest.mark.parametrize("generation", ["2026-07-28", "initialize era"])
def test_listen_prints_changes_as_they_come(generation: str, url: str, era_url: str) -> None:
    target, trigger = (url, "test_trigger_tool_change") if generation == "2026-07-28" else (era_url, "change")
    listener = subprocess.Popen([*CLI, "listen", target, "--tools", "--count", "1", "--json"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert listener.stderr is not None
    try:
        LineQueue(listener.stderr).wait_for(r"listening for")
        assert run_cli("call", target, trigger).returncode == 0
        assert listener.wait(timeout=TIMEOUT) == 0 and listener.stdout is not None
        assert json.loads(listener.stdout.read()) == {"event": "list_changed", "list": "tools"}
    finally:
        if listener.poll() is None:
            listener.kill()
            listener.wait()
    assert "say what to listen for" in expected_failure(run_cli("listen", target), 4)
