"""Redis is optional (the ``redis`` extra): the App, the drivers and the command line import and
run without redis-py, loading it only with ``--redis`` or ``MCPWIRE_REDIS``; the ASGI app's
lifespan connects to ``MCPWIRE_REDIS`` before serving and fails the startup when Redis is down."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import anyio
import pytest
from _redis import RedisServer, free_port
from mcpwire_adapters import App
from mcpwire_adapters.serve.asgi.app import AsgiApp
from mcpwire_adapters.state.broker import LocalBroker
from mcpwire_adapters.state.redis.broker import RedisBroker
from mcpwire_adapters.state.redis.sessions import RedisSessionStore
from mcpwire_adapters.state.redis.tasks import RedisTaskStore

REPO = Path(__file__).resolve().parents[3]


def _modules_after(statement: str) -> set[str]:
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True, cwd=str(REPO))
    return set(json.loads(done.stdout))


def test_the_app_drivers_and_cli_load_no_redis() -> None:
    loaded = _modules_after("import mcpwire_adapters, mcpwire_adapters.app.app, mcpwire_adapters.serve.asgi.app, "
                            "mcpwire_adapters.cli.commands, mcpwire_adapters.serve.trio_h11.server")
    assert "redis" not in loaded
    assert not any(m.startswith(("mcpwire_adapters.state.redis", "mcpwire_adapters.serve.redis_state")) for m in loaded)


def test_without_redis_py_everything_but_redis_works() -> None:
    code = ("import sys; sys.modules['redis'] = None\n"
            "import mcpwire_adapters.cli.commands as cli\n"
            "from mcpwire_adapters import App\n"
            "App('x', '1').notify_list_changed('tools')\n"
            "sys.exit(cli.main(['serve', 'tests/cluster_app.py:app', '--port', '0', '--redis', 'redis://127.0.0.1:1/0']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(REPO), timeout=60)
    assert done.returncode == 4, done.stderr
    assert "--redis needs redis-py: pip install 'mcpwire[redis]'" in done.stderr


async def _lifespan(app: AsgiApp) -> list[MutableMapping[str, Any]]:
    sent: list[MutableMapping[str, Any]] = []
    incoming = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]

    async def receive() -> dict[str, Any]:
        if incoming:
            return incoming.pop(0)
        await anyio.sleep_forever()
        raise AssertionError

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    with anyio.fail_after(20):
        await app({"type": "lifespan"}, receive, send)
    return sent


def test_the_asgi_lifespan_connects_to_mcpwire_redis(redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch) -> None:
    app = App("asgi-redis", "1.0", tasks=True)
    assert isinstance(app.fanout.broker, LocalBroker)
    monkeypatch.setenv("MCPWIRE_REDIS", redis_server.url)
    monkeypatch.setenv("MCPWIRE_REDIS_PREFIX", "asgi:")
    sent = anyio.run(_lifespan, AsgiApp(app))
    assert [m["type"] for m in sent] == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    assert isinstance(app.fanout.broker, RedisBroker) and app.fanout.broker.channel == "asgi:notices"
    assert isinstance(app.server.sessions, RedisSessionStore) and app.server.sessions.prefix == "asgi:"
    assert app.server.tasks is not None and isinstance(app.server.tasks.store, RedisTaskStore)


def test_the_asgi_startup_fails_when_redis_is_down(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPWIRE_REDIS", f"redis://127.0.0.1:{free_port()}/0")
    sent = anyio.run(_lifespan, AsgiApp(App("asgi-redis", "1.0")))
    assert [m["type"] for m in sent] == ["lifespan.startup.failed"]
    assert "cannot reach Redis at redis://127.0.0.1:" in sent[0]["message"]


@pytest.mark.parametrize(("options", "message"), [
    (["--redis-prefix", "p:"], "--redis-prefix needs --redis URL"),
    (["--redis", "redis://127.0.0.1:1/0", "--tasks-db", "x.db"], "--tasks-db and --redis"),
])
def test_redis_options_misused_are_usage_errors(options: list[str], message: str) -> None:
    done = subprocess.run([sys.executable, "-m", "mcpwire_adapters.cli", "serve", "tests/cluster_app.py:app",
                           "--port", "0", *options], capture_output=True, text=True, cwd=str(REPO), timeout=60)
    assert done.returncode == 4 and message in done.stderr, done.stderr
