"""A :class:`~mcpwire_adapters.serve.wsgi.app.WsgiApp` as a Django view: :func:`django_view`.

Django routes a URL to a view, and its middleware runs around it; the view hands the
request's WSGI environ (``request.environ``, with the body not yet read) to the WSGI app and
turns what it answers into a Django response: a complete answer into an ``HttpResponse``, an
event stream into a ``StreamingHttpResponse`` over the app's own iterable (Django closes it
when the response ends, so a client that leaves cancels the handler). The view is exempt from
CSRF checks (an MCP client sends no CSRF token; the engine checks Origin and Host instead)
and must stay so: ``CsrfViewMiddleware`` would otherwise read the body as a form.

The engine sees Django's ``PATH_INFO``, the path below the site's ``SCRIPT_NAME``: the App's
``HttpPolicy(path=...)`` is the view's URL (``path("mcp", view)`` serves ``/mcp``, the
default). Django is imported when the view is made, not before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .app import WsgiApp

__all__ = ["django_view"]


def django_view(wsgi: WsgiApp) -> Callable[[Any], Any]:
    """A Django view serving ``wsgi`` (module docstring): ``path("mcp", django_view(WsgiApp(mcp)))``."""
    from django.http import HttpResponse, StreamingHttpResponse  # type: ignore[import-untyped]
    from django.views.decorators.csrf import csrf_exempt  # type: ignore[import-untyped]

    def view(request: Any) -> Any:
        started: list[Any] = []

        def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable[[bytes], object]:
            started[:] = [int(status.split(" ", 1)[0]), headers]
            return _no_write

        body = wsgi(request.environ, start_response)
        status, headers = started
        response = (
            HttpResponse(b"".join(body), status=status) if isinstance(body, list)
            else StreamingHttpResponse(body, status=status)
        )
        for name, value in headers:
            response[name] = value
        return response

    return csrf_exempt(view)  # type: ignore[no-any-return]


def _no_write(data: bytes) -> object:
    raise RuntimeError("mcpwire's WSGI app never uses the write() callable")
