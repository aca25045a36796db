"""mlcc's use cases: the one home of what the CLI (and any script) can ask mlcc to do.

- :mod:`mlcc.app.kb`: load the knowledge base, list it, resolve a stack
- :mod:`mlcc.app.generate`: render and write variant folders
- :mod:`mlcc.app.published_set`: the published set (gen --all): rendered, written, checked
- :mod:`mlcc.app.select`: interactive selection of a stack from menus that resolve
- :mod:`mlcc.app.matrix`: the published matrix, resolved and filtered
- :mod:`mlcc.app.build`: build one image, several arches or the matrix on any engine
- :mod:`mlcc.app.images`: inspect, diff and verify images
- :mod:`mlcc.app.lint`, :mod:`mlcc.app.report`, :mod:`mlcc.app.history`

The pins every command takes are one type, :class:`mlcc.resolve.pins.Pins` (the core's
matrix uses it too). This package imports none of its modules, so that a command pays only
for the use case it runs; :mod:`mlcc.api` gathers them all in one namespace.
"""

from __future__ import annotations
