"""A minimal Django project for the WSGI tests: a page of its own at ``/``, and the MCP endpoint
as a view at ``/mcp`` (``mcpwire_adapters.serve.wsgi.django_view``), beside Django's usual
middleware (CSRF, sessions, security)."""
