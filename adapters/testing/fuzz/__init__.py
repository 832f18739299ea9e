"""``mcpwire fuzz``: ``runner`` (the public entry points, the run, replay), ``cases`` (what is sent)
and ``era_cases`` (what is sent on an initialize-era session), ``oracle`` (what a request demands
of its answer) and ``era_oracle`` (the same, in an initialize-era revision), ``reading`` (what both
oracles read from a request), ``shrink`` (the fewest steps of a failing case that still fail),
``strategies`` (hypothesis strategies for MCP traffic). Requests go through ``..rawwire``; answers
are judged by ``..demand`` with the rules of ``..judge``; each finding is a ``..verdict.Finding``."""
