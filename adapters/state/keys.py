"""The keys a server's processes share: the keyring that signs ``requestState`` and cursors,
loaded from a file or the environment, so that every process (workers, hosts behind a load
balancer) accepts what another issued (keys from configuration; docs/deployment.md).

The document is :meth:`mcpwire.Keyring.from_json`'s: ``{"current": "k2", "keys": {"k1":
"<base64url>", "k2": "<base64url>"}}``. :func:`new_keyring` makes one, :func:`add_key`, :func:`make_current` and
:func:`drop_key` rotate (the three steps of :class:`mcpwire.Keyring`), :func:`write_keyring` writes one (0600). A key file must be readable by
its owner only (mode 0600 or stricter): a group- or world-readable one is refused.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import stat
from pathlib import Path

import mcpwire

__all__ = ["ENV", "add_key", "drop_key", "load_keyring", "make_current", "new_keyring", "write_keyring"]

ENV = "MCPWIRE_KEYS"
"""The environment variable that may hold the keyring document itself (for platforms that pass
secrets as variables)."""


def load_keyring(path: str | os.PathLike[str] | None = None) -> mcpwire.Keyring:
    """The keyring in the file at ``path``, or (``None``) in the environment variable
    :data:`ENV`. :class:`mcpwire.LocalProtocolError` naming what is wrong (never a key)."""
    if path is None:
        document = os.environ.get(ENV)
        if not document:
            raise mcpwire.LocalProtocolError(f"no keyring: give a key file or set {ENV}")
        return mcpwire.Keyring.from_json(document)
    file = Path(path)
    try:
        mode = file.stat().st_mode
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise mcpwire.LocalProtocolError(
                f"key file {file} is readable by others (mode {stat.S_IMODE(mode):04o}): chmod 600 it")
        return mcpwire.Keyring.from_json(file.read_bytes())
    except OSError as exc:
        raise mcpwire.LocalProtocolError(f"cannot read key file {file}: {exc.strerror}") from None


def new_keyring(key_id: str = "k1") -> mcpwire.Keyring:
    """A keyring of one new random 256-bit key, current."""
    return mcpwire.Keyring.single(secrets.token_bytes(32), key_id)


def add_key(keyring: mcpwire.Keyring, key_id: str, *, current: bool = False) -> mcpwire.Keyring:
    """``keyring`` with a new random 256-bit key ``key_id`` (made current with ``current``):
    step 1 of a rotation without it, step 2 with it. LocalProtocolError when the id is taken."""
    if key_id in keyring.key_ids:
        raise mcpwire.LocalProtocolError(f"key id {key_id!r} is already in the keyring")
    document = json.loads(keyring.to_json())
    document["keys"][key_id] = base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()
    if current:
        document["current"] = key_id
    return mcpwire.Keyring.from_json(json.dumps(document))


def make_current(keyring: mcpwire.Keyring, key_id: str) -> mcpwire.Keyring:
    """``keyring`` signing with ``key_id`` from now on (step 2 of a rotation)."""
    if key_id not in keyring.key_ids:
        raise mcpwire.LocalProtocolError(f"key id {key_id!r} is not in the keyring")
    document = json.loads(keyring.to_json())
    document["current"] = key_id
    return mcpwire.Keyring.from_json(json.dumps(document))


def drop_key(keyring: mcpwire.Keyring, key_id: str) -> mcpwire.Keyring:
    """``keyring`` without ``key_id`` (step 3 of a rotation); the current key cannot be dropped."""
    if key_id == keyring.current:
        raise mcpwire.LocalProtocolError(f"key id {key_id!r} is the current key: make another current first")
    if key_id not in keyring.key_ids:
        raise mcpwire.LocalProtocolError(f"key id {key_id!r} is not in the keyring")
    document = json.loads(keyring.to_json())
    del document["keys"][key_id]
    return mcpwire.Keyring.from_json(json.dumps(document))


def write_keyring(keyring: mcpwire.Keyring, path: str | os.PathLike[str]) -> None:
    """Write ``keyring`` to ``path`` readable by its owner only (0600), replacing it atomically."""
    file = Path(path)
    temporary = file.with_name(f".{file.name}.{secrets.token_hex(4)}")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as out:
        out.write(keyring.to_json() + b"\n")
    os.replace(temporary, file)
