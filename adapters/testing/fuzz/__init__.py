"""``mcpwire fuzz``: ``runner`` (the public entry points, shrinking, replay), ``cases`` (what is sent),
``oracle`` (what the answers are judged by), ``strategies`` (hypothesis strategies for MCP traffic)."""
