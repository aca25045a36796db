"""The resolver: a benchmark and the user's pins in, one immutable Stack (or a conflict) out."""

from __future__ import annotations

from mlcc.resolve.engine import Resolver
from mlcc.resolve.request import Request, build_request
from mlcc.resolve.stack import Stack

__all__ = ["Request", "Resolver", "Stack", "build_request"]
