"""The stack manifest stamped into every image: OCI labels and /etc/mlcc/stack.json.

``stack.json`` is :class:`mlcc.stackfile.document.StackManifest` (format 2), the one
definition its readers share. It is a build input,
so it cannot hold the digest of the build inputs; that digest is the ``io.mlcc.digest``
label, computed over everything else (see :mod:`mlcc.render.digest`).
"""

from __future__ import annotations

import json
import os
import time
from typing import Any, Callable, Dict, Optional, Tuple

import mlcc
from mlcc.errors import UsageError
from mlcc.kb.model import CudaRelease, Family, LibBuild, PinnedPackage
from mlcc.render import canonical_json
from mlcc.render.mirror import MIRROR_VAR, mirrored
from mlcc.resolve.stack import Choice, Stack
from mlcc.stackfile.document import (
    MANIFEST_FORMAT,
    BaseRecord,
    BenchmarkRecord,
    ChoiceRecord,
    Components,
    CudaRecord,
    ExtendedEnvRecord,
    Fetches,
    FrameworkRecord,
    GccRecord,
    Generator,
    LibraryRecord,
    PythonRecord,
    SourceRecord,
    StackManifest,
)

# The conda environment a conda-installed framework lives in; its bin/ comes first on PATH,
# so its Python is the one that runs the benchmark.
CONDA_ENV = "/opt/mlcc/conda"
DIGEST_LABEL = "io.mlcc.digest"
# Stands in for the digest while the digest is computed (see mlcc.render.digest).
DIGEST_PLACEHOLDER = "sha256:" + "0" * 64


def labels(stack: Stack) -> Tuple[Tuple[str, str], ...]:
    """OCI annotations plus io.mlcc.* labels for each component, sorted by name."""
    bench = stack.benchmark
    source = bench.build.source if bench.build else None
    variant = stack.variant
    found: Dict[str, str] = {
        "org.opencontainers.image.title": f"mlcc {bench.name}",
        "org.opencontainers.image.description": bench.title,
        "org.opencontainers.image.version": variant,
        "org.opencontainers.image.base.name": stack.base.ref,
        "org.opencontainers.image.vendor": "mlcc",
        "io.mlcc.version": mlcc.__version__,
        "io.mlcc.benchmark": bench.name,
        "io.mlcc.variant": variant,
        "io.mlcc.arch": stack.arch.name,
        "io.mlcc.base": stack.base.name,
        "io.mlcc.accelerator": stack.accelerator,
        "io.mlcc.gcc": stack.gcc.version,
        DIGEST_LABEL: DIGEST_PLACEHOLDER,
    }
    if source is not None:
        found["org.opencontainers.image.source"] = source.repository
        found["org.opencontainers.image.revision"] = source.commit
    created = _created()
    if created:
        found["org.opencontainers.image.created"] = created
    optional = {
        "io.mlcc.cuda": stack.cuda.version if stack.cuda else None,
        "io.mlcc.cudnn": _confirmed_version(stack.cudnn),
        "io.mlcc.nccl": _confirmed_version(stack.nccl),
        "io.mlcc.python": stack.python.version if stack.python else None,
        "io.mlcc.framework": stack.framework.framework if stack.framework else None,
        "io.mlcc.framework.version": stack.framework.version if stack.framework else None,
        "io.mlcc.framework.variant": stack.framework.variant if stack.framework else None,
        "io.mlcc.driver.min": stack.driver_min,
        "io.mlcc.flavour": stack.flavour,
        # an image base that already holds them (NGC): the build installed none of these
        "io.mlcc.base.provides": ",".join(stack.from_base) or None,
    }
    found.update({k: v for k, v in optional.items() if v is not None})
    return tuple(sorted(found.items()))


def _confirmed_version(lib: Optional[LibBuild]) -> Optional[str]:
    """A library's version as a label claims it: none when no source names it (a framework
    brings its own copy of unknown version). A label is read as a fact by whoever filters
    images on it; stack.json says why it is missing (the choice's reason)."""
    return lib.version if lib is not None and lib.confirmed else None


def _created() -> Optional[str]:
    """Only from SOURCE_DATE_EPOCH: a wall-clock time would make output differ per run."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch is None or epoch == "":
        return None
    # time.strftime gives the same text as datetime would for 1970..9999
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(source_date_epoch(epoch)))


# 9999-12-31T23:59:59Z: the last moment a four-digit year (and so the label) can name.
_LAST_EPOCH = 253402300799


def source_date_epoch(text: str) -> int:
    """SOURCE_DATE_EPOCH as the spec defines it: a non-negative whole number of seconds.

    Anything else is the user's mistake, reported, not silently ignored: a build would
    otherwise lose its timestamp without anyone noticing.
    """

    value = text.strip()
    if (
        not value.isascii()
        or not value.isdigit()
        or len(value) > len(str(_LAST_EPOCH))
        or int(value) > _LAST_EPOCH
    ):
        raise UsageError(
            f"SOURCE_DATE_EPOCH={text[:40]!r} is not a time mlcc can stamp",
            hint=f"a whole number of seconds since 1970-01-01 UTC, 0 to {_LAST_EPOCH}, "
            "e.g. SOURCE_DATE_EPOCH=$(git log -1 --format=%ct); or unset it",
        )
    return int(value)


def pinned(family: Family, packages: Tuple[PinnedPackage, ...]) -> Tuple[str, ...]:
    """``packages`` as the family's package manager spells them pinned."""
    return tuple([family.pin(p) for p in packages])


def cuda_packages(cuda: CudaRelease, family: Family, arch: str) -> Tuple[PinnedPackage, ...]:
    """The packages of ``cuda`` a base of ``family`` installs on ``arch``."""
    return cuda.packages_for(family, arch)


def image_cuda_packages(stack: Stack) -> Tuple[PinnedPackage, ...]:
    """The CUDA packages the stack's image holds: the runtime list in a runtime image."""
    cuda = stack.cuda
    assert cuda is not None
    family = stack.base.packaging
    if stack.runtime:
        runtime = cuda.runtime_packages_for(family, stack.arch.name)
        if runtime is not None:  # the resolver makes no runtime stack without one
            return runtime
    return cuda_packages(cuda, family, stack.arch.name)


def image_library_packages(stack: Stack, lib: LibBuild) -> Tuple[PinnedPackage, ...]:
    """A cuDNN or NCCL build's packages in the stack's image: no -devel in a runtime image."""
    family = stack.base.packaging
    return tuple(p for p in lib.packages if not (stack.runtime and family.is_devel(p.name)))


def image_python_packages(stack: Stack) -> Tuple[str, ...]:
    """The base's Python packages in the stack's image: no -devel in a runtime image."""
    python = stack.python
    assert python is not None
    family = stack.base.packaging
    return tuple(p for p in python.packages if not (stack.runtime and family.is_devel(p)))


def benchmark_python(stack: Stack) -> Optional[str]:
    """The interpreter that runs the benchmark, as stack.json names it.

    A conda-installed framework brings its own Python (``conda create ... python=X.Y``), and
    the environment's bin/ comes first on PATH: that interpreter, not the base image's, runs
    the benchmark. Otherwise the benchmark runs in a virtual environment made from the base
    image's interpreter, whose ``python`` is a link to it. Both are named by the file itself
    (``pythonX.Y``), the path mlcc-record finds when it resolves the ``python`` on PATH.
    """
    python = stack.python
    if python is None:
        return None
    if stack.framework is not None and stack.framework.install.method == "conda":
        return f"{CONDA_ENV}/bin/python{python.version}"
    return python.executable


def base_contents(stack: Stack) -> Tuple[Tuple[str, str], ...]:
    """What an image base holds, as its record says, by name (empty for a plain base)."""
    contents = stack.base.contents
    if contents is None:
        return ()
    found = {
        "release": contents.release,
        "os": contents.os,
        "python": contents.python,
        "cuda": contents.cuda,
        "cudnn": contents.cudnn,
        "nccl": contents.nccl,
        **{f.name: f.version for f in contents.frameworks},
    }
    optional = {"cublas": contents.cublas, "dali": contents.dali, "tensorrt": contents.tensorrt}
    found.update({k: v for k, v in optional.items() if v is not None})
    return tuple(sorted(found.items()))


def _lib(lib: Optional[LibBuild], stack: Stack, fetch: Callable[[str], str]) -> Optional[LibraryRecord]:
    if lib is None:
        return None
    return LibraryRecord(
        version=lib.version,
        method=lib.method,
        packages=pinned(stack.base.packaging, image_library_packages(stack, lib)),
        url=fetch(lib.url) if lib.url else None,
        for_cuda=lib.cuda,
        replaced=lib.replaced,
    )


def stack_manifest(stack: Stack, *, base_image: str, mirror: str, fetches: Fetches) -> StackManifest:
    """The resolved stack as /etc/mlcc/stack.json (see :mod:`mlcc.stackfile.document`).

    ``components`` says what is installed (URLs as the build fetches them, through the
    mirror); ``choices`` says why each was chosen and from which sourced fact;
    ``fetches`` (the plan's, see :mod:`mlcc.render.fetches`) how every fetched byte is pinned.
    """

    def fetch(url: str) -> str:
        return mirrored(url, stack.download_host).replace(MIRROR_VAR, mirror)

    return StackManifest(
        format=MANIFEST_FORMAT,
        generator=Generator(name="mlcc", version=mlcc.__version__),
        benchmark=_benchmark_record(stack),
        variant=stack.variant,
        arch=stack.arch.name,
        accelerator=stack.accelerator,
        base=BaseRecord(
            name=stack.base.name,
            image=base_image,
            default_image=stack.base.ref,
            provides=stack.from_base,
            contents=base_contents(stack),
        ),
        mirror=mirror,
        components=_components(stack, fetch),
        reference=stack.reference,
        verified=stack.verified,
        choices=tuple([_choice_record(c) for c in stack.choices]),
        fetches=fetches,
        flavour=stack.flavour,
    )


def _components(stack: Stack, fetch: Callable[[str], str]) -> Components:
    """What the image installs, component by component (None: not in this stack)."""
    cuda = stack.cuda
    python = stack.python
    return Components(
        cuda=(
            CudaRecord(
                version=cuda.version,
                packages=pinned(stack.base.packaging, image_cuda_packages(stack)),
                min_driver=cuda.min_driver,
            )
            if cuda
            else None
        ),
        cudnn=_lib(stack.cudnn, stack, fetch),
        nccl=_lib(stack.nccl, stack, fetch),
        python=(
            PythonRecord(
                python.version, image_python_packages(stack), benchmark_python(stack) or python.executable
            )
            if python
            else None
        ),
        gcc=GccRecord(
            version=stack.gcc.version, toolset=stack.gcc.toolset.name if stack.gcc.toolset else None
        ),
        framework=_framework_record(stack),
    )


def _framework_record(stack: Stack) -> Optional[FrameworkRecord]:
    """The framework the image installs, how, and what it brings of its own."""
    fw = stack.framework
    if fw is None:
        return None
    return FrameworkRecord(
        name=fw.framework,
        # set whenever a framework is (the resolver takes it from the framework's recipe)
        module=stack.framework_module or fw.framework,
        version=fw.version,
        variant=fw.variant,
        install=fw.install.method,
        cuda=tuple(fw.cuda),
        packages=tuple(fw.install.packages),
        # what the build brings and loads itself (a conda channel's cudatoolkit, cudnn)
        loads=tuple(sorted(dict(fw.bundles).items())),
    )


def _benchmark_record(stack: Stack) -> BenchmarkRecord:
    """The benchmark, its source commit and the base variables it extends."""
    bench = stack.benchmark
    source = bench.build.source if bench.build else None
    return BenchmarkRecord(
        name=bench.name,
        title=bench.title,
        suite=bench.suite,
        source=SourceRecord(source.repository, source.commit, source.path) if source else None,
        incomplete=bench.incomplete,
        extends_env=tuple(
            ExtendedEnvRecord(ext.name, ext.prepend, ext.append)
            for ext in (bench.build.env_extensions if bench.build else ())
        ),
    )


def _choice_record(choice: Choice) -> ChoiceRecord:
    """Why the resolver chose a component, as stack.json records it."""
    return ChoiceRecord(
        choice.component,
        choice.version,
        choice.reason,
        choice.origin,
        tuple(choice.sources),
        choice.verified,
        tuple(choice.unverified_fields),
    )


def stack_document(stack: Stack, *, base_image: str, mirror: str, fetches: Fetches) -> Dict[str, Any]:
    """:func:`stack_manifest` JSON-ready, as the build stamps it."""
    return stack_manifest(stack, base_image=base_image, mirror=mirror, fetches=fetches).to_json()


def stack_text(stack: Stack, *, base_image: str, mirror: str, fetches: Fetches) -> str:
    """The bytes of stack.json: :func:`dumps` of :func:`stack_document`."""
    return dumps(stack_document(stack, base_image=base_image, mirror=mirror, fetches=fetches))


def dumps(document: Dict[str, Any]) -> str:
    """Canonical JSON: sorted keys, two-space indent, trailing newline."""
    return canonical_json.dumps(document) + "\n"


def with_base_digest(stack_json: str, digest: str) -> str:
    """A rendered stack.json naming the base manifest the build pulls.

    Args:
        stack_json: The rendered ``stack.json`` text.
        digest: The base image's manifest digest (``sha256:...``).

    Returns:
        The same document with ``base.digest`` set, in mlcc's canonical JSON.
    """
    return canonical_json.dumps(StackManifest.of(json.loads(stack_json)).with_base_digest(digest).to_json())
