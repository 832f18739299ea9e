"""Streamable HTTP as a WSGI application (PEP 3333), for gunicorn, waitress, uWSGI, Flask and
Django: ``app`` (:class:`WsgiApp`: a request's head, body and answer between the WSGI thread
and the engine), ``environ`` (what a WSGI environ says, and what ``start_response`` takes),
``pipe`` (one response from the event loop to its WSGI thread, bounded), ``loop`` (the App's
event loop in a thread of its own: the one module here that makes threads or touches asyncio)
and ``django_view`` (the app as a Django view). docs/wsgi.md says how to deploy it."""

from .app import ResponseAbandoned, WsgiApp, WsgiConfig, wsgi_app
from .django_view import django_view

__all__ = ["ResponseAbandoned", "WsgiApp", "WsgiConfig", "django_view", "wsgi_app"]
