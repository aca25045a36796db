"""`mlcc gen`: resolve, render, and write variant folders (one stack or the published set)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import List, NamedTuple, Optional, Sequence, Tuple

from mlcc.errors import StaleError, UsageError
from mlcc.kb.model import KnowledgeBase
from mlcc.matrix import Outcome, evaluate, expand, load_matrix
from mlcc.output import Change, compare_tree, write_tree
from mlcc.render import DEFAULT_OPTIONS, Options, Rendered, render
from mlcc.resolve import Stack

# registry[:port]/path[:tag][@sha256:digest]; no shell metacharacters can pass.
_IMAGE_REF = re.compile(
    r"^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)+"
    r"(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[0-9a-f]{64})?$"
)
_MIRROR = re.compile(r"^https?://[A-Za-z0-9.-]+(:[0-9]+)?(/[A-Za-z0-9._~/-]*)?$")


class Generated(NamedTuple):
    rendered: Rendered
    folder: str  # <benchmark>/<variant>

    def files(self) -> List[Tuple[str, str]]:
        return [(f"{self.folder}/{name}", content) for name, content in self.rendered.files]


def check_options(base_image: Optional[str], mirror: Optional[str]) -> Options:
    if base_image is not None and not _IMAGE_REF.match(base_image):
        raise UsageError(
            f"--base-image: {base_image!r} is not an image reference",
            hint="registry/namespace/name:tag, e.g. registry.example.com/mirror/ubi8:8.10",
        )
    if base_image is not None and ":" not in base_image.rsplit("/", 1)[1] and "@" not in base_image:
        raise UsageError(f"--base-image: {base_image!r} names no tag; pin one (never latest)")
    if base_image is not None and base_image.endswith(":latest"):
        raise UsageError(f"--base-image: {base_image!r} uses latest; pin a release tag or a digest")
    if mirror is not None and not _MIRROR.match(mirror):
        raise UsageError(
            f"--mirror: {mirror!r} is not an http(s) URL",
            hint="the URL that replaces https://developer.download.nvidia.com, e.g. https://mirror.example.com/nvidia",
        )
    return Options(base_image=base_image, mirror=mirror.rstrip("/") if mirror else None)


def generate(
    kb: KnowledgeBase, stack: Stack, *, fmt: str = "dockerfile", options: Options = DEFAULT_OPTIONS
) -> Generated:
    return Generated(render(stack, kb, fmt=fmt, options=options), f"{stack.benchmark.name}/{stack.variant}")


def write(root: Path, generated: Sequence[Generated]) -> List[Change]:
    files = [item for g in generated for item in g.files()]
    return write_tree(root, files, prune=[g.folder for g in generated])


def published(kb: KnowledgeBase) -> List[Outcome]:
    return evaluate(kb, expand(load_matrix(kb)))


def generate_all(
    kb: KnowledgeBase, *, fmt: str = "dockerfile", options: Options = DEFAULT_OPTIONS
) -> List[Generated]:
    return [generate(kb, o.stack, fmt=fmt, options=options) for o in published(kb) if o.published and o.stack]


def write_all(root: Path, generated: Sequence[Generated]) -> List[Change]:
    """Write the published set and remove variant folders the set no longer has."""
    changes = write(root, generated)
    keep = {g.folder for g in generated}
    benchmarks = {g.folder.split("/")[0] for g in generated}
    for bench in sorted(benchmarks):
        directory = root / bench
        for folder in sorted(p for p in directory.iterdir() if p.is_dir()):
            rel = f"{bench}/{folder.name}"
            if rel not in keep:
                for path in sorted(folder.rglob("*"), reverse=True):
                    if path.is_dir():
                        path.rmdir()
                    else:
                        path.unlink()
                        changes.append(Change(path, "removed"))
                folder.rmdir()
    return changes


def check_all(root: Path, generated: Sequence[Generated]) -> None:
    """Raise StaleError listing every difference between disk and a fresh rendering."""
    files = [item for g in generated for item in g.files()]
    benchmarks = sorted({g.folder.split("/")[0] for g in generated})
    problems = compare_tree(root, files, folders=benchmarks)
    if problems:
        raise StaleError(
            f"{len(problems)} generated file(s) under {root} differ from the recipes",
            details=problems[:40] + ([f"... and {len(problems) - 40} more"] if len(problems) > 40 else []),
            hint="run `mlcc gen --all` and commit the result",
        )
