"""The knowledge base: recipes/ loaded into typed, validated objects."""

from __future__ import annotations

from mlcc.kb.loader import load, recipes_root
from mlcc.kb.model import KnowledgeBase

__all__ = ["KnowledgeBase", "load", "recipes_root"]
