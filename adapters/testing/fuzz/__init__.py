"""``mcpwire fuzz``: ``runner`` (the public entry points, the run, replay), ``cases`` (what is sent),
``oracle`` (what a request demands of its answer), ``shrink`` (the fewest steps of a failing case
that still fail), ``strategies`` (hypothesis strategies for MCP traffic). Requests go through
``..rawwire``; answers are judged by ``..demand`` with the rules of ``..judge``; each finding is a
``..verdict.Finding``."""
