"""The ``mcpwire`` command: ``commands`` (the parser and the client commands), ``terminal`` (its input and
output), and one module per command group: ``serve``, ``workers``, ``keys``, ``oauth``, ``redis``,
``probe``, ``fuzz``. May import every other package; nothing imports it."""

from __future__ import annotations

from .commands import CliError, load_app, main

__all__ = ["CliError", "load_app", "main"]
