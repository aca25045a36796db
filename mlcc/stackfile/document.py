"""The stack manifest (``/etc/mlcc/stack.json``, format 2) as frozen typed classes.

Named tuples: immutable, typed, and several times cheaper to build than frozen
dataclasses (the writer builds some 25 records for every rendered variant).
``to_json()`` gives the JSON-ready document the writer stamps into an image (the bytes are
the canonical JSON of it, see :mod:`mlcc.render.manifest`); ``StackManifest.from_json``
reads one back from outside -- an image, a file -- after checking it against
``stack.schema.json``, so a reader never meets a missing key or a wrong type: a document
mlcc did not write is a clear error naming where it differs.

Optional records are written as ``null`` (they are part of the schema's shape); the two
optional keys (``base.digest``, set at build time, and ``framework.loads``) are left out
when empty, as the writer always did.

Formats: 1 (mlcc up to the sbom release) and 2, which adds ``fetches``: how every byte the
build fetched was pinned (each download's sha256 or the recipe's reason none exists, each
git checkout's commit, each pip install's hash lock or why it has none, each conda
install's specs and why they name no build). Images in registries keep the format they
were built with, so every reader accepts both; ``fetches`` is ``None`` for format 1, never
guessed from the rest of an old document.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, NamedTuple, Optional, Tuple

from mlcc.errors import DriftError, MlccError

SCHEMA_FILE = Path(__file__).with_name("stack.schema.json")
# The format mlcc writes, and the ones its readers accept (old images carry format 1).
MANIFEST_FORMAT = 2
READABLE_FORMATS = (1, 2)
if TYPE_CHECKING:
    Json = Dict[str, Any]
    Strings = Tuple[str, ...]
    Pairs = Tuple[Tuple[str, str], ...]  # a JSON object of strings, sorted by key


def _pairs(mapping: Dict[str, str]) -> Pairs:
    return tuple(sorted(mapping.items()))


class Generator(NamedTuple):
    name: str
    version: str

    def to_json(self) -> Json:
        return {"name": self.name, "version": self.version}

    @classmethod
    def of(cls, data: Json) -> Generator:
        return cls(data["name"], data["version"])


class SourceRecord(NamedTuple):
    """The benchmark's code: a repository at a commit, and the folder in it."""

    repository: str
    commit: str
    path: Optional[str]

    def to_json(self) -> Json:
        return {"repository": self.repository, "commit": self.commit, "path": self.path}

    @classmethod
    def of(cls, data: Json) -> SourceRecord:
        return cls(data["repository"], data["commit"], data["path"])


class ExtendedEnvRecord(NamedTuple):
    """A variable the image extends rather than sets: the folders its ENV puts before and
    after the value the base image gives it (the recipe's ``env: {PATH: {prepend: [...]}}``)."""

    name: str
    prepend: Strings = ()
    append: Strings = ()

    def to_json(self) -> Json:
        return {"name": self.name, "prepend": list(self.prepend), "append": list(self.append)}

    @classmethod
    def of(cls, data: Json) -> ExtendedEnvRecord:
        return cls(data["name"], tuple(data["prepend"]), tuple(data["append"]))


class BenchmarkRecord(NamedTuple):
    name: str
    title: str
    suite: str
    source: Optional[SourceRecord]
    # The recipe's reason the image does not yet run the benchmark, when it says INCOMPLETE;
    # written only then, so a complete benchmark's stack.json is as it was
    incomplete: Optional[str] = None
    # The variables the benchmark's environment extends, in the recipe's order; written only
    # when there are some, so every other stack.json is as it was
    extends_env: Tuple[ExtendedEnvRecord, ...] = ()

    def to_json(self) -> Json:
        source = self.source.to_json() if self.source else None
        found: Json = {"name": self.name, "title": self.title, "suite": self.suite, "source": source}
        if self.incomplete is not None:
            found["incomplete"] = self.incomplete
        if self.extends_env:
            found["extends_env"] = [record.to_json() for record in self.extends_env]
        return found

    @classmethod
    def of(cls, data: Json) -> BenchmarkRecord:
        source = SourceRecord.of(data["source"]) if data["source"] is not None else None
        extends = tuple(ExtendedEnvRecord.of(item) for item in data.get("extends_env", ()))
        return cls(data["name"], data["title"], data["suite"], source, data.get("incomplete"), extends)


class BaseRecord(NamedTuple):
    name: str
    image: str  # what the build pulls (a mirror given by --base-image, or the default)
    default_image: str
    digest: Optional[str] = None  # the manifest the build pulled, set at build time
    # An image base that already holds a stack (NGC): the components the build installs none
    # of, and what the base's record says it holds (release, CUDA, cuDNN, NCCL, frameworks);
    # written only for such a base, so every other stack.json is as it was
    provides: Strings = ()
    contents: Pairs = ()

    def to_json(self) -> Json:
        found: Json = {"name": self.name, "image": self.image, "default_image": self.default_image}
        if self.digest is not None:
            found["digest"] = self.digest
        if self.provides:
            found["provides"] = list(self.provides)
            found["contents"] = dict(self.contents)
        return found

    @classmethod
    def of(cls, data: Json) -> BaseRecord:
        return cls(
            data["name"],
            data["image"],
            data["default_image"],
            data.get("digest"),
            tuple(data.get("provides", ())),
            _pairs(data.get("contents", {})),
        )


class CudaRecord(NamedTuple):
    version: str
    packages: Strings  # pinned in the base family's syntax
    min_driver: str

    def to_json(self) -> Json:
        return {"version": self.version, "packages": list(self.packages), "min_driver": self.min_driver}

    @classmethod
    def of(cls, data: Json) -> CudaRecord:
        return cls(data["version"], tuple(data["packages"]), data["min_driver"])


class LibraryRecord(NamedTuple):
    """cuDNN or NCCL: installed from packages, a tarball, bundled with the framework, held by
    an image base, or built from source by a build step over the base's (``replaced``)."""

    version: str
    method: str  # rpm | deb | tarball | bundled | base | source
    packages: Strings
    url: Optional[str]  # as the build fetches it (through the mirror)
    for_cuda: str
    # the image base's own version that a build step replaced (or "unconfirmed") by this one,
    # built from source (method "source") or installed from packages (rpm | deb)
    replaced: Optional[str] = None

    def to_json(self) -> Json:
        return {
            "version": self.version,
            "method": self.method,
            "packages": list(self.packages),
            "url": self.url,
            "for_cuda": self.for_cuda,
            **({"replaced": self.replaced} if self.replaced is not None else {}),
        }

    @classmethod
    def of(cls, data: Json) -> LibraryRecord:
        return cls(
            data["version"],
            data["method"],
            tuple(data["packages"]),
            data["url"],
            data["for_cuda"],
            data.get("replaced"),
        )


class PythonRecord(NamedTuple):
    version: str
    packages: Strings
    executable: str

    def to_json(self) -> Json:
        return {"version": self.version, "packages": list(self.packages), "executable": self.executable}

    @classmethod
    def of(cls, data: Json) -> PythonRecord:
        return cls(data["version"], tuple(data["packages"]), data["executable"])


class GccRecord(NamedTuple):
    version: str
    toolset: Optional[str]

    def to_json(self) -> Json:
        return {"version": self.version, "toolset": self.toolset}

    @classmethod
    def of(cls, data: Json) -> GccRecord:
        return cls(data["version"], data["toolset"])


class FrameworkRecord(NamedTuple):
    name: str
    module: str  # what Python imports (torch, tensorflow, mxnet)
    version: str
    variant: str
    install: str  # pip | conda | source
    cuda: Strings  # the CUDA lines the build was made for
    packages: Strings
    loads: Pairs = ()  # what the build brings and loads itself (cuda_runtime, cudnn, nccl)

    def to_json(self) -> Json:
        found: Json = {
            "name": self.name,
            "module": self.module,
            "version": self.version,
            "variant": self.variant,
            "install": self.install,
            "cuda": list(self.cuda),
            "packages": list(self.packages),
        }
        if self.loads:
            found["loads"] = dict(self.loads)
        return found

    @classmethod
    def of(cls, data: Json) -> FrameworkRecord:
        return cls(
            data["name"],
            data["module"],
            data["version"],
            data["variant"],
            data["install"],
            tuple(data["cuda"]),
            tuple(data["packages"]),
            _pairs(data.get("loads") or {}),
        )


def _optional(record: Any) -> Optional[Json]:
    return record.to_json() if record is not None else None


class Components(NamedTuple):
    """What is installed; ``None`` for what this stack has none of (a CPU stack's CUDA)."""

    cuda: Optional[CudaRecord]
    cudnn: Optional[LibraryRecord]
    nccl: Optional[LibraryRecord]
    python: Optional[PythonRecord]
    gcc: GccRecord
    framework: Optional[FrameworkRecord]

    def to_json(self) -> Json:
        return {
            "cuda": _optional(self.cuda),
            "cudnn": _optional(self.cudnn),
            "nccl": _optional(self.nccl),
            "python": _optional(self.python),
            "gcc": self.gcc.to_json(),
            "framework": _optional(self.framework),
        }

    @classmethod
    def of(cls, data: Json) -> Components:
        def record(kind: Callable[[Json], Any], key: str) -> Any:
            return kind(data[key]) if data[key] is not None else None

        return cls(
            record(CudaRecord.of, "cuda"),
            record(LibraryRecord.of, "cudnn"),
            record(LibraryRecord.of, "nccl"),
            record(PythonRecord.of, "python"),
            GccRecord.of(data["gcc"]),
            record(FrameworkRecord.of, "framework"),
        )


class ChoiceRecord(NamedTuple):
    """Why a component was chosen, and from which sourced fact."""

    component: str
    version: Optional[str]
    reason: str
    origin: str  # recipes/<file>:<line>
    sources: Strings
    verified: bool
    unverified_fields: Strings

    def to_json(self) -> Json:
        return {
            "component": self.component,
            "version": self.version,
            "reason": self.reason,
            "origin": self.origin,
            "sources": list(self.sources),
            "verified": self.verified,
            "unverified_fields": list(self.unverified_fields),
        }

    @classmethod
    def of(cls, data: Json) -> ChoiceRecord:
        return cls(
            data["component"],
            data["version"],
            data["reason"],
            data["origin"],
            tuple(data["sources"]),
            data["verified"],
            tuple(data["unverified_fields"]),
        )


# ----------------------------------------------------------------------------- fetches (format 2)


class DownloadRecord(NamedTuple):
    """A file the build fetches by URL, and what pins its bytes."""

    name: str  # cudnn | nccl | miniforge | nvidia-key:<repository>
    url: str  # as the build fetches it (each mirror build arg at its generated default)
    sha256: Optional[str]  # the sourced sha256 the build checks; None: the reason is below
    sha256_unavailable: Optional[str]  # the recipe's reason no sourced sha256 exists
    checksum_url: Optional[str]  # a checksum file fetched beside it and checked (not a pin)

    def to_json(self) -> Json:
        return {
            "name": self.name,
            "url": self.url,
            "sha256": self.sha256,
            "sha256_unavailable": self.sha256_unavailable,
            "checksum_url": self.checksum_url,
        }

    @classmethod
    def of(cls, data: Json) -> DownloadRecord:
        return cls(
            data["name"], data["url"], data["sha256"], data["sha256_unavailable"], data["checksum_url"]
        )


class GitRecord(NamedTuple):
    """A git checkout: a repository at a commit the build proves HEAD to be."""

    name: str  # what it is: source:<benchmark>, framework:<name>, the step's folder, pip:<name>
    repository: str  # as the build fetches it
    commit: str  # the full SHA; a short hash only with ``commit_unresolved``
    commit_unresolved: Optional[str]  # the recipe's reason the commit is a short hash

    def to_json(self) -> Json:
        return {
            "name": self.name,
            "repository": self.repository,
            "commit": self.commit,
            "commit_unresolved": self.commit_unresolved,
        }

    @classmethod
    def of(cls, data: Json) -> GitRecord:
        return cls(data["name"], data["repository"], data["commit"], data["commit_unresolved"])


class PipPackageRecord(NamedTuple):
    """One file of a hash-locked pip install: pip takes exactly these bytes or fails."""

    name: str
    version: str
    file: Optional[str]
    sha256: Optional[str]  # None: a pin an earlier (VCS) install provides, installed, not fetched

    def to_json(self) -> Json:
        return {"name": self.name, "version": self.version, "file": self.file, "sha256": self.sha256}

    @classmethod
    def of(cls, data: Json) -> PipPackageRecord:
        return cls(data["name"], data["version"], data["file"], data["sha256"])


class PipRecord(NamedTuple):
    """One ``pip install`` of the build, in build order."""

    lock: str  # its id in the lock file (chained after the pip install before it)
    lock_file: str  # recipes/locks/pip-py<X>-<arch>-glibc<Y>.json
    environment: str  # venv | conda
    requirements: Strings  # as asked (URLs as the build fetches them)
    packages: Tuple[PipPackageRecord, ...]  # what --require-hashes installs; () when unlocked
    unlocked: Optional[str]  # why it is not hash-locked; None: it is

    def to_json(self) -> Json:
        return {
            "lock": self.lock,
            "lock_file": self.lock_file,
            "environment": self.environment,
            "requirements": list(self.requirements),
            "packages": [p.to_json() for p in self.packages],
            "unlocked": self.unlocked,
        }

    @classmethod
    def of(cls, data: Json) -> PipRecord:
        return cls(
            data["lock"],
            data["lock_file"],
            data["environment"],
            tuple(data["requirements"]),
            tuple(PipPackageRecord.of(p) for p in data["packages"]),
            data["unlocked"],
        )


class CondaRecord(NamedTuple):
    """One ``conda create``: packages by spec, which conda pins by version, not by bytes."""

    channels: Strings  # as the build fetches them, in order
    packages: Strings  # the specs asked for (name=version[=build])
    unbuilt: Strings  # the specs that name no build
    builds_unavailable: Optional[str]  # the recipe's reason they name none

    def to_json(self) -> Json:
        return {
            "channels": list(self.channels),
            "packages": list(self.packages),
            "unbuilt": list(self.unbuilt),
            "builds_unavailable": self.builds_unavailable,
        }

    @classmethod
    def of(cls, data: Json) -> CondaRecord:
        return cls(
            tuple(data["channels"]),
            tuple(data["packages"]),
            tuple(data["unbuilt"]),
            data["builds_unavailable"],
        )


class Fetches(NamedTuple):
    """Every fetch of the build, by kind, each in build order. Packages of the base's
    package manager (the CUDA, cuDNN and NCCL rpm/deb pins in ``components``) are pinned by
    version and by the repository's signature, not listed here."""

    downloads: Tuple[DownloadRecord, ...]
    git: Tuple[GitRecord, ...]
    pip: Tuple[PipRecord, ...]
    conda: Tuple[CondaRecord, ...]

    def to_json(self) -> Json:
        return {
            "downloads": [d.to_json() for d in self.downloads],
            "git": [g.to_json() for g in self.git],
            "pip": [p.to_json() for p in self.pip],
            "conda": [c.to_json() for c in self.conda],
        }

    @classmethod
    def of(cls, data: Json) -> Fetches:
        return cls(
            tuple(DownloadRecord.of(d) for d in data["downloads"]),
            tuple(GitRecord.of(g) for g in data["git"]),
            tuple(PipRecord.of(p) for p in data["pip"]),
            tuple(CondaRecord.of(c) for c in data["conda"]),
        )


class StackManifest(NamedTuple):
    """The whole document."""

    format: int
    generator: Generator
    benchmark: BenchmarkRecord
    variant: str
    arch: str
    accelerator: str  # cuda | cpu
    base: BaseRecord
    mirror: str
    components: Components
    reference: bool
    verified: bool
    choices: Tuple[ChoiceRecord, ...]
    fetches: Optional[Fetches] = None  # format 2 always has it, format 1 never
    # component -> the version a request pinned it to: images built before the manifest
    # said what the stack is whatever the request carry it; mlcc writes none (the request
    # is no part of the image, and two requests for one stack build one image).
    pins: Pairs = ()
    # runtime: a multi-stage image whose final stage carries what runs; documents written
    # before flavours existed are devel images (the key is absent in them)
    flavour: str = "devel"

    def to_json(self) -> Json:
        found: Json = {
            "format": self.format,
            "generator": self.generator.to_json(),
            "benchmark": self.benchmark.to_json(),
            "variant": self.variant,
            "arch": self.arch,
            "accelerator": self.accelerator,
            "base": self.base.to_json(),
            "mirror": self.mirror,
            "components": self.components.to_json(),
            "reference": self.reference,
            "verified": self.verified,
            "choices": [c.to_json() for c in self.choices],
        }
        found["flavour"] = self.flavour
        if self.pins:
            found["pins"] = dict(self.pins)
        if self.fetches is not None:
            found["fetches"] = self.fetches.to_json()
        return found

    @classmethod
    def from_json(
        cls, data: Any, what: str = "stack.json", error: Callable[[str], MlccError] = DriftError
    ) -> StackManifest:
        """A document from outside (an image, a file), checked against the schema first."""
        problem = problem_of(data)
        if problem is not None:
            raise error(f"{what} is not a stack manifest mlcc wrote: {problem}")
        return cls.of(data)

    @classmethod
    def of(cls, data: Json) -> StackManifest:
        """A document already checked (:func:`problem_of`), or one mlcc itself wrote."""
        return cls(
            data["format"],
            Generator.of(data["generator"]),
            BenchmarkRecord.of(data["benchmark"]),
            data["variant"],
            data["arch"],
            data["accelerator"],
            BaseRecord.of(data["base"]),
            data["mirror"],
            Components.of(data["components"]),
            data["reference"],
            data["verified"],
            tuple(ChoiceRecord.of(c) for c in data["choices"]),
            Fetches.of(data["fetches"]) if "fetches" in data else None,
            _pairs(data.get("pins", {})),
            data.get("flavour", "devel"),
        )

    def with_base_digest(self, digest: str) -> StackManifest:
        """The document as the build stamps it: naming the base manifest it pulled."""
        return self._replace(base=self.base._replace(digest=digest))


def records() -> Iterator[type]:
    """Every class of the document (for the test that keeps them and the schema in step)."""
    yield from (
        StackManifest,
        Generator,
        BenchmarkRecord,
        SourceRecord,
        BaseRecord,
        Components,
        CudaRecord,
        LibraryRecord,
        PythonRecord,
        GccRecord,
        FrameworkRecord,
        ChoiceRecord,
        Fetches,
        DownloadRecord,
        GitRecord,
        PipRecord,
        PipPackageRecord,
        CondaRecord,
    )


# ----------------------------------------------------------------------------- the schema


def _ecma_pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    """``pattern`` as ECMA-262 (and so JSON Schema) reads it: ``$`` is the end of the
    string. Python's ``$`` also matches before a final newline: "x86_64\\n" would pass
    ``^[A-Za-z0-9._-]+$`` and carry a line break from an image into a terminal or a file."""
    if not isinstance(instance, str):
        return
    anchored = pattern[:-1] + r"\Z" if pattern.endswith("$") and not pattern.endswith("\\$") else pattern
    if re.search(anchored, instance) is None:
        from jsonschema.exceptions import ValidationError

        yield ValidationError(f"{instance[:80]!r} does not match {pattern!r}")


@lru_cache(maxsize=1)
def _validator() -> Any:
    # jsonschema only when a document is read: the writer, on every mlcc gen, never needs it
    from jsonschema import Draft202012Validator, validators

    extended = validators.extend(Draft202012Validator, {"pattern": _ecma_pattern})
    return extended(json.loads(SCHEMA_FILE.read_text(encoding="utf-8")))


def problem_of(data: Any) -> Optional[str]:
    """Why ``data`` is not a stack manifest mlcc wrote (where, and what), or None."""
    if not isinstance(data, dict):
        return "not a JSON object"
    error = next(iter(_validator().iter_errors(data)), None)
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "(top)"
    return f"{where}: {error.message[:160]}"
