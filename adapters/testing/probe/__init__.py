"""``mcpwire probe``: ``runner`` (the public entry points and reports), ``checks`` (what a conforming
answer is), ``table`` (the 2026-07-28 checks), ``era_checks`` (the initialize-era checks),
``pytest_plugin`` (the checks as pytest tests)."""
