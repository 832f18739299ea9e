"""Tools that test other MCP software, and what they share:

- ``rawwire`` (raw HTTP requests and replies, builders of well-formed requests, the HTTP sender,
  pacing), ``rawwire_stdio`` (the stdio sender: raw NDJSON exchanges with a server process) and
  ``rawwire_sse`` (event streams read as they arrive, and the HTTP+SSE transport of 2024-11-05);
  ``era_wire`` (what a client of the initialize era sends: initialize, its sessions' headers);
- ``judge`` (the one judge: every rule a conforming answer keeps, for both tools, and the table
  of rules with the strength of each, read from the official text it quotes; ``era_rules`` holds
  its rows of the initialize-era revisions, one per revision); ``demand`` (what a fuzzed request
  demands of its answer: the fuzzer's half of the judge); ``shapes`` (the shapes of the answers
  the probe's checks look into);
- ``verdict`` (what both report: strengths, rules broken, one outcome type, one finding type);
- ``probe/`` (named checks of the wire rules, and the pytest plugin) and ``fuzz/`` (generated
  traffic, shrunk and replayable).

Imports ``client``, ``oauth`` and the core."""
