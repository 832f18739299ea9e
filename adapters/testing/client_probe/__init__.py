"""Tools that test MCP *clients* (``mcpwire probe --client``, ``mcpwire fuzz --client``): a
hostile server the client under test talks to, and the judge of what the client sent.

- ``script`` (an answer as data: :class:`~.script.Answer`, its markers, its JSON form) and
  ``scenarios`` (the scenarios, each a revision and rows of answers);
- ``hostile`` (the server's decisions, sans-IO: a request in, a plan and a record out) and
  ``oauth`` (the OAuth scenarios' resource metadata and authorization server, sans-IO);
- ``http_listener`` (the trio + h11 listener on 127.0.0.1) and ``stdio_server`` (the process a
  client starts itself); ``browser`` (the stand-in for a person at the browser);
- ``process`` (running the client: a deadline, its process group, output, memory);
- ``rules`` (every rule a client is held to, with its strength, sentence and page), ``traffic``
  (the rules on what the client sent) and ``checks`` (each scenario's own checks, robustness,
  the verdict on a run);
- ``runner`` (a run, the probe, the replay files), ``report`` (text and JSON), ``fuzzing``
  (hypothesis mutations of the answers, shrunk findings).

Imports the testing floor's ``rawwire`` and ``verdict``; no server driver (``serve``) and no
command line (``cli``).
"""
