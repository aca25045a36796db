"""`mlcc gen`: resolve, render, and write variant folders (the published set:
:mod:`mlcc.app.published_set`).

Two output roots: build files (Dockerfile or script or Apptainer definition, stack.json,
context files) under ``dockerfiles/<benchmark>/<variant>/`` and OpenShift objects under
``buildconfigs/<benchmark>/<variant>/`` plus one ``buildconfigs/<benchmark>/<benchmark>.yaml``
that builds every variant of the benchmark present.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Set, Tuple

from mlcc.errors import OutputError, UsageError
from mlcc.flags import flag
from mlcc.kb.model import CONDA, GIT, PYTORCH, WMLCE, HostMirror, KnowledgeBase
from mlcc.output import Change, check_writable, refuse_symlinks, write_tree
from mlcc.render import DEFAULT_OPTIONS, FORMATS, Options, Rendered, render
from mlcc.render.manifest import DIGEST_PLACEHOLDER
from mlcc.render.mirror import PIP_SETTINGS, PipSetting
from mlcc.render.openshift import BUILD_FILE, ClusterOptions, OpenShiftFiles, benchmark_list, render_openshift
from mlcc.resolve import Stack
from mlcc.resolve.request import Request
from mlcc.validate import path_flag

# registry[:port]/path[:tag][@sha256:digest]; no shell metacharacters can pass.
_IMAGE_REF = re.compile(
    r"^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)+"
    r"(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[0-9a-f]{64})?\Z"
)
_MIRROR = re.compile(r"^https?://[A-Za-z0-9.-]+(:([1-9][0-9]{0,4}))?(/[A-Za-z0-9._~/-]*)?\Z")
ONLY = ("dockerfile", "openshift")
INDEX, EXTRA_INDEX = PIP_SETTINGS


class Generated(NamedTuple):
    """One rendered variant: its build files and, when asked, its OpenShift objects."""

    rendered: Rendered
    folder: str  # <benchmark>/<variant>
    openshift: Optional[OpenShiftFiles] = None

    def files(self) -> List[Tuple[str, str]]:
        """The build files under the variant's folder.

        Returns:
            ``(<benchmark>/<variant>/<name>, content)`` pairs.
        """
        return [(f"{self.folder}/{name}", content) for name, content in self.rendered.files]


class Roots(NamedTuple):
    """Where each kind of output goes; None: not written."""

    build: Optional[Path]
    openshift: Optional[Path]


# where `mlcc gen` writes unless -o / --openshift-output say otherwise
DEFAULT_BUILD_ROOT = "dockerfiles"
DEFAULT_OPENSHIFT_ROOT = "buildconfigs"
# where the OpenShift objects go under -o DIR when --openshift-output is not given
OPENSHIFT_SUBFOLDER = "openshift"


@dataclass(frozen=True)
class OutputFlags:
    """Where ``mlcc gen`` writes, and which files: the click command reads these flags."""

    output: str = flag(
        "--output",
        "Write the build files into DIR/<benchmark>/<variant>/.",
        default=DEFAULT_BUILD_ROOT,
        metavar="DIR",
        show_default=True,
        short="-o",
    )
    openshift_output: Optional[str] = flag(
        "--openshift-output",
        "Write the OpenShift objects into DIR/<benchmark>/<variant>/ (default: buildconfigs, or"
        " DIR/openshift when -o DIR is given).",
        default=None,
        metavar="DIR",
    )
    only: Optional[str] = flag(
        "--only",
        "Write only the build files, or only the OpenShift objects.",
        default=None,
        choices=ONLY,
    )
    fmt: str = flag(
        "--format",
        "Dockerfile, a bash script for bare-metal installs, or an Apptainer definition "
        "(the last two write no OpenShift objects unless --only openshift).",
        default="dockerfile",
        choices=tuple(FORMATS),  # one module per format under mlcc/render/formats/
        show_default=True,
    )

    def roots(self) -> Roots:
        """The roots gen writes.

        Build files unless ``--only openshift``; OpenShift objects with ``--only openshift``, or
        by default for a Dockerfile (scripts and Apptainer files have none).

        Returns:
            The two roots, None for a kind not written.

        Raises:
            UsageError: ``-o`` or ``--openshift-output`` is empty or not a usable path.
        """
        openshift = self.only == "openshift" or (self.only is None and self.fmt == "dockerfile")
        return Roots(
            build=None if self.only == "openshift" else path_flag(self.output, "-o"),
            openshift=path_flag(self.openshift_root(), "--openshift-output") if openshift else None,
        )

    def openshift_root(self) -> str:
        """``--openshift-output``, else beside the build files: ``-o DIR`` places every
        output under DIR (the objects in DIR/openshift), the default -o keeps buildconfigs."""
        if self.openshift_output is not None:
            return self.openshift_output
        if self.output == DEFAULT_BUILD_ROOT:
            return DEFAULT_OPENSHIFT_ROOT
        return str(Path(self.output) / OPENSHIFT_SUBFOLDER)


def changes_document(roots: Roots, changes: Sequence[Change], *, variants: int) -> Dict[str, Any]:
    """``mlcc gen --json``: where each kind of output went and every file's status.

    Args:
        roots: Where each kind of output goes.
        changes: Each file written, updated, left unchanged or removed.
        variants: How many variants were generated (or checked).

    Returns:
        ``{"schema": "mlcc-gen/1", "roots": {"build", "openshift"}, "variants", "files":
        [{"path", "status"}]}``; a root not written is null.
    """
    return {
        "schema": "mlcc-gen/1",
        "roots": {
            "build": str(roots.build) if roots.build is not None else None,
            "openshift": str(roots.openshift) if roots.openshift is not None else None,
        },
        "variants": variants,
        "files": [{"path": str(c.path), "status": c.status} for c in changes],
    }


def roots_shown(roots: Roots) -> str:
    """The roots written, for messages.

    Args:
        roots: Where each kind of output goes.

    Returns:
        E.g. ``dockerfiles and buildconfigs``.
    """
    return " and ".join(str(r) for r in roots if r is not None)


def _host_flag(mirror: HostMirror) -> Any:
    """The option of one public host: its --help names the host and what it serves, both
    read from recipes/hosts.yaml when the help is shown."""

    def describe(kb: KnowledgeBase) -> str:
        host = kb.hosts[mirror.host]
        return f"Fetch {host.serves} from URL instead of {host.url} (also a build arg: {mirror.var})."

    fallback = (
        f"Fetch from URL what the {mirror.host!r} host of recipes/hosts.yaml serves"
        f" (also a build arg: {mirror.var})."
    )
    return flag(mirror.flag, fallback, default=None, metavar="URL", describe=describe)


def _nvidia_help(kb: KnowledgeBase) -> str:
    return (
        f"Fetch NVIDIA packages and files from URL instead of {kb.download_host}"
        " (also a build arg: NVIDIA_MIRROR)."
    )


def _pip_help(setting: PipSetting) -> str:
    return f"URL of {setting.what} (also a build arg: {setting.var}, which pip reads)."


@dataclass(frozen=True)
class SourceFlags:
    """Where a build fetches from: a mirrored base image, a mirror of NVIDIA's files."""

    base_image: Optional[str] = flag(
        "--base-image", "Build FROM this (mirrored) image instead of the base's.", default=None, metavar="REF"
    )
    mirror: Optional[str] = flag(
        "--mirror",
        "Fetch NVIDIA packages and files from URL instead of NVIDIA's download host"
        " (recipes/cuda.yaml download_host; also a build arg: NVIDIA_MIRROR).",
        default=None,
        metavar="URL",
        describe=_nvidia_help,
    )
    pip_index_url: Optional[str] = flag(INDEX.flag, _pip_help(INDEX), default=None, metavar="URL")
    pip_extra_index_url: Optional[str] = flag(
        EXTRA_INDEX.flag, _pip_help(EXTRA_INDEX), default=None, metavar="URL"
    )
    git_mirror: Optional[str] = _host_flag(GIT)
    conda_mirror: Optional[str] = _host_flag(CONDA)
    wmlce_mirror: Optional[str] = _host_flag(WMLCE)
    pytorch_mirror: Optional[str] = _host_flag(PYTORCH)

    def options(self) -> Options:
        """The render options these flags ask for: the base image and every mirror, checked.

        Returns:
            Options with ``base_image``, ``mirror`` and the other mirrors as ``(build arg, URL)``.

        Raises:
            UsageError: A malformed ``--base-image`` (no tag, ``latest``) or a mirror URL that
                is not plain http(s) or carries credentials.
        """
        options = check_options(self.base_image, self.mirror)
        given = (
            (INDEX.var, INDEX.flag, INDEX.what, self.pip_index_url),
            (EXTRA_INDEX.var, EXTRA_INDEX.flag, EXTRA_INDEX.what, self.pip_extra_index_url),
            *(
                (m.var, m.flag, f"the {m.host} host (recipes/hosts.yaml)", url)
                for m, url in (
                    (GIT, self.git_mirror),
                    (CONDA, self.conda_mirror),
                    (WMLCE, self.wmlce_mirror),
                    (PYTORCH, self.pytorch_mirror),
                )
            ),
        )
        mirrors = tuple(
            (var, check_mirror(option, url, what)) for var, option, what, url in given if url is not None
        )
        return options._replace(mirrors=mirrors)


BUILD_FLAG = "-o DIR"
OPENSHIFT_FLAG = "--openshift-output DIR"


def check_roots(roots: Roots, generated: Sequence[Generated] = ()) -> None:
    """Before anything is written: both roots usable, and neither inside the other's folders.

    Each root's clean-up keeps only its own files in the benchmark folders it writes, so
    one folder for both would delete the other's files just written.

    Args:
        roots: Where each kind of output goes.
        generated: The variants about to be written (their benchmark folders).

    Raises:
        OutputError: A root cannot be written (not a folder, read-only, a link loop).
        UsageError: The two roots overlap.
    """
    if roots.build is not None:
        check_writable(roots.build, BUILD_FLAG)
    if roots.openshift is not None:
        check_writable(roots.openshift, OPENSHIFT_FLAG)
    if roots.build is None or roots.openshift is None:
        return
    benchmarks = {g.folder.split("/")[0] for g in generated}
    build, openshift = _resolved(roots.build, BUILD_FLAG), _resolved(roots.openshift, OPENSHIFT_FLAG)
    if build == openshift or _inside(openshift, build, benchmarks) or _inside(build, openshift, benchmarks):
        raise UsageError(
            f"-o {roots.build} and --openshift-output {roots.openshift} overlap; "
            "each keeps only its own files",
            hint="give them two separate folders, e.g. -o dockerfiles --openshift-output buildconfigs",
        )


def _resolved(root: Path, flag: str) -> Path:
    try:
        return root.resolve()
    except (RuntimeError, OSError) as error:  # a loop of symbolic links, which check_writable passes over
        raise OutputError(f"cannot use {root}: {error}", hint=f"pick another place with {flag}") from None


def _inside(inner: Path, outer: Path, benchmarks: Set[str]) -> bool:
    """Is ``inner`` within one of the benchmark folders ``outer`` writes and cleans up?
    Both are resolved: absolute, with no "." or ".." parts and no links."""
    if outer not in inner.parents:
        return False
    return inner.relative_to(outer).parts[0] in benchmarks


def check_options(base_image: Optional[str], mirror: Optional[str]) -> Options:
    """The base image and NVIDIA mirror options, checked.

    Args:
        base_image: ``--base-image``: a reference with a tag or digest, never ``latest``.
        mirror: ``--mirror``: the mirror of NVIDIA's download host.

    Returns:
        Render options with both (no other mirrors).

    Raises:
        UsageError: The reference is malformed, names no tag, uses ``latest`` or the
            all-zero digest; or the mirror URL is not fit (:func:`check_mirror`).
    """
    if base_image is not None and not _IMAGE_REF.match(base_image):
        raise UsageError(
            f"--base-image: {base_image!r} is not an image reference",
            hint="registry/namespace/name:tag, e.g. registry.example.com/mirror/ubi8:8.10",
        )
    if base_image is not None and ":" not in base_image.rsplit("/", 1)[1] and "@" not in base_image:
        raise UsageError(f"--base-image: {base_image!r} names no tag; pin one (never latest)")
    if base_image is not None and base_image.endswith("@" + DIGEST_PLACEHOLDER):
        # the all-zero digest stands for the content digest while it is computed
        raise UsageError(f"--base-image: {base_image!r} has the all-zero digest, which names no image")
    if base_image is not None and base_image.endswith(":latest"):
        raise UsageError(f"--base-image: {base_image!r} uses latest; pin a release tag or a digest")
    if mirror is not None:
        mirror = check_mirror("--mirror", mirror, "NVIDIA's download host")
    return Options(base_image=base_image, mirror=mirror)


# user:password@ (or a token alone) before the host; the password is never echoed back
_USERINFO = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*@")


def check_mirror(option: str, url: str, what: str) -> str:
    """A mirror URL fit for a Dockerfile ARG, a shell word and YAML.

    Args:
        option: The flag that gave it, for errors.
        url: ``http(s)://host[:port][/path]``.
        what: What the mirror replaces, for the hint.

    Returns:
        The URL without a trailing slash.

    Raises:
        UsageError: The URL carries credentials (build args stay readable in the image's
            history), has a port beyond 65535, or is not a plain http(s) URL.
    """
    if _USERINFO.match(url):
        raise UsageError(
            f"{option}: the URL carries credentials (user:password@host); build arguments and"
            " generated files keep them readable in the image history",
            hint="give the URL without them; a mirror that needs credentials takes them from a"
            " build secret (a netrc, or a pip.conf for pip: build --secret), never a build arg",
        )
    matched = _MIRROR.match(url)
    port = matched.group(2) if matched else None
    if port is not None and int(port) > 65535:
        raise UsageError(f"{option}: port {port} is beyond 65535")
    if matched is None:
        raise UsageError(
            f"{option}: {url[:200]!r} is not an http(s) URL (host, port and path only)",
            hint=f"the URL of the mirror of {what}, e.g. https://mirror.example.com/path",
        )
    return url.rstrip("/")


def generate(
    kb: KnowledgeBase,
    stack: Stack,
    *,
    fmt: str = "dockerfile",
    options: Options = DEFAULT_OPTIONS,
    cluster: Optional[ClusterOptions] = None,
    request: Optional[Request] = None,
) -> Generated:
    """Render one variant in memory; with ``cluster`` its OpenShift objects too.

    Args:
        kb: The knowledge base.
        stack: The resolved stack (:func:`mlcc.app.kb.resolve`).
        fmt: ``dockerfile``, ``script`` (install.sh) or ``singularity``.
        options: The base image and mirrors (:meth:`SourceFlags.options`).
        cluster: The OpenShift options, or None for no OpenShift objects.
        request: The request, recorded in the header comments, outside the content digest.

    Returns:
        The rendered files, their folder ``<benchmark>/<variant>``, and the objects.

    Raises:
        UsageError: A cluster option the stack cannot serve (a size the launch cannot bind,
            an MPIJob option for a benchmark without one, InfiniBand without RDMA), or
            ``--flavour runtime`` for a one-stage format.
    """
    if fmt != "dockerfile" and request is not None and request.flavour == "runtime":
        raise UsageError(
            f"--flavour runtime: --format {fmt} builds in one stage, so it keeps the build (devel)",
            hint="leave out --flavour for a one-stage file, or write a Dockerfile for a runtime image",
        )
    rendered = render(stack, fmt=fmt, options=options, request=request)
    folder = f"{stack.benchmark.name}/{stack.variant}"
    if cluster is None:
        return Generated(rendered, folder)
    dockerfile = rendered if fmt == "dockerfile" else render(stack, options=options, request=request)
    return Generated(rendered, folder, render_openshift(dockerfile, cluster))


# ----------------------------------------------------------------------------- writing


def build_files(generated: Sequence[Generated]) -> List[Tuple[str, str]]:
    """The build files of every variant, under their folders.

    Args:
        generated: The rendered variants.

    Returns:
        ``(path, content)`` pairs relative to the build root.
    """
    return [item for g in generated for item in g.files()]


def openshift_files(generated: Sequence[Generated]) -> List[Tuple[str, str]]:
    """The OpenShift files of every variant that has them.

    Args:
        generated: The rendered variants.

    Returns:
        ``(path, content)`` pairs relative to the OpenShift root.
    """
    return [item for g in generated if g.openshift for item in g.openshift.files]


def benchmark_lists(generated: Sequence[Generated], root: Path, *, from_disk: bool) -> List[Tuple[str, str]]:
    """``<benchmark>/<benchmark>.yaml`` for each benchmark touched.

    With ``from_disk`` the variants already under ``root`` join the new ones, so that one
    ``mlcc gen`` adds its variant to the benchmark's file instead of replacing the others.

    Args:
        generated: The rendered variants.
        root: The OpenShift root.
        from_disk: Read the other variants' ``build.yaml`` under ``root``.

    Returns:
        ``(path, content)`` pairs, one per benchmark.

    Raises:
        OutputError: A ``build.yaml`` on disk cannot be read or is not a List.
    """
    by_benchmark: Dict[str, Dict[str, Sequence[Any]]] = {}
    built: Dict[str, Dict[str, str]] = {}  # the build.yaml already dumped, per variant
    for g in generated:
        if g.openshift is None:
            continue
        bench, variant = g.folder.split("/")
        by_benchmark.setdefault(bench, {})[variant] = g.openshift.build_objects
        built.setdefault(bench, {})[variant] = dict(g.openshift.files)[f"{g.folder}/{BUILD_FILE}"]
    if from_disk:
        for bench, variants in by_benchmark.items():
            for path in sorted((root / bench).glob(f"*/{BUILD_FILE}")):
                variant = path.parent.name
                if variant not in variants:
                    variants[variant] = _read_build_objects(path)
    return [
        benchmark_list(bench, list(variants.items()), built[bench])
        for bench, variants in sorted(by_benchmark.items())
    ]


def _read_build_objects(path: Path) -> Sequence[Any]:
    # Only a variant written next to others already on disk reads YAML back; a fresh
    # folder or `gen --all` never does, so the reader is imported here.
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # reading only: libyaml is fine
    try:
        document = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
    except (OSError, yaml.YAMLError) as error:
        raise OutputError(
            f"cannot read {path}: {error}", hint="regenerate it, or remove the variant folder"
        ) from None
    items = document.get("items") if isinstance(document, dict) else None
    if not isinstance(items, list):
        raise OutputError(f"{path} is not a List of build objects", hint="regenerate it with mlcc gen")
    return items


def write(roots: Roots, generated: Sequence[Generated]) -> List[Change]:
    """Write one or more variants, leaving other variants of their benchmarks alone.

    Each file is replaced through a temporary file and a rename; a variant folder keeps
    exactly the files of its current rendering, and the main files of the other formats
    (a Dockerfile stays when install.sh is generated beside it).

    Args:
        roots: Where each kind of output goes.
        generated: The rendered variants.

    Returns:
        One change per file: created, updated, unchanged or removed.

    Raises:
        OutputError: A root or file cannot be written, or a symbolic link is in the way.
        UsageError: The roots overlap.
    """
    check_roots(roots, generated)
    folders = [g.folder for g in generated]
    for root, option in named_roots(roots):
        refuse_symlinks(root, folders, option)
    changes: List[Change] = []
    if roots.build is not None:
        # one format generated into a variant folder leaves the others' main files there
        # (their companions, stack.json and scripts/, are the same files for the same stack)
        others = [f.file_name for f in FORMATS.values()]
        changes += write_tree(roots.build, build_files(generated), prune=folders, keep=others)
    if roots.openshift is not None and any(g.openshift for g in generated):
        files = openshift_files(generated)
        # the benchmark file reads the other variants from disk: write the variants first
        changes += write_tree(
            roots.openshift, files, prune=[g.folder for g in generated if g.openshift], flag=OPENSHIFT_FLAG
        )
        changes += write_tree(
            roots.openshift, benchmark_lists(generated, roots.openshift, from_disk=True), flag=OPENSHIFT_FLAG
        )
    return changes


def named_roots(roots: Roots) -> List[Tuple[Path, str]]:
    """Each root written, with the option that chose it (for error hints).

    Args:
        roots: Where each kind of output goes.

    Returns:
        ``(root, option)`` pairs for the roots that are written.
    """
    named = [(roots.build, BUILD_FLAG), (roots.openshift, OPENSHIFT_FLAG)]
    return [(root, option) for root, option in named if root is not None]
