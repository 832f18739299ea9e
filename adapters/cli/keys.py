"""``mcpwire keys``: make and rotate the key file the processes of one server share
(``mcpwire serve --keys FILE``; docs/deployment.md)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import mcpwire

from .terminal import EXIT_OK, EXIT_USAGE, CliError, Terminal
from ..state.keys import ENV, add_key, drop_key, load_keyring, make_current, new_keyring, write_keyring

__all__ = ["keys", "serving_keyring"]


def keys(args: argparse.Namespace, term: Terminal) -> int:
    """``keys new FILE``, ``keys add FILE ID [--current]``, ``keys current FILE ID``, ``keys drop FILE ID``,
    ``keys show FILE``: each prints the key ids and which is current, never a key."""
    path = Path(args.file)
    try:
        if args.action == "new":
            if path.exists():
                raise CliError(f"{path} exists: rotate it with `mcpwire keys add`", EXIT_USAGE)
            keyring = new_keyring(args.id or "k1")
        else:
            keyring = load_keyring(path)
            if args.action == "add":
                keyring = add_key(keyring, _key_id(args), current=args.current)
            elif args.action == "current":
                keyring = make_current(keyring, _key_id(args))
            elif args.action == "drop":
                keyring = drop_key(keyring, _key_id(args))
        if args.action != "show":
            write_keyring(keyring, path)
    except mcpwire.LocalProtocolError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    term.out(f"{path}: keys {', '.join(keyring.key_ids)}; current {keyring.current}")
    return EXIT_OK


def _key_id(args: argparse.Namespace) -> str:
    if not args.id:
        raise CliError(f"keys {args.action} needs a key id", EXIT_USAGE)
    return str(args.id)


def serving_keyring(path: str | None) -> mcpwire.Keyring | None:
    """The keyring ``mcpwire serve`` signs with: the file given with ``--keys``, else the
    document in ``MCPWIRE_KEYS`` if set, else ``None`` (the App's own: random, one process)."""
    if path is None and not os.environ.get(ENV):
        return None
    try:
        return load_keyring(path)
    except mcpwire.LocalProtocolError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
