"""MLPerf training results: parse result logs, score them, keep them with the image's stack.

- :mod:`mlcc.results.parse`: a streaming parser for ``:::MLL`` (v0.6+) and ``:::MLPv0.5.0``
  lines amid arbitrary training output, in bounded memory.
- :mod:`mlcc.results.score`: time to train per run and the MLPerf score per benchmark.
- :mod:`mlcc.results.store`: the ``results`` table of the history database.
- :mod:`mlcc.results.compare`: stacks side by side with the published reference.
"""
