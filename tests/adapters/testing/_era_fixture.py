"""The conformance fixture limited to the revisions given, for the probe's and the fuzzer's tests:

    python _era_fixture.py http|stdio REVISION[,REVISION...]

Over HTTP it prints ``{"conformanceReady": true, "url": ...}`` and serves on 127.0.0.1 until its
stdin ends; over stdio it serves NDJSON until its stdin ends (conformance/fixture.py's own
drivers, the App built with ``supported_versions``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "conformance"))
import fixture  # noqa: E402 - conformance/ is not a package

if __name__ == "__main__":
    app = fixture.build_app(supported_versions=tuple(sys.argv[2].split(",")))
    if sys.argv[1] == "stdio":
        trio.run(fixture._serve_stdio, app)
    else:
        trio.run(fixture._serve_http, app, "127.0.0.1", 0)
