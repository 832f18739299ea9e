"""``mcpwire probe``: ``runner`` (the public entry points and the reports), ``checks`` (what a
check is, and the target it runs against), ``table`` (the 2026-07-28 checks), ``exact_ids`` (the
check that every id comes back exactly), ``era_checks`` (the initialize-era checks, and those
that must tell the eras apart), ``pytest_plugin`` (the checks as pytest tests). Requests go
through ``..rawwire``; replies are judged by ``..judge``; each check gives a ``..verdict.Finding``."""
