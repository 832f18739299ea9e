"""Tools that test other MCP software: ``rawwire_stdio`` (raw NDJSON exchanges with a server process),
``probe/`` (named checks of the wire rules, and the pytest plugin), ``fuzz/`` (generated traffic, shrunk
and replayable). Imports ``client``, ``oauth`` and the core."""
