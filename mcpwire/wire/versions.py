"""The protocol revisions mcpwire speaks, and what differs between them.

Owns (specification page "Versioning"; schema ``LATEST_PROTOCOL_VERSION``): the revision
strings, the one this release speaks by default, and the per-revision facts the engines ask
for instead of comparing version strings themselves. Which methods and notifications each
revision has is a column of the method table (``methods.py``).
"""

from __future__ import annotations

from typing import Final

__all__ = ["PROTOCOL_VERSION", "REVISIONS", "INITIALIZE_ERA", "SSE_PRIMING", "STATELESS", "is_initialize_era"]

PROTOCOL_VERSION: Final = "2026-07-28"
"""The stateless revision: every request carries its protocol version and capabilities."""

REVISIONS: Final[tuple[str, ...]] = (PROTOCOL_VERSION, "2025-11-25", "2025-06-18", "2025-03-26")
"""Every revision the engines know, newest first."""

STATELESS: Final = frozenset({PROTOCOL_VERSION})
"""Revisions without a handshake: every request carries its version and capabilities in ``_meta``."""

INITIALIZE_ERA: Final[tuple[str, ...]] = ("2025-11-25", "2025-06-18", "2025-03-26")
"""Revisions negotiated once by ``initialize`` (a session), newest first. A request on a
Streamable HTTP session without an MCP-Protocol-Version header is taken as the oldest of them,
2025-03-26 (specification 2025-06-18: Basic > Transports, protocol version header)."""

SSE_PRIMING: Final = frozenset({"2025-11-25"})
"""Revisions whose SSE streams start with a priming event (an id and empty data) and may be
closed by the server mid-call for the client to resume with Last-Event-ID (SEP-1699)."""


def is_initialize_era(revision: str) -> bool:
    return revision in INITIALIZE_ERA
