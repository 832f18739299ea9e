"""Each documented extra, installed from the wheel into a fresh virtualenv, does what the docs
say it is for: the commands and snippets of README.md ("Install: ...") and of the page that
documents the extra run there, and succeed.

| extra | the docs promise | run here |
|---|---|---|
| ``trio`` | the HTTP server (``serve_http``) and the ``mcpwire`` command (README, docs/cli.md) | ``mcpwire --help``; ``mcpwire serve FILE --port 0``, ``mcpwire inspect`` and ``mcpwire call`` against it; Ctrl-C's SIGTERM twin stops it, exit 0 |
| ``client`` | the clients, async or ``BlockingClient``, on asyncio or trio, and ``serve_stdio`` (README, docs/client.md) | ``BlockingClient.http`` against that server; ``BlockingClient.stdio`` of an App served by ``asyncio.run(serve_stdio(app))``; no trio installed; ``mcpwire call`` names the extra it needs (docs/cli.md) |
| ``asgi`` | the ASGI adapter, under the host's ASGI server (docs/asgi.md) | ``uvicorn MODULE:asgi`` (uvicorn installed beside, as asgi.md's host does) and a call through it |
| ``wsgi`` | the WSGI adapter, under the host's WSGI server (docs/wsgi.md) | ``waitress-serve MODULE:wsgi`` (waitress installed beside, as wsgi.md's host does; no trio) and a call through it |
| ``probe`` | ``mcpwire probe`` and ``mcpwire fuzz`` (docs/probing.md, docs/fuzzing.md) | both ``--help``; ``mcpwire probe URL`` against that server, no check failed |
| ``redis`` | the Redis stores (README); with ``trio``, ``mcpwire serve --redis`` (docs/deployment.md) | a task and a session stored and read back through a real ``redis-server``; ``mcpwire serve --redis URL`` serving a call |
| ``oauth`` | JOSE: DPoP proofs, ``private_key_jwt`` assertions, JWT verification (docs/auth.md) | a DPoP proof checked by ``DPoPVerifier``, an access token verified by ``JwtVerifier``, a client assertion signed |

The wheel is built once per session (``tests/_dists.py``, shared with test_packaging.py). Each
virtualenv is made without pip (``python -m venv --without-pip``) and filled by this
interpreter's pip (``pip --python``), which saves installing pip into each; pip's
cache is reused, so the module takes about a minute, the wheel build and the probe's run (about
10 s) included. Needs PyPI, or a pip cache holding the dependencies. Every program runs isolated (``-I``, or a
console script of the virtualenv) from a folder outside the repository, so it can only import
what the install brought; every server listens on 127.0.0.1, on a port the system picks, and
every wait has a deadline.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import signal
import subprocess
import sys
import textwrap
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from _dists import built_dists
from _redis import RedisServer

from mcpwire import Client, HttpResponseParser, ResultReceived
from mcpwire.types import Implementation

RUN_TIMEOUT = 120.0  # one command, a pip install included
START_TIMEOUT = 30.0  # a server announcing where it listens

# A server file as a user writes one (docs/server.md, the quickstart): a typed tool.
APP = '''\
from mcpwire_adapters import App

app = App("extras", "1.0")


@app.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b
'''


def _run(*args: str | Path, cwd: Path, ok: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    if ok:
        assert result.returncode == 0, f"{' '.join(map(str, args))} failed:\n{result.stdout}\n{result.stderr}"
    return result


class Venvs:
    """One virtualenv per requirement, made when first asked for (a test of one extra makes only
    its own), in a folder of the session's temporary root."""

    def __init__(self, wheel: Path, root: Path) -> None:
        self.wheel, self.root = wheel, root
        self.made: dict[str, Path] = {}
        (root / "app.py").write_text(APP)

    def __getitem__(self, extras: str) -> Path:
        """The virtualenv of ``pip install 'mcpwire[EXTRAS]'`` (and ``+package`` beside: ``asgi+uvicorn``)."""
        if extras not in self.made:
            extra, *more = extras.split("+")
            env = self.root / f"venv-{re.sub(r'[^a-z]+', '-', extras)}"  # never a package name: the root is on the path
            _run(sys.executable, "-m", "venv", "--without-pip", env, cwd=self.root)
            _run(sys.executable, "-m", "pip", "--python", env / "bin" / "python", "install", "--quiet",
                 "--disable-pip-version-check", f"{self.wheel}[{extra}]", *more, cwd=self.root)
            self.made[extras] = env
        return self.made[extras]

    def installed(self, env: Path) -> set[str]:
        listed = _run(sys.executable, "-m", "pip", "--python", env / "bin" / "python", "list", "--format=freeze",
                      "--disable-pip-version-check", cwd=self.root).stdout
        return {line.split("==")[0].lower() for line in listed.split()}


@pytest.fixture(scope="module")
def venvs(tmp_path_factory: pytest.TempPathFactory) -> Venvs:
    return Venvs(built_dists(tmp_path_factory)["wheel"], tmp_path_factory.mktemp("extras"))


def _python(env: Path, code: str, cwd: Path, *args: str) -> str:
    """Run ``code`` with the virtualenv's interpreter, isolated, in ``cwd`` (``app.py`` beside it,
    found by putting ``cwd`` on the path explicitly: ``-I`` leaves the current folder out)."""
    script = f"import sys; sys.path.insert(0, {str(cwd)!r})\n" + textwrap.dedent(code)
    return _run(env / "bin" / "python", "-I", "-c", script, *args, cwd=cwd).stdout


@contextlib.contextmanager
def _serving(command: list[str | Path], cwd: Path, announced: str) -> Iterator[tuple[str, list[str]]]:
    """Start a server; yield the URL its stderr announces (``announced`` holds one group, the
    host:port or URL) and the stderr lines so far; stop it with SIGTERM (killed after 15 s)."""
    process = subprocess.Popen([str(c) for c in command], cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    assert process.stderr is not None
    seen = b""
    lines: list[str] = []
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not (found := re.search(announced.encode(), seen)):
            ready, _, _ = select.select([process.stderr], [], [], max(0.0, deadline - time.monotonic()))
            chunk = os.read(process.stderr.fileno(), 65536) if ready else b""
            assert chunk, f"{command} did not start: {seen.decode(errors='replace')}"
            seen += chunk
        lines[:] = seen.decode().splitlines()
        yield found.group(1).decode(), lines
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            _, rest = process.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            _, rest = process.communicate()
        lines[:] = (seen + (rest or b"")).decode(errors="replace").splitlines()
        lines.append(f"exit {process.returncode}")


def _mcpwire_serve(env: Path, cwd: Path, *options: str) -> contextlib.AbstractContextManager[tuple[str, list[str]]]:
    return _serving([env / "bin" / "mcpwire", "serve", "app.py", "--port", "0", *options], cwd,
                    r"at (http://127\.0\.0\.1:\d+/mcp)")


def _call_add(url: str) -> str:
    """``add`` called over HTTP from this process, the engine and urllib: the text of its result."""
    client = Client(Implementation(name="extras-test", version="1"))
    request = client.call_tool("add", {"a": 2, "b": 40})
    http = urllib.request.Request(url, data=request.body, headers=request.header_dict)
    with urllib.request.urlopen(http, timeout=30) as response:
        parser = HttpResponseParser(client, request, status=response.status,
                                    content_type=response.headers.get("Content-Type"))
        events = parser.feed(response.read()) + parser.close()
    assert isinstance(events[-1], ResultReceived), events
    return str(events[-1].value.content[0].text)


@pytest.fixture(scope="module")
def served(venvs: Venvs) -> Iterator[str]:
    """The trio extra's ``mcpwire serve app.py``, for the clients of the other extras."""
    with _mcpwire_serve(venvs["trio"], venvs.root) as (url, _):
        yield url


# -- trio ---------------------------------------------------------------------------------------------
def test_trio_serves_and_calls_with_the_mcpwire_command(venvs: Venvs) -> None:
    env, cwd = venvs["trio"], venvs.root
    help_text = _run(env / "bin" / "mcpwire", "--help", cwd=cwd).stdout
    for command in ("serve", "inspect", "call", "probe"):
        assert command in help_text
    with _mcpwire_serve(env, cwd) as (url, stderr):
        assert stderr[0] == f"mcpwire: serving extras 1.0 at {url} (Ctrl-C to stop)"
        shown = _run(env / "bin" / "mcpwire", "inspect", url, cwd=cwd).stdout
        assert re.search(r"^\s+add\s+a b\s+Add two numbers\.$", shown, re.M), shown
        called = _run(env / "bin" / "mcpwire", "call", url, "add", '{"a": 2, "b": 40}', cwd=cwd)
        assert called.stdout.strip() == "42"
    assert stderr[-2:] == ["mcpwire: stopped", "exit 0"], stderr


# -- client -------------------------------------------------------------------------------------------
def test_client_runs_blocking_clients_and_serve_stdio_without_trio(venvs: Venvs, served: str) -> None:
    env, cwd = venvs["client"], venvs.root
    assert "trio" not in venvs.installed(env) and {"anyio", "h11"} <= venvs.installed(env)
    # docs/client.md, "Blocking use": a call over HTTP...
    over_http = _python(env, """
        from mcpwire_adapters import BlockingClient
        with BlockingClient.http(sys.argv[1]) as c:
            c.connect()
            print(c.call_tool("add", {"a": 2, "b": 40}).value.content[0].text)
    """, cwd, served)
    assert over_http.split() == ["42"]
    # ...and over stdio, to an App that README's client extra serves with serve_stdio on asyncio.
    (cwd / "stdio_app.py").write_text("import asyncio\n\nfrom app import app\nfrom mcpwire_adapters import serve_stdio\n\n"
                                      "asyncio.run(serve_stdio(app))\n")
    over_stdio = _python(env, """
        from mcpwire_adapters import BlockingClient
        c = BlockingClient.stdio([sys.executable, "-I", "-c", "import sys; sys.path.insert(0, '.'); import stdio_app"])
        added = c.call_tool("add", {"a": 2, "b": 40}).value.content[0].text
        c.close()
        print(added, c.session.returncode)
    """, cwd)
    assert over_stdio.split() == ["42", "0"]
    # The command needs the trio extra and says so (docs/cli.md): one line, exit 4, no traceback.
    refused = _run(env / "bin" / "mcpwire", "call", served, "add", cwd=cwd, ok=False)
    assert (refused.returncode, refused.stderr) == (
        4, "error: mcpwire call needs the 'trio' extra: pip install 'mcpwire[trio]'\n")


# -- asgi ---------------------------------------------------------------------------------------------
def test_asgi_serves_under_uvicorn(venvs: Venvs) -> None:
    env, cwd = venvs["asgi+uvicorn"], venvs.root
    assert "trio" not in venvs.installed(env)
    (cwd / "asgi_module.py").write_text("from app import app\nfrom mcpwire_adapters import asgi_app\n\n"
                                        "asgi = asgi_app(app)\n")
    command: list[str | Path] = [env / "bin" / "uvicorn", "asgi_module:asgi", "--host", "127.0.0.1", "--port", "0",
                                 "--timeout-graceful-shutdown", "5"]
    with _serving(command, cwd, r"Uvicorn running on (http://127\.0\.0\.1:\d+)") as (base, _):
        assert _call_add(base + "/mcp") == "42"


# -- wsgi ---------------------------------------------------------------------------------------------
def test_wsgi_serves_under_waitress(venvs: Venvs) -> None:
    env, cwd = venvs["wsgi+waitress"], venvs.root
    assert "trio" not in venvs.installed(env)
    (cwd / "wsgi_module.py").write_text("from app import app\nfrom mcpwire_adapters import wsgi_app\n\n"
                                        "wsgi = wsgi_app(app)\n")
    command: list[str | Path] = [env / "bin" / "waitress-serve", "--listen=127.0.0.1:0", "wsgi_module:wsgi"]
    with _serving(command, cwd, r"Serving on (http://127\.0\.0\.1:\d+)") as (base, _):
        assert _call_add(base + "/mcp") == "42"


# -- probe --------------------------------------------------------------------------------------------
def test_probe_and_fuzz_commands_run(venvs: Venvs, served: str) -> None:
    env, cwd = venvs["probe"], venvs.root
    for command in ("probe", "fuzz"):
        assert _run(env / "bin" / "mcpwire", command, "--help", cwd=cwd).stdout.startswith(f"usage: mcpwire {command}")
    probed = _run(env / "bin" / "mcpwire", "probe", served, "--rate", "0", cwd=cwd, ok=False)  # no pacing: a local server
    assert probed.returncode == 0 and re.search(r"^\d+ passed, 0 failed", probed.stdout, re.M), probed.stdout[-3000:]


# -- redis --------------------------------------------------------------------------------------------
def test_redis_stores_and_serve_redis(venvs: Venvs, redis_server: RedisServer) -> None:
    env, cwd = venvs["redis"], venvs.root
    stored = _python(env, """
        import redis
        from mcpwire.sessions import Session
        from mcpwire.tasks import TaskRecord, TaskStatus
        from mcpwire_adapters.state.redis.broker import RedisBroker  # the README's "and broker": on anyio
        from mcpwire_adapters.state.redis.sessions import RedisSessionStore
        from mcpwire_adapters.state.redis.tasks import RedisTaskStore
        client = redis.Redis.from_url(sys.argv[1])
        assert RedisBroker
        with RedisTaskStore(client, prefix="extras:") as tasks:
            record = TaskRecord(task_id="t1", status=TaskStatus.WORKING, created_at=1.0, updated_at=1.0, ttl_ms=60_000)
            assert tasks.add(record, 1.0)
            print(tasks.get("t1", 2.0).status.value)
        sessions = RedisSessionStore(client, prefix="extras:")
        print(sessions.add(Session("s1", "2025-11-25", {}, None, 1.0), 1.0), sessions.get("s1", 2.0).revision)
        sessions.close()
    """, cwd, redis_server.url)
    assert stored.split() == ["working", "True", "2025-11-25"], stored
    # docs/deployment.md: pip install 'mcpwire[trio,redis]', then mcpwire serve --redis URL.
    with _mcpwire_serve(venvs["trio,redis"], cwd, "--redis", redis_server.url) as (url, stderr):
        assert "mcpwire: sharing notifications and sessions through Redis under 'mcpwire:extras:'" in stderr
        assert _call_add(url) == "42"


# -- oauth --------------------------------------------------------------------------------------------
def test_oauth_signs_and_verifies(venvs: Venvs) -> None:
    env, cwd = venvs["oauth"], venvs.root
    checked = _python(env, """
        import asyncio, base64, hashlib, time
        from joserfc import jwk, jwt
        from mcpwire_adapters.oauth.jose import DPoPKey, DPoPVerifier, JwtVerifier, PrivateKeyJwt

        now = int(time.time())
        issuer_key = jwk.ECKey.generate_key("P-256", parameters={"kid": "k1"})
        dpop = DPoPKey.generate()
        claims = {"iss": "https://as.example", "aud": "https://mcp.example/mcp", "sub": "ada", "exp": now + 60,
                  "scope": "tools", "cnf": {"jkt": dpop.thumbprint}}
        token = jwt.encode({"alg": "ES256", "typ": "at+jwt", "kid": "k1"}, claims, issuer_key)
        verifier = JwtVerifier(issuer="https://as.example", audience="https://mcp.example/mcp",
                               jwks={"keys": [issuer_key.as_dict(private=False)]})
        access = asyncio.run(verifier.verify(token))
        ath = base64.urlsafe_b64encode(hashlib.sha256(token.encode()).digest()).rstrip(b"=").decode()
        proof = dpop.proof(method="POST", url="https://mcp.example/mcp", issued_at=now, jti="j1", access_token_hash=ath)
        jti = DPoPVerifier().check(proof, method="POST", url="https://mcp.example/mcp", access_token=token,
                                   jkt=access.jkt, now=now)
        assertion = PrivateKeyJwt(jwk.ECKey.generate_key("P-256")).assertion(
            client_id="me", audience="https://as.example/token", issued_at=now, jti="a1")
        print(access.subject, ",".join(access.scopes), jti, assertion.count("."))
    """, cwd)
    assert checked.split() == ["ada", "tools", "j1", "2"], checked
