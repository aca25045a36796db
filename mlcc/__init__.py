"""mlcc: the Machine Learning Container Creator.

Data flows one way: recipes (YAML) -> validated knowledge base (:mod:`mlcc.kb`) ->
resolver (:mod:`mlcc.resolve`) -> an immutable :class:`~mlcc.resolve.stack.Stack` ->
renderers -> builders -> registry -> inspect / verify.
"""

from __future__ import annotations

__version__ = "0.1.0"
