"""The Django project's WSGI application (``django_site``), as ``manage.py startproject`` writes
it, and ``wsgi``, the :class:`WsgiApp` its ``/mcp`` view serves (for the servers' shutdown hooks)."""

from __future__ import annotations

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "django_site.settings")

from django.core.wsgi import get_wsgi_application  # type: ignore[import-untyped]  # noqa: E402

application = get_wsgi_application()

from django_site.urls import wsgi  # noqa: E402  (after Django is set up)

__all__ = ["application", "wsgi"]
