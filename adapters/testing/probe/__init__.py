"""``mcpwire probe``: ``runner`` (the public entry points and the reports), ``dialect`` (what a
server negotiates: revisions and transport), ``checks`` (what a check is, and the target it runs
against), ``table`` (every check: 2026-07-28's rows, then the initialize era's), ``exact_ids``
(the check that every id comes back exactly), ``eras_apart`` (the 2026-07-28 checks that must tell
the eras apart), ``era_channel`` (one initialize-era conversation, whatever the transport),
``era_checks`` (the initialize era's checks every transport shares), ``era_http`` (Streamable
HTTP's sessions, headers and streams), ``auth_checks`` (a server that asks for authorization),
``legacy_checks`` (2024-11-05's HTTP+SSE), ``era_stdio`` (stdio's framing), ``pytest_plugin`` (the
checks as pytest tests). Requests go through ``..rawwire``; replies are judged by ``..judge``; each
check gives a ``..verdict.Finding``."""
