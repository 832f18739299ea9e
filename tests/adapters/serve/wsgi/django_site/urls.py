"""``/``: a page of the site's own; ``/api/items``: a POST that CSRF protects; ``/mcp``: the MCP endpoint."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse  # type: ignore[import-untyped]
from django.urls import path  # type: ignore[import-untyped]
from site_app import build_app, config

from mcpwire_adapters import WsgiApp
from mcpwire_adapters.serve.wsgi import django_view


def home(request: Any) -> Any:
    return HttpResponse("the Django home page")


def items(request: Any) -> Any:
    return HttpResponse("created")


wsgi = WsgiApp(build_app(path="/mcp"), config=config())
urlpatterns = [path("", home), path("api/items", items), path("mcp", django_view(wsgi))]
