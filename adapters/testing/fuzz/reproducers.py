"""What a fuzz failure is written as (docs/fuzzing.md, Reading a reproducer): the replay file
(:func:`write_failure`, format :data:`FORMAT`: the steps as sent, what came back, the problems
and the rules they break, the context the oracle judged them in, the transport), and beside it
the shell reproducer: the ``curl`` commands (:func:`curl_command`; over HTTP+SSE, after the lines
that open the stream and initialize at the endpoint it names) or, for stdio, the lines to pipe
into the server. :func:`mcpwire_adapters.testing.fuzz.runner.replay` reads the file back.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..era_rules import LEGACY
from ..era_wire import initialize, notification
from ..probe.checks import HTTP_SSE
from ..rawwire import Exchange, Request
from ..rawwire_sse import LEGACY_HEADERS
from ..verdict import Finding, Problem
from .cases import Info, Step, encode_step
from .legacy import StreamAnswer
from .reading import Context

__all__ = ["FORMAT", "curl_command", "write_failure"]

FORMAT = "mcpwire-fuzz/1"


def curl_command(url: str, request: Request, body_file: str | None = None) -> str:
    """A ``curl`` command sending ``request`` as it was sent (curl's own Accept and Content-Type
    are removed when the request has none)."""
    words = ["curl", "-sS", "-i", "-X", request.method, url]
    names = {k.lower() for k, _ in request.headers}
    for default in ("Accept", "Content-Type"):
        if default.lower() not in names:
            words += ["-H", f"{default}:"]
    for name, value in request.headers:
        words += ["-H", f"{name}: {value}"]
    if request.body:
        words += ["--data-binary", f"@{body_file}" if body_file else request.body.decode("utf-8")]
    return shlex.join(words)


def _rule_json(problem: str) -> dict[str, Any]:
    """The rule a problem breaks, for a replay file: its id, strength, source, sentence and page."""
    if not isinstance(problem, Problem):
        return {"strength": "MUST"}
    r = problem.rule
    return {"rule": r.id, "strength": r.strength, "source": r.source, "quote": r.quote, "url": r.url}


def write_failure(out_dir: Path, number: int, failure: Finding[list[Step]], info: Info, context: Context, target: str,
                  strict: bool = False) -> Path:
    """Write ``failure-N.json`` (the replay file), and ``failure-N.sh`` (curl) or ``failure-N.jsonl`` (stdio)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = out_dir / f"failure-{number}"
    kind = "stdio" if info.stdio else HTTP_SSE if info.http_sse else "http"
    document: dict[str, Any] = {
        "format": FORMAT, "target": {"kind": kind, "command": target} if info.stdio else {"kind": kind, "url": target},
        "problems": failure.problems, "status": failure.status, "flaky": failure.flaky,
        "rules": [_rule_json(p) for p in failure.problems], "strict": strict,
        "context": {"capabilities": sorted(context.capabilities) if context.capabilities is not None else None,
                    "loopback": context.loopback, "headerTools": sorted(context.header_tools),
                    "initializeEra": context.initialize_era, "revision": context.revision,
                    "session": context.session_id},
        "steps": [encode_step(s) for s in failure.subject],
        "answers": [_answer_json(e) for e in failure.evidence],
    }
    if info.stdio:
        lines = Path(f"{stem}.jsonl")
        lines.write_bytes(b"".join(s.request.body + b"\n" for s in failure.subject))
        document["replay"] = f"{target} < {lines.name}"
    else:
        head = ["#!/bin/sh", f"# mcpwire fuzz: {failure.problems[0]}"]
        opening = _sse_opening(target) if info.http_sse else []
        steps = []
        for i, step in enumerate(failure.subject, 1):
            body_file = None
            if step.request.body and (b"\x00" in step.request.body or not _utf8(step.request.body)):
                body_file = f"{stem.name}.{i}.body"
                (out_dir / body_file).write_bytes(step.request.body)
            steps.append(curl_command(_ENDPOINT if info.http_sse else target, step.request, body_file)
                         .replace(_ENDPOINT, '"$endpoint"'))
        closing = ["sleep 1", "echo", "cat \"$stream\"  # the SSE stream: the answers"] if info.http_sse else []
        script = head + opening + ["# the requests as sent, in order:"] + steps + closing
        Path(f"{stem}.sh").write_text("\n".join(script) + "\n", encoding="utf-8")
        document["curl"] = steps
    path = Path(f"{stem}.json")
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


_ENDPOINT = "__ENDPOINT__"  # where a curl command posts to the HTTP+SSE endpoint ("$endpoint" in the script)


def _sse_opening(url: str) -> list[str]:
    """The lines of a script that open the HTTP+SSE stream at ``url``, read the endpoint its
    first event names into ``$endpoint``, and initialize (2024-11-05) there."""
    parts = urlsplit(url)
    origin, base = f"{parts.scheme}://{parts.netloc}", url.split("?")[0].rsplit("/", 1)[0] + "/"
    init = Request("POST", LEGACY_HEADERS, json.dumps(initialize(LEGACY, "fuzz-init")).encode())
    done = Request("POST", LEGACY_HEADERS, json.dumps(notification("notifications/initialized")).encode())
    return [
        "# HTTP+SSE (2024-11-05): the SSE stream is opened, the endpoint its first event names is read, an",
        "# initialize is posted there; the answers come on the stream, printed at the end.",
        'stream=$(mktemp)',
        shlex.join(["curl", "-sN", "-H", "Accept: text/event-stream", url]) + ' > "$stream" &',
        "reader=$!",
        """trap 'kill $reader 2>/dev/null; rm -f "$stream"' EXIT""",
        """for _ in $(seq 100); do grep -q '^data:' "$stream" && break; sleep 0.1; done""",
        """endpoint=$(sed -n 's/^data: *//p' "$stream" | head -n 1 | tr -d '\\r')""",
        f'case "$endpoint" in http://*|https://*) ;; /*) endpoint={shlex.quote(origin)}"$endpoint" ;; '
        f'*) endpoint={shlex.quote(base)}"$endpoint" ;; esac',
        curl_command(_ENDPOINT, init).replace(_ENDPOINT, '"$endpoint"'),
        curl_command(_ENDPOINT, done).replace(_ENDPOINT, '"$endpoint"'),
    ]


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _answer_json(sent: Exchange) -> dict[str, Any]:
    _, reply, error = sent
    if reply is None:
        return {"error": error}
    out: dict[str, Any] = {"status": reply.status, "headers": [list(h) for h in reply.headers],
                           "body": reply.body[:4000].decode("utf-8", "replace")}
    if isinstance(reply, StreamAnswer) and reply.post is not None:  # HTTP+SSE: the body is the stream's events
        out["post"] = _answer_json((sent[0], reply.post, None))
    if error is not None:
        out["error"] = error
    return out
