#!/usr/bin/env python3
"""Run the official MCP conformance runner against mcpwire (revision 2026-07-28, or with
--spec 2025-11-25 the initialize-era set, against the same fixture URL).

    python conformance/run.py server [--spec 2026-07-28|2025-11-25] [--transport http]
                                     [--server trio|asgi-uvicorn|asgi-hypercorn|wsgi-gunicorn|...]
                                     [--scenario NAME] [--keep]
    python conformance/run.py client [--spec 2026-07-28|2025-11-25] [--scenario NAME]

The pinned runner (@modelcontextprotocol/conformance 0.2.0-alpha.12) and Node 22 are
installed on first use into ~/.cache/mcpwire-conformance ($MCPWIRE_CONFORMANCE_CACHE).

server: start conformance/fixture.py (it prints {"conformanceReady": true, "url": ...}
and serves until stdin EOF), run `--requirements 2026-07-28`, then each pending
scenario alone, then close the fixture's stdin and require exit code 0 within 5 s.
--server picks what serves the fixture's HTTP (fixture.py --server): the trio/h11 driver
(default) or the ASGI adapter under uvicorn or hypercorn; wsgi-gunicorn serves the same App
through the WSGI adapter under gunicorn's gthread worker (conformance/fixture_wsgi.py).
--keep leaves the fixture running until Enter. client: run the requirement set with conformance/client.py as the client,
inside a network namespace with only loopback.

A scenario passes only with no FAILURE, WARNING or SKIPPED check (see ALLOWED_SKIPS)
and at least one SUCCESS check other than wire-schema-valid. The exit code is non-zero
if a required scenario is missing or fails. Results: conformance/results/<timestamp>/.
Hidden options: --url (test a running server), --fixture-cmd, --client-cmd.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from npm import CACHE, NpmError, ensure_node, ensure_package  # noqa: E402 - this folder is not a package

RUNNER_PACKAGE, RUNNER_VERSION = "@modelcontextprotocol/conformance", "0.2.0-alpha.12"
REVISION = "2026-07-28"
REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "conformance" / "results"
SUITE_TIMEOUT, SINGLE_TIMEOUT, READY_TIMEOUT, EXIT_TIMEOUT = 300.0, 120.0, 30.0, 5.0
FIXTURE_SERVERS = ("trio", "asgi-uvicorn", "asgi-hypercorn", "asgi-hypercorn-trio")  # fixture.py SERVERS
# Served by a launcher of their own (the same App, fixture.py's build_app), with fixture.py's handshake.
FIXTURE_LAUNCHERS = {"wsgi-gunicorn": "fixture_wsgi.py"}
SPECS = (REVISION, "2025-11-25")  # the requirement sets the runner ships; --spec picks one
# Sanity check of the parsed requirement set (scored scenarios, auth/* client ones included).
EXPECTED_SCORED = {
    REVISION: {"server": 37, "client": 32},
    "2025-11-25": {"server": 30, "client": 18},
}
# Unscored scenarios that must still pass; the server ones are always re-run individually.
REQUIRED_UNSCORED: dict[str, dict[str, tuple[str, ...]]] = {
    REVISION: {
        "server": ("json-schema-2020-12", "http-header-validation", "http-custom-header-server-validation"),
        "client": ("json-schema-2020-12-preservation",
                   # the OAuth extension scenarios (conformance/client_auth.py, docs/auth.md)
                   "auth/client-credentials-jwt", "auth/client-credentials-basic",
                   "auth/enterprise-managed-authorization", "auth/dpop", "auth/dpop-nonce", "auth/wif-jwt-bearer"),
    },
    "2025-11-25": {
        "server": ("server-session-lifecycle", "json-schema-2020-12", "server-sse-polling"),
        "client": (),
    },
}
# The extension scenarios the runner runs (unscored) in the requirement set, which must pass
# too: the tasks extension (conformance/fixture_tasks.py, docs/tasks.md). The tenth,
# tasks-status-notifications, is skipped by the runner itself (its harness is being rewritten);
# tests/adapters/app/test_app_tasks.py and tests/server/test_tasks.py prove those notifications.
REQUIRED_EXTENSIONS: dict[str, dict[str, tuple[str, ...]]] = {
    REVISION: {
        "server": ("tasks-capability-negotiation", "tasks-dispatch-and-envelope", "tasks-lifecycle",
                   "tasks-mrtr-composition", "tasks-mrtr-input", "tasks-request-headers",
                   "tasks-request-state-removal", "tasks-required-task-error", "tasks-wire-fields"),
        "client": (),
    },
    "2025-11-25": {"server": (), "client": ()},
}
# Named allowance: a 2026-07-28 client never sends initialize or notifications/initialized, so
# http-standard-headers always reports the Mcp-Method checks for those two methods as SKIPPED.
ALLOWED_SKIPS: dict[tuple[str, str], frozenset[str]] = {
    ("client", "http-standard-headers"): frozenset(
        {"ClientMcpMethodHeader_initialize", "ClientMcpMethodHeader_notifications_initialized"}
    ),
}
STATUSES = ("SUCCESS", "FAILURE", "WARNING", "SKIPPED", "INFO")
TIMESTAMP_SUFFIX = re.compile(r"-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$")


class RunError(Exception):
    """A setup problem that makes the leg impossible to run or judge."""


def fail(message: str) -> NoReturn:
    raise RunError(message)


STARTED: list[subprocess.Popen[Any]] = []  # every child gets its own process group; all are killed on exit


def spawn(cmd: list[str], **kwargs: Any) -> subprocess.Popen[Any]:
    STARTED.append(subprocess.Popen(cmd, start_new_session=True, **kwargs))
    return STARTED[-1]


def kill_group(proc: subprocess.Popen[Any]) -> None:
    for sig, grace in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 1.0)):
        try:
            os.killpg(proc.pid, sig)  # the group outlives its leader if a grandchild is left
        except (ProcessLookupError, PermissionError):
            return
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            pass


def ensure_runner() -> tuple[Path, Path]:
    """Return (node binary, runner package dir), installing the pinned versions if needed."""
    try:
        pkg = ensure_package(RUNNER_PACKAGE, RUNNER_VERSION, prefix=CACHE, with_node=True)
        return ensure_node(CACHE), pkg
    except NpmError as exc:
        fail(str(exc))


def requirements(node: Path, pkg: Path, spec: str) -> dict[str, Any]:
    """Parse the frozen requirement set with the YAML parser the runner itself uses."""
    script = (
        "const [y, f] = process.argv.slice(1); process.stdout.write(JSON.stringify("
        "require(y).parse(require('fs').readFileSync(f, 'utf8'))))"
    )
    yaml_module, requirement_set = CACHE / "node_modules" / "yaml", pkg / "requirements" / f"{spec}.yaml"
    cmd = [str(node), "-e", script, str(yaml_module), str(requirement_set)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    if out.returncode:
        fail(f"cannot read the {spec} requirement set: {out.stderr.strip()}")
    data: dict[str, Any] = json.loads(out.stdout)
    return data


@dataclass
class Outcome:
    counts: Counter[str] = field(default_factory=Counter)
    offending: list[dict[str, Any]] = field(default_factory=list)
    passed: bool = False
    note: str = ""


def evaluate(leg: str, scenario: str, path: Path) -> Outcome:
    outcome = Outcome()
    try:
        checks = json.loads(path.read_text())
        if not isinstance(checks, list) or not all(isinstance(c, dict) for c in checks):
            raise ValueError("not a list of check objects")
    except (OSError, ValueError) as exc:
        outcome.note = f"unreadable {path}: {exc}"
        return outcome
    allowed = ALLOWED_SKIPS.get((leg, scenario), frozenset())
    outcome.counts.update(str(c.get("status")) for c in checks)
    outcome.offending = [
        c
        for c in checks
        if c.get("status") in ("FAILURE", "WARNING") or (c.get("status") == "SKIPPED" and c.get("name") not in allowed)
    ]
    useful = any(c.get("status") == "SUCCESS" and c.get("id") != "wire-schema-valid" for c in checks)
    outcome.note = "" if useful or outcome.offending else "no SUCCESS check other than wire-schema-valid"
    outcome.passed = useful and not outcome.offending
    return outcome


def collect(leg: str, root: Path, skip: str = "") -> dict[str, Outcome]:
    """Scenario name -> outcome for every checks.json under root; the latest run of a scenario wins."""
    found: dict[str, Outcome] = {}
    for path in sorted(root.rglob("checks.json"), key=lambda p: p.parent.name[-24:]):
        rel = path.parent.relative_to(root).as_posix()
        if skip and rel.startswith(skip + "/"):
            continue
        name = TIMESTAMP_SUFFIX.sub("", rel)
        name = name.removeprefix("server-") if leg == "server" else name
        found[name] = evaluate(leg, name, path)
    return found


def report(title: str, names: list[str], outcomes: dict[str, Outcome], details: bool = True) -> int:
    """Print one row per scenario (with offending checks if `details`); return how many passed."""
    if not names:
        return 0
    print(f"\n{title}")
    passed = 0
    for name in names:
        outcome = outcomes.get(name) or Outcome(note="MISSING: no checks.json was produced")
        passed += outcome.passed
        counts = " ".join(f"{s}={outcome.counts.get(s, 0)}" for s in STATUSES)
        print(f"  {'PASS' if outcome.passed else 'FAIL'}  {name:<50} {counts}")
        for check in outcome.offending if details else []:
            detail = check.get("errorMessage") or json.dumps(check.get("details"), default=str)
            print(f"        - {check.get('status')} {check.get('id')} ({check.get('name')}): {str(detail)[:300]}")
        if outcome.note and details:
            print(f"        - {outcome.note}")
    return passed


def start_fixture(cmd: list[str], run_dir: Path, env: dict[str, str]) -> tuple[subprocess.Popen[Any], str]:
    with (run_dir / "fixture-stderr.log").open("w") as stderr_log:
        proc = spawn(
            cmd, cwd=REPO, env=env, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr_log
        )
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:  # keep draining stdout into a log so the fixture never blocks on it
        assert proc.stdout is not None
        with (run_dir / "fixture-stdout.log").open("w") as log:
            for line in proc.stdout:
                log.write(line)
                log.flush()
                lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + READY_TIMEOUT
    while (remaining := deadline - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=remaining)
        except queue.Empty:
            break
        if line is None:
            time.sleep(0.5)  # give it a moment so the exit code is known
            fail(f"fixture closed stdout before it was ready (exit code {proc.poll()}); logs in {run_dir}")
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict) and message.get("conformanceReady") is True:
            url = message.get("url")
            if not isinstance(url, str) or urlsplit(url).hostname != "127.0.0.1":
                fail(f"fixture must listen on 127.0.0.1, but announced {url!r}")
            return proc, url
    fail(f"fixture printed no conformanceReady line within {READY_TIMEOUT:.0f} s; logs in {run_dir}")


def netns_wrapper() -> list[str]:
    """Command prefix running the client leg in a fresh network namespace with only `lo` up."""
    unshare, ip = shutil.which("unshare"), shutil.which("ip")
    if not unshare or not ip:
        fail("the client leg needs `unshare` (util-linux) and `ip` (iproute2) to isolate the runner's servers")
    errors = []
    for flags in ("-n", "-rn"):
        cmd = [unshare, flags, ip, "link", "set", "lo", "up"]
        probe = subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=False)
        if probe.returncode == 0:
            return [unshare, flags, "sh", "-c", f'{shlex.quote(ip)} link set lo up && exec "$@"', "sh"]
        errors.append(f"unshare {flags}: {probe.stderr.strip()}")
    fail(f"cannot create a loopback-only network namespace ({'; '.join(errors)})")


def run_leg(args: argparse.Namespace, run_dir: Path) -> bool:
    node, pkg = ensure_runner()
    spec = str(args.spec)
    req, leg = requirements(node, pkg, spec), str(args.leg)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    suite = list(req[leg]) + [e["scenario"] for e in req.get("not_scored", []) if e.get("leg") == leg]
    scored = list(req[leg])
    if len(scored) != EXPECTED_SCORED[spec][leg]:
        fail(f"expected {EXPECTED_SCORED[spec][leg]} scored {leg} scenarios in the {spec} set, got {len(scored)}")
    unscored = list(REQUIRED_UNSCORED[spec][leg])
    singles = unscored if leg == "server" else [s for s in unscored if s not in suite]
    base, wrap, target = [str(node), str(pkg / "dist" / "index.js"), leg], list[str](), str(args.url or "")
    fixture: subprocess.Popen[Any] | None = None
    problems: list[str] = []
    if leg == "server" and not target:
        launcher = FIXTURE_LAUNCHERS.get(args.server)
        fixture_py = str(REPO / "conformance" / (launcher or "fixture.py"))
        cmd = shlex.split(args.fixture_cmd or f"{shlex.quote(sys.executable)} {shlex.quote(fixture_py)}")
        if launcher is not None:
            cmd += ["--port", "0"]
        elif not args.fixture_cmd:
            cmd += ["--transport", args.transport, "--port", "0", "--server", args.server]
        fixture, target = start_fixture(cmd, run_dir, env)
        print(f"fixture ready at {target}", flush=True)
    if leg == "server":
        base += ["--url", target]
    else:
        client = args.client_cmd or f"{sys.executable} {REPO / 'conformance' / 'client.py'}"
        if client.split() != shlex.split(client):
            fail(f"the runner splits --command on spaces, so it must not need quoting: {client!r}")
        base, wrap = base + ["--command", client], netns_wrapper()
    runs = [(f"requirements-{spec}", ["--requirements", spec], run_dir)]
    runs += [(f"scenario-{s}", ["--scenario", s, "--spec-version", spec], run_dir / "single") for s in singles]
    if args.scenario:
        scored, unscored = [args.scenario], []
        runs = [(f"scenario-{args.scenario}", ["--scenario", args.scenario, "--spec-version", spec], run_dir)]
    try:
        for label, flags, out_dir in runs:
            log = run_dir / f"runner-{label.replace('/', '_')}.log"
            print(f"running {label} (log: {log})", flush=True)
            timeout = SUITE_TIMEOUT if label.startswith("requirements") else SINGLE_TIMEOUT
            cmd = [*wrap, *base, *flags, "--output-dir", str(out_dir)]
            with log.open("w") as out:
                proc = spawn(cmd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
                try:
                    code: int | None = proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    kill_group(proc)
                    code = None
            if code not in (0, 1):
                problems.append(f"{label}: runner {'timed out' if code is None else f'exited {code}'}; see {log}")
        if fixture is not None and args.keep:
            print(f"\n--keep: fixture still running at {target}; press Enter (or Ctrl-C) to stop it", flush=True)
            try:
                input()
            except (EOFError, KeyboardInterrupt):
                pass
    finally:
        if fixture is not None and fixture.stdin:
            fixture.stdin.close()  # the fixture must exit 0 within EXIT_TIMEOUT of stdin EOF
            try:
                if (code := fixture.wait(EXIT_TIMEOUT)) != 0:
                    problems.append(f"fixture exited with code {code} (expected 0) after stdin EOF")
            except subprocess.TimeoutExpired:
                problems.append(f"fixture did not exit within {EXIT_TIMEOUT:.0f} s of stdin EOF")
    outcomes = collect(leg, run_dir, skip="single")
    scored_ok = report("selected scenario" if args.scenario else "scored scenarios", scored, outcomes)
    unscored_ok = report(
        "unscored scenarios required to pass", unscored, {**outcomes, **collect(leg, run_dir / "single")}
    )
    extensions = [] if args.scenario or args.fixture_cmd or args.url else list(REQUIRED_EXTENSIONS[spec][leg])
    extensions_ok = report("extension scenarios required to pass", extensions, outcomes)
    required = set(scored) | set(unscored) | set(extensions)
    report("not required (informational)", sorted(set(outcomes) - required), outcomes, False)
    missing = [s for s in scored if s not in outcomes]
    for line in problems + ([f"missing scored scenarios: {', '.join(missing)}"] if missing else []):
        print(f"\nPROBLEM: {line}")
    kind = "pending" if leg == "server" else "unscored"
    extra = f"; extensions: {extensions_ok}/{len(extensions)}" if extensions else ""
    print(f"\n{leg} leg: {scored_ok}/{len(scored)} scored scenarios passed; {kind}: {unscored_ok}/{len(unscored)}{extra}")
    print(f"results: {run_dir}")
    return (not problems and not missing and scored_ok == len(scored) and unscored_ok == len(unscored)
            and extensions_ok == len(extensions))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("leg", choices=("server", "client"))
    parser.add_argument("--transport", default="http", choices=("http",), help="fixture transport (server leg)")
    parser.add_argument(
        "--server", default="trio", choices=FIXTURE_SERVERS + tuple(FIXTURE_LAUNCHERS),
        help="what serves the fixture's HTTP (server leg): the trio/h11 driver, or the ASGI or WSGI adapter under a server",
    )
    parser.add_argument(
        "--spec", default=REVISION, choices=SPECS,
        help="the requirement set and wire revision (default 2026-07-28; 2025-11-25 runs the initialize era)",
    )
    parser.add_argument("--scenario", help="run only this scenario (at the --spec wire)")
    parser.add_argument("--keep", action="store_true", help="keep the fixture running until Enter (server leg)")
    for hidden in ("--url", "--fixture-cmd", "--client-cmd"):
        parser.add_argument(hidden, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.leg == "client" and (args.keep or args.url or args.fixture_cmd):
        parser.error("--keep, --url and --fixture-cmd apply to the server leg only")
    if args.leg == "client" and args.server != "trio":
        parser.error("--server applies to the server leg only")
    if args.server != "trio" and args.fixture_cmd:
        parser.error("--server and --fixture-cmd exclude each other")
    if args.leg == "server" and args.client_cmd:
        parser.error("--client-cmd applies to the client leg only")
    run_dir = RESULTS / datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ") / args.leg
    run_dir.mkdir(parents=True)
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # SIGTERM: clean up like Ctrl-C
    try:
        return 0 if run_leg(args, run_dir) else 1
    except (RunError, OSError, subprocess.SubprocessError) as exc:
        print(f"error: {exc}\nresults: {run_dir}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\ninterrupted; results: {run_dir}", file=sys.stderr)
        return 130
    finally:
        for proc in STARTED:
            kill_group(proc)


if __name__ == "__main__":
    sys.exit(main())
