"""Property suites and coverage-guided harnesses for mcpwire; see fuzz/README.md.

Modules: ``targets`` (the server, client and catalog every suite drives), ``host`` (answering
exchanges the way a host may), ``drive`` (one input end to end), ``invariants`` (what a
documented outcome of mcpwire's own engines is), ``jsontext`` (JSON text with duplicate keys
and raw literals), ``strategies`` (hypothesis strategies), ``bounds`` (time and example
budgets), ``findings`` (known open bugs), ``make_corpus`` (the seeds), and the ``atheris_*``
harnesses. Nothing here is imported by ``mcpwire``.
"""
