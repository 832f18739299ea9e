"""Property suites and coverage-guided harnesses for mcpwire; see fuzz/README.md.

Modules: ``targets`` (the server, client and catalog every suite drives), ``host`` (answering
exchanges the way a host may), ``oracles`` (what a documented outcome is), ``jsontext`` (JSON
text with duplicate keys and raw literals), ``strategies`` (hypothesis strategies), and the
``atheris_*`` harnesses. Nothing here is imported by ``mcpwire``.
"""
