"""How big an image is, where a node pays for it: the compressed bytes it pulls, the
uncompressed bytes it unpacks, and the layers that make most of either.

Where each figure comes from:

- compressed: the image manifest's ``size`` of the config and of every layer blob, as the
  registry serves them (what a node pulls). Known for an image in a registry, and for a
  build once it is pushed.
- uncompressed: the engine's own layer history for an image in its storage (``podman
  history`` for buildah and podman, which share containers-storage; ``docker history``),
  or the layer blobs of an archive whose layers are plain tar. A registry does not record
  it, so for an image read only from a registry it is unknown rather than estimated.
- the instruction that made a layer: the image config's ``history`` entries that are not
  ``empty_layer``, in order, one per layer (the OCI image spec's rule), or the engine's
  history line.

Figures are whole bytes; :func:`human` renders them in binary units for the terminal.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from mlcc.image import untrusted
from mlcc.validate import count

LARGEST = 3  # layers shown by `mlcc build` and `mlcc inspect`
MAX_INSTRUCTION = 200  # characters of a layer's instruction kept: a RUN line can be pages long


class LayerSize(NamedTuple):
    """One layer: its sizes where known, and the instruction that made it."""

    compressed: Optional[int]
    uncompressed: Optional[int]
    instruction: str

    @property
    def weight(self) -> int:
        """The size layers are ranked by: uncompressed where known, else compressed."""
        return self.uncompressed if self.uncompressed is not None else (self.compressed or 0)


class ImageSizes(NamedTuple):
    """An image's total sizes (None: not known from where it was read) and its layers."""

    compressed: Optional[int]
    uncompressed: Optional[int]
    layers: Tuple[LayerSize, ...] = ()
    # How layers meet history entries, so that two sources' layers pair up: from a manifest,
    # each layer's index in the config's history and that history's length; from an engine,
    # the size of every history entry (0 for one that made no layer).
    layer_entries: Tuple[int, ...] = ()
    history_length: int = 0
    entry_sizes: Tuple[int, ...] = ()

    def largest(self, count: int = LARGEST) -> Tuple[LayerSize, ...]:
        """The ``count`` heaviest layers, heaviest first (ties keep the build order).

        Args:
            count: How many.

        Returns:
            At most ``count`` layers.
        """
        ranked = sorted(enumerate(self.layers), key=lambda pair: (-pair[1].weight, pair[0]))
        return tuple(layer for _, layer in ranked[:count])

    def document(self) -> Dict[str, Any]:
        """JSON-ready: totals in bytes and the largest layers.

        Returns:
            ``compressed``, ``uncompressed`` (bytes or null), ``layers`` (the count) and
            ``largest_layers`` (``compressed``, ``uncompressed``, ``instruction``).
        """
        return {
            "compressed": self.compressed,
            "uncompressed": self.uncompressed,
            "layers": len(self.layers),
            "largest_layers": [layer._asdict() for layer in self.largest()],
        }


def instructions(config: Dict[str, Any]) -> List[Tuple[int, str]]:
    """The history index and instruction of each layer, from an image config's history.

    Args:
        config: The image config (untrusted JSON).

    Returns:
        One ``(index in the history, instruction)`` per history entry that made a layer,
        in build order (empty when the config has no usable history).
    """
    found = []
    for index, entry in enumerate(_history(config)):
        if entry.get("empty_layer") is True:
            continue
        made_by = entry.get("created_by")
        found.append((index, _instruction(made_by if isinstance(made_by, str) else "")))
    return found


def from_manifest(manifest: Dict[str, Any], config: Dict[str, Any], *, compressed: bool = True) -> ImageSizes:
    """Sizes from an image manifest and its config.

    Args:
        manifest: The image manifest (untrusted JSON): its ``config`` and ``layers``
            descriptors carry the blob sizes.
        config: The image config, for the instruction of each layer.
        compressed: Whether the layer blobs are compressed (a registry's, an OCI layout's
            gzip layers) or plain tar (a docker-archive's), whose size is the uncompressed one.

    Returns:
        The sizes; the total the blobs do not give is None.
    """
    descriptors = [untrusted.as_object(layer) for layer in _list(manifest.get("layers"))]
    made_by = instructions(config)
    matched = len(made_by) == len(descriptors)
    if not matched:
        made_by = [(-1, "")] * len(descriptors)  # a history that does not match its layers names none
    layers = []
    for descriptor, (_, instruction) in zip(descriptors, made_by):
        size = untrusted.size(descriptor.get("size"))
        layers.append(LayerSize(size if compressed else None, None if compressed else size, instruction))
    # a layer without a size makes the total unknown, never a total that counts it as 0
    total = untrusted.total(untrusted.size(layer.get("size")) for layer in descriptors)
    entries = tuple(index for index, _ in made_by) if matched else ()
    length = len(_history(config)) if matched else 0
    if compressed:
        config_size = untrusted.size(untrusted.as_object(manifest.get("config")).get("size"))
        return ImageSizes(untrusted.total([total, config_size]) or None, None, tuple(layers), entries, length)
    return ImageSizes(None, total or None, tuple(layers), entries, length)


def from_engine_history(text: str) -> Optional[ImageSizes]:
    """Uncompressed sizes from ``podman history --format json`` or ``docker history
    --no-trunc --format '{{json .}}'`` output (one JSON array, or one object per line).

    Args:
        text: The engine's output.

    Returns:
        The sizes (uncompressed only), or None when the output is not a history, is empty
        (an image has at least one entry: no answer is unknown, not ``0 B``), or gives a
        size that is missing, negative or beyond 2^63-1.
    """
    entries = _history_entries(text)
    if not entries:
        return None
    layers: List[LayerSize] = []
    sizes: List[int] = []
    for entry in reversed(entries):  # engines list the newest layer first
        size = _int(entry.get("size", entry.get("Size")))
        if size is None:
            return None
        sizes.append(size)
        made_by = entry.get("CreatedBy", entry.get("createdBy", ""))
        if size > 0:
            layers.append(LayerSize(None, size, _instruction(made_by if isinstance(made_by, str) else "")))
    total = untrusted.total(sizes)
    if total is None:
        return None
    return ImageSizes(None, total, tuple(layers), entry_sizes=tuple(sizes), history_length=len(sizes))


def combined(registry: Optional[ImageSizes], engine: Optional[ImageSizes]) -> Optional[ImageSizes]:
    """The registry's compressed figures beside the engine's uncompressed ones.

    Layers are paired through the config's history: the engine lists one size per history
    entry, the manifest's layers name theirs; when the two histories differ in length, by
    position when both list the same number of layers; otherwise each side's totals are
    kept and the layers come from the registry.

    Args:
        registry: Sizes read from the pushed manifest, if pushed.
        engine: Sizes from the engine's history, if it gave them.

    Returns:
        The merged sizes, or None when neither is known.
    """
    if registry is None or engine is None:
        return registry or engine
    layers = registry.layers
    if registry.layer_entries and registry.history_length == len(engine.entry_sizes):
        layers = tuple(
            pushed._replace(uncompressed=engine.entry_sizes[index])
            for pushed, index in zip(registry.layers, registry.layer_entries)
        )
    elif len(registry.layers) == len(engine.layers):
        layers = tuple(
            LayerSize(pushed.compressed, local.uncompressed, pushed.instruction or local.instruction)
            for pushed, local in zip(registry.layers, engine.layers)
        )
    return registry._replace(uncompressed=engine.uncompressed, layers=layers)


def human(size: Optional[int]) -> str:
    """``1.4 GiB``-style text for a byte count; ``?`` when unknown.

    Args:
        size: Bytes, or None.

    Returns:
        The text.
    """
    if size is None:
        return "?"
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"  # unreachable: the loop returns at GiB


def summary_line(sizes: Optional[ImageSizes]) -> str:
    """``2.1 GiB compressed, 5.8 GiB uncompressed`` (unknown figures left out).

    Args:
        sizes: The image's sizes, or None.

    Returns:
        The line, or ``size unknown``.
    """
    if sizes is None or (sizes.compressed is None and sizes.uncompressed is None):
        return "size unknown"
    parts = []
    if sizes.compressed is not None:
        parts.append(f"{human(sizes.compressed)} compressed")
    if sizes.uncompressed is not None:
        parts.append(f"{human(sizes.uncompressed)} uncompressed")
    return ", ".join(parts)


def layer_lines(sizes: ImageSizes) -> List[str]:
    """One line per largest layer: ``1.2 GiB compressed, 3.4 GiB uncompressed: RUN ...``.

    The instruction is the image's own text: print the lines through
    :func:`mlcc.ui.safe_text.echo`, which escapes control characters.

    Args:
        sizes: The image's sizes.

    Returns:
        The lines, heaviest layer first.
    """
    lines = []
    for layer in sizes.largest():
        figures = ", ".join(
            f"{human(value)} {what}"
            for value, what in ((layer.compressed, "compressed"), (layer.uncompressed, "uncompressed"))
            if value is not None
        )
        lines.append(f"{figures}: {layer.instruction or '(no instruction recorded)'}")
    return lines


def _instruction(text: str) -> str:
    one_line = " ".join(text.split()).removeprefix("/bin/sh -c #(nop) ")
    return one_line if len(one_line) <= MAX_INSTRUCTION else one_line[: MAX_INSTRUCTION - 1] + "…"


def _history_entries(text: str) -> Optional[List[Dict[str, Any]]]:
    stripped = text.strip()
    if not stripped:
        return []
    try:
        if stripped.startswith("["):
            loaded = json.loads(stripped)
            values: Sequence[Any] = loaded if isinstance(loaded, list) else []
        else:
            values = [json.loads(line) for line in stripped.splitlines() if line.strip()]
    except (ValueError, RecursionError):
        return None
    entries = [value for value in values if isinstance(value, dict)]
    return entries if len(entries) == len(values) else None


def _int(value: Any) -> Optional[int]:
    """A size an engine gives as a number or, docker with --human=false, as digits."""
    if isinstance(value, str):
        return count(value)
    return untrusted.size(value)


def _history(config: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [untrusted.as_object(entry) for entry in _list(config.get("history"))]


def _list(value: Any) -> List[Any]:
    return value if isinstance(value, list) else []
