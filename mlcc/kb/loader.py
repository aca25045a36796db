"""Load ``recipes/`` into a validated :class:`~mlcc.kb.model.KnowledgeBase`.

Cold path (:mod:`mlcc.kb.build`): parse every YAML file keeping line numbers, validate it
against its JSON Schema, check cross-references, build the typed model. Warm path (here):
the same model unpickled from a per-user cache, so a CLI call skips YAML parsing and
schema validation.

The cache key is the name, size, times and inode of every recipe, schema and model-code
file plus mlcc's version: stat calls only, so a warm start reads no recipe.
"""

from __future__ import annotations

import contextlib
import os
import pickle
from hashlib import sha256
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

import mlcc
from mlcc.errors import RecipeError, UsageError
from mlcc.kb.layout import FOLDERS, OTHER_FILES, ROUND_FOLDER, ROUND_SCRIPTS, SCHEMA_DIR, SINGLE_FILES
from mlcc.kb.model import KnowledgeBase
from mlcc.kb.pip_locks import LOCK_DIR, lock_file_names

PICKLE_PROTOCOL = 5  # pickle.HIGHEST_PROTOCOL since Python 3.8; fixed, so a newer Python reads it

RECIPES_ENV = "MLCC_RECIPES"
CACHE_ENV = "MLCC_CACHE_DIR"
# The folder of the code that defines and builds the cached model (see cache_key).
_KB_CODE = os.path.dirname(os.path.abspath(__file__))

if TYPE_CHECKING:
    RecipeFile = Tuple[str, str]  # (path relative to the recipes folder, kind)


def recipes_root(explicit: Optional[str] = None) -> str:
    """The recipes folder: ``--recipes``, ``$MLCC_RECIPES``, the installed copy, or the
    checkout's ``recipes/``."""
    chosen = explicit or os.environ.get(RECIPES_ENV)
    if chosen:
        if not os.path.isdir(chosen):
            raise UsageError(f"recipes folder {chosen!r} does not exist")
        return chosen
    package_dir = os.path.dirname(mlcc.__file__)
    for candidate in (
        os.path.join(package_dir, "_recipes"),
        os.path.join(os.path.dirname(package_dir), "recipes"),
    ):
        if os.path.isfile(os.path.join(candidate, "cuda.yaml")):
            return candidate
    raise UsageError("cannot find the recipes folder", hint=f"pass --recipes DIR or set {RECIPES_ENV}")


def load(root: Optional[str] = None, *, use_cache: bool = True) -> KnowledgeBase:
    root = str(root) if root is not None else recipes_root()
    files = recipe_files(root)
    cache = _cache_path(_stat_key(root, files)) if use_cache else None
    if cache is not None:
        cached = _read_cache(cache)
        if cached is not None:
            return cached
    # The cold path (YAML, JSON Schemas, cross-checks) is imported only on a cache miss:
    # jsonschema alone costs more than a warm `mlcc resolve`. The one import mlcc makes
    # late besides the CLI's command table (tests/unit/test_imports.py names it).
    from mlcc.kb.build import build
    from mlcc.kb.share import shared

    kb = shared(build(root, files))  # equal values as one object: a cache half the size
    if cache is not None:
        _write_cache(cache, kb)
    return kb


def recipe_files(root: str) -> List[RecipeFile]:
    """(relative path, kind) for every recipe file; unexpected YAML files are errors."""
    found: List[RecipeFile] = []
    for name, kind in SINGLE_FILES.items():
        if not os.path.isfile(os.path.join(root, name)):
            raise RecipeError(f"recipes/{name}", None, "missing", hint=f"looked in {root}")
        found.append((name, kind))
    expected = set(SINGLE_FILES) | set(OTHER_FILES)
    for folder, kind in FOLDERS.items():
        directory = os.path.join(root, folder)
        names = sorted(os.listdir(directory)) if os.path.isdir(directory) else []
        for name in names:
            if name.endswith((".yaml", ".yml")):
                found.append((f"{folder}/{name}", kind))
                expected.add(f"{folder}/{name}")
            elif kind == "benchmark" and ROUND_FOLDER.match(name) and os.path.isdir(f"{directory}/{name}"):
                for inner in sorted(os.listdir(f"{directory}/{name}")):
                    if inner.endswith((".yaml", ".yml")):
                        found.append((f"{folder}/{name}/{inner}", kind))
                        expected.add(f"{folder}/{name}/{inner}")
    for rel in _all_yaml(root):
        if rel not in expected:
            raise RecipeError(
                f"recipes/{rel}",
                None,
                "is not a recipe mlcc knows where to put",
                hint="single files: "
                + ", ".join(SINGLE_FILES)
                + "; folders: "
                + ", ".join(f"{f}/" for f in FOLDERS),
            )
    return found


def _helper_files(root: str) -> List[str]:
    """Scripts benchmarks ship beside their recipe (recipes/benchmarks/[<round>/]<name>.d/*) and
    the scripts the benchmarks of a folder share (recipes/benchmarks/[<round>/]scripts/*)."""
    top = os.path.join(root, "benchmarks")
    folders = [top]
    if os.path.isdir(top):
        folders += [os.path.join(top, n) for n in sorted(os.listdir(top)) if ROUND_FOLDER.match(n)]
    found: List[str] = []
    for folder in folders:
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            helper_dir = os.path.join(folder, name)
            shared = name == ROUND_SCRIPTS
            if (name.endswith(".d") or shared) and os.path.isdir(helper_dir):
                found += [os.path.join(helper_dir, f) for f in sorted(os.listdir(helper_dir))]
    return found


def _all_yaml(root: str) -> List[str]:
    found = []
    for directory, subdirs, names in os.walk(root):
        subdirs.sort()
        for name in sorted(names):
            if name.endswith((".yaml", ".yml")):
                found.append(os.path.relpath(os.path.join(directory, name), root).replace(os.sep, "/"))
    return found


def _stat_key(root: str, files: Sequence[RecipeFile]) -> str:
    parts = [f"mlcc {mlcc.__version__}", os.path.abspath(root)]
    paths = [os.path.join(root, rel) for rel, _ in files]
    paths += [os.path.join(root, f) for f in OTHER_FILES]
    paths += _helper_files(root)
    paths += [os.path.join(root, LOCK_DIR, name) for name in lock_file_names(root)]
    paths += sorted(os.path.join(SCHEMA_DIR, n) for n in os.listdir(SCHEMA_DIR))
    # the code that builds and defines the pickled model: a changed layout (an editable
    # install between two versions) must not unpickle a stale KnowledgeBase
    paths += sorted(os.path.join(_KB_CODE, n) for n in os.listdir(_KB_CODE) if n.endswith(".py"))
    for path in paths:
        try:
            info = os.stat(path)
        except FileNotFoundError:
            parts.append(f"{path}:-")
            continue
        # ctime and inode too: an edit that keeps size and mtime (a restored mtime, a
        # same-size rewrite within the clock's tick) still changes them; no user can set ctime
        parts.append(f"{path}:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}:{info.st_ino}")
    text = "\n".join(parts).encode()
    return sha256(text).hexdigest()[:16]


# ----------------------------------------------------------------------------- cache


def cache_dir() -> str:
    """mlcc's per-user cache folder (knowledge base, package index, build locks)."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return explicit
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(xdg, "mlcc")


def _cache_path(key: str) -> str:
    return os.path.join(cache_dir(), f"kb-{key}.pickle")


def trusted(path: str) -> bool:
    """True when only this user can have written ``path``.

    Unpickling runs code, so a cache entry counts only
    if this user owns it and nobody else can write it.
    """
    try:
        info = os.stat(path)
    except OSError:
        return False
    return not hasattr(os, "getuid") or (info.st_uid == os.getuid() and not info.st_mode & 0o022)


def _read_cache(path: str) -> Optional[KnowledgeBase]:
    if not trusted(path):
        return None
    try:
        with open(path, "rb") as handle:
            kb = pickle.load(handle)
    except Exception:  # a truncated or stale cache is rebuilt, never fatal
        return None
    return kb if isinstance(kb, KnowledgeBase) else None


def _write_cache(path: str, kb: KnowledgeBase) -> None:
    # imported here: only a cache miss writes, and tempfile brings shutil and random
    import tempfile

    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".kb-", suffix=".tmp", dir=os.path.dirname(path))
        try:
            with os.fdopen(fd, "wb") as handle:
                pickle.dump(kb, handle, protocol=PICKLE_PROTOCOL)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        _prune(os.path.dirname(path), keep=8)
    except OSError:
        return  # a read-only home only costs speed


def _prune(directory: str, keep: int) -> None:
    """Keep the newest few caches: each recipe edit writes a new one."""
    entries = [e for e in os.scandir(directory) if e.name.startswith("kb-") and e.name.endswith(".pickle")]
    entries.sort(key=lambda e: e.stat().st_mtime_ns, reverse=True)
    for entry in entries[keep:]:
        with contextlib.suppress(OSError):
            os.unlink(entry.path)
