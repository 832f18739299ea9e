"""Where an OAuth client keeps what it obtained: credentials per (issuer, resource), clients per issuer.

:class:`TokenStore` is the interface; :class:`MemoryTokenStore` (the default) forgets at exit;
:class:`FileTokenStore` keeps one JSON file, written atomically with mode 0600 (the CLI's
store). Keys are exact strings: what one authorization server issued is never offered to
another, and a token for one resource never to another.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Protocol

import msgspec

from mcpwire.auth import ClientInformation, Credentials

__all__ = ["TokenStore", "MemoryTokenStore", "FileTokenStore"]


class TokenStore(Protocol):
    """Credentials keyed by (issuer, resource); registered clients keyed by issuer."""

    def load(self, issuer: str, resource: str) -> Credentials | None: ...

    def save(self, credentials: Credentials) -> None: ...

    def delete(self, issuer: str, resource: str) -> None: ...

    def client(self, issuer: str) -> ClientInformation | None: ...

    def save_client(self, issuer: str, client: ClientInformation) -> None: ...


class _Contents(msgspec.Struct, kw_only=True):
    credentials: dict[str, dict[str, Credentials]] = {}
    clients: dict[str, ClientInformation] = {}


class MemoryTokenStore:
    """A :class:`TokenStore` in memory."""

    def __init__(self) -> None:
        self._data = _Contents()

    def load(self, issuer: str, resource: str) -> Credentials | None:
        return self._data.credentials.get(issuer, {}).get(resource)

    def save(self, credentials: Credentials) -> None:
        self._data.credentials.setdefault(credentials.issuer, {})[credentials.resource] = credentials
        self._changed()

    def delete(self, issuer: str, resource: str) -> None:
        if self._data.credentials.get(issuer, {}).pop(resource, None) is not None:
            self._changed()

    def client(self, issuer: str) -> ClientInformation | None:
        return self._data.clients.get(issuer)

    def save_client(self, issuer: str, client: ClientInformation) -> None:
        self._data.clients[issuer] = client
        self._changed()

    def _changed(self) -> None:
        pass


class FileTokenStore(MemoryTokenStore):
    """A :class:`TokenStore` in one JSON file readable by its owner only (mode 0600).

    The file is read once, at construction (a missing file is an empty store; an unreadable
    one raises), and rewritten whole on every change through a temporary file and a rename.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__()
        self.path = Path(path)
        if self.path.exists():
            self._data = msgspec.json.decode(self.path.read_bytes(), type=_Contents)

    def _changed(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(prefix=".tokens-", dir=self.path.parent)  # created 0600
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(msgspec.json.encode(self._data))
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
