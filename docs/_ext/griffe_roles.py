"""A griffe extension for the API reference: Sphinx cross-reference roles as code spans.

The docstrings cross-reference with Sphinx roles (``:class:`Keyring```, ``:meth:`~Server.close```),
which Markdown would print as they stand. This turns each into a code span of the target's name
(the last component only when it starts with ``~``, as Sphinx shows it). Loaded by mkdocs.yml;
only the rendered text changes, never the code.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|data|const|mod|exc|obj):`!?(~?)([^`]+)`")


def _span(match: re.Match[str]) -> str:
    target = match.group(2)
    if match.group(1):
        target = target.rsplit(".", 1)[-1]
    return f"`{target}`"


class SphinxRoles(griffe.Extension):
    """Rewrite ``:role:`target``` to ```target``` in every docstring."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        _rewrite(obj)

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        _rewrite(pkg)  # a top-level package is not passed to on_object


def _rewrite(obj: griffe.Object) -> None:
    if obj.docstring is not None:
        obj.docstring.value = _ROLE.sub(_span, obj.docstring.value)
