"""``mcpwire fuzz``: ``runner`` (the public entry points, shrinking, replay), ``cases`` (what is sent),
``oracle`` (what a request demands of its answer), ``strategies`` (hypothesis strategies for MCP
traffic). Requests go through ``..rawwire``; answers are judged by ``..judge``; each failure is a
``..verdict.Finding``."""
