"""The protocol revisions mcpwire speaks, and what differs between them.

Owns (specification page "Versioning"; schema ``LATEST_PROTOCOL_VERSION``): the revision
strings, the one this release speaks by default, and the per-revision facts the engines ask
for instead of comparing version strings themselves. Which methods and notifications each
revision has is a column of the method table (``methods.py``).
"""

from __future__ import annotations

from typing import Final

__all__ = ["PROTOCOL_VERSION", "REVISIONS"]

PROTOCOL_VERSION: Final = "2026-07-28"
"""The stateless revision: every request carries its protocol version and capabilities."""

REVISIONS: Final[tuple[str, ...]] = (PROTOCOL_VERSION,)
"""Every revision the engines know, newest first."""
