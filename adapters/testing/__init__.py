"""Tools that test other MCP software, and what they share:

- ``rawwire`` (raw HTTP requests and replies, builders of well-formed requests, the HTTP sender,
  pacing) and ``rawwire_stdio`` (the stdio sender: raw NDJSON exchanges with a server process);
- ``judge`` (the one judge: every rule a conforming answer keeps, for both tools);
- ``verdict`` (what both report: one outcome type, one finding type);
- ``probe/`` (named checks of the wire rules, and the pytest plugin) and ``fuzz/`` (generated
  traffic, shrunk and replayable).

Imports ``client``, ``oauth`` and the core."""
