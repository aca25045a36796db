"""The knowledge base's maintainer tools: what keeps ``recipes/`` honest, not what a user runs.

- :mod:`mlcc.kbtools.check`: ``mlcc kb check``, every pin against the package index
- :mod:`mlcc.kbtools.bundles`, :mod:`mlcc.kbtools.wheels`: what a framework wheel brings
  and links, against the recipe's claims
- :mod:`mlcc.kbtools.offline`: the records ``--record`` keeps, and the same judgement from
  them without a network (``mlcc lint recipes``)
- :mod:`mlcc.kbtools.lock`: ``mlcc kb lock``, the hash-locked pip installs

:mod:`mlcc.app` (the user-facing API) imports none of them (tests/unit/test_imports.py).
"""

from __future__ import annotations
