"""Reading an image's stack back: the summary `inspect` prints, `diff`, and `verify`.

``stack.json`` (read as :class:`mlcc.stackfile.document.StackManifest`) says what was
resolved, ``installed.json`` (written by the image's last build step) what the build
really installed, and the labels what the image claims. `verify` compares the three and
lists every mismatch.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from mlcc.errors import DriftError
from mlcc.image.content import INSTALLED_FILE, OCI_ARCH_NAMES, STACK_FILE, ImageContent
from mlcc.kb.model import UNCONFIRMED  # how stack.json names a bundled library's unknown version
from mlcc.stackfile.document import (
    Components,
    CudaRecord,
    Fetches,
    FrameworkRecord,
    GccRecord,
    LibraryRecord,
    PythonRecord,
    StackManifest,
    problem_of,
)
from mlcc.versions import parse_version


class Row(NamedTuple):
    component: str
    resolved: str  # from stack.json / labels
    installed: str  # from installed.json ("" when not recorded)


class Mismatch(NamedTuple):
    component: str
    expected: str
    found: str
    where: str  # which record disagrees: label, installed.json, image config
    severity: str = "drift"  # "drift" fails verify; "note" is reported only

    def __str__(self) -> str:
        return f"{self.component}: expected {self.expected}, {self.where} says {self.found}"


def _get(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _text(value: Any) -> str:
    return "" if value is None else str(value)


# ----------------------------------------------------------------------------- summary


def summary(content: ImageContent) -> List[Row]:
    """The image's software stack, in the shape of a "software stack details" table."""
    stack = _manifest(content)
    installed = _recorded(content.json_file(INSTALLED_FILE) or {})
    labels = content.labels
    components = stack.components if stack else None
    framework = components.framework if components else None
    recorded_fw = _get(installed, "modules", framework.module) if framework else None
    cuda = components.cuda if components else None
    source = stack.benchmark.source if stack else None
    rows = [
        Row(
            "benchmark",
            stack.benchmark.name if stack else labels.get("io.mlcc.benchmark", ""),
            stack.benchmark.title if stack else "",
        ),
        Row("benchmark source", f"{source.repository} @ {source.commit[:12]}" if source else "", ""),
        Row("variant", stack.variant if stack else labels.get("io.mlcc.variant", ""), ""),
        Row("base image", stack.base.image if stack else "", _os(installed)),
        Row(
            "architecture",
            stack.arch if stack else "",
            _text(installed.get("arch")) or OCI_ARCH_NAMES.get(content.arch or "", ""),
        ),
        Row("CUDA", cuda.version if cuda else "none (CPU)", _nvcc(installed)),
        Row("minimum driver", cuda.min_driver if cuda else "", ""),
        Row(
            "cuDNN",
            _lib_text(components.cudnn if components else None),
            _lib_installed(components.cudnn if components else None, installed, "cudnn"),
        ),
        Row(
            "NCCL",
            _lib_text(components.nccl if components else None),
            _lib_installed(components.nccl if components else None, installed, "nccl"),
        ),
        Row(
            "Python",
            components.python.version if components and components.python else "",
            _text(installed.get("python")),
        ),
        Row("GCC", _gcc_text(components.gcc) if components else "", _text(installed.get("gcc"))),
        Row("framework", _framework_text(framework), _framework_installed(recorded_fw or {})),
        *_fetch_rows(stack),
        Row("mlcc", stack.generator.version if stack else labels.get("io.mlcc.version", ""), ""),
        Row("content digest", _text(labels.get("io.mlcc.digest")), ""),
    ]
    return [r for r in rows if r.resolved or r.installed]


def _fetch_rows(stack: Optional[StackManifest]) -> List[Row]:
    """How the build's fetches were pinned, counted per kind (``inspect --json`` prints
    the records themselves); a format 1 stack.json has none to count."""
    if stack is None:
        return []
    fetches = stack.fetches
    if fetches is None:
        return [Row("fetches", f"not recorded (stack.json format {stack.format})", "")]
    return [
        Row(what, text, "")
        for what, text in (
            ("downloads", _downloads_text(fetches)),
            ("git checkouts", _git_text(fetches)),
            ("pip installs", _pip_text(fetches)),
            ("conda installs", _conda_text(fetches)),
        )
        if text
    ]


def _count(number: int, what: str) -> str:
    return f"{number} {what}" if number == 1 else f"{number} {what}s"


def _downloads_text(fetches: Fetches) -> str:
    if not fetches.downloads:
        return ""
    checked = sum(1 for d in fetches.downloads if d.sha256)
    text = f"{len(fetches.downloads)}: {checked} by sourced sha256"
    others = len(fetches.downloads) - checked
    return text + (
        f", {others} without (recipe says why: {', '.join(_unchecked(fetches))})" if others else ""
    )


def _unchecked(fetches: Fetches) -> List[str]:
    return [d.name for d in fetches.downloads if not d.sha256]


def _git_text(fetches: Fetches) -> str:
    if not fetches.git:
        return ""
    short = [g.name for g in fetches.git if g.commit_unresolved is not None or len(g.commit) != 40]
    text = f"{len(fetches.git)}: {len(fetches.git) - len(short)} by full commit"
    return text + (f", {len(short)} by short hash ({', '.join(short)})" if short else "")


def _pip_text(fetches: Fetches) -> str:
    if not fetches.pip:
        return ""
    locked = [i for i in fetches.pip if i.unlocked is None]
    files = sum(1 for i in locked for p in i.packages if p.sha256)
    unlocked = len(fetches.pip) - len(locked)
    text = f"{len(fetches.pip)}: {len(locked)} hash-locked ({_count(files, 'file')})"
    return text + (f", {unlocked} not (stack.json says why)" if unlocked else "")


def _conda_text(fetches: Fetches) -> str:
    if not fetches.conda:
        return ""
    unbuilt = sum(len(c.unbuilt) for c in fetches.conda)
    text = _count(len(fetches.conda), "environment")
    return text + (f": {_count(unbuilt, 'spec')} naming no build" if unbuilt else "")


def _manifest(content: ImageContent) -> Optional[StackManifest]:
    """The image's stack.json when it is a stack manifest (None when it has none); else an
    error for the user."""

    stack = content.json_file(STACK_FILE)
    if stack is None:
        return None
    what = f"{content.reference}: /{STACK_FILE}"

    def error(message: str) -> DriftError:
        return DriftError(message, hint="rebuild the image with mlcc build, or inspect another image")

    problem = stack.get("error") if isinstance(stack, dict) else None
    if problem:
        raise error(f"{what} is not a stack manifest mlcc wrote: {problem}")
    return StackManifest.from_json(stack, what, error)


def _recorded(installed: Dict[str, Any]) -> Dict[str, Any]:
    """installed.json with every nested record of the expected shape (it comes from the image)."""
    shaped = dict(installed)
    for key in ("os", "packages", "headers", "modules"):
        if not isinstance(shaped.get(key), dict):
            shaped.pop(key, None)
    modules = shaped.get("modules") or {}
    shaped["modules"] = {k: v for k, v in modules.items() if isinstance(v, dict)}
    return shaped


def _os(installed: Dict[str, Any]) -> str:
    os_info = installed.get("os") or {}
    return " ".join(p for p in (_text(os_info.get("id")), _text(os_info.get("version_id"))) if p)


def _nvcc(installed: Dict[str, Any]) -> str:
    nvcc = installed.get("nvcc")
    return f"nvcc {nvcc}" if nvcc else ""


def _lib_text(lib: Optional[LibraryRecord]) -> str:
    return f"{lib.version} ({lib.method})" if lib else ""


def _gcc_text(gcc: GccRecord) -> str:
    return gcc.version + (f" ({gcc.toolset})" if gcc.toolset else "")


def _lib_installed(lib: Optional[LibraryRecord], installed: Dict[str, Any], header: str) -> str:
    if not lib:
        return ""
    if lib.method == "tarball":
        return _text(_get(installed, "headers", header))
    versions = [v for n, v in _pinned_packages(lib.packages, installed) if v]
    return versions[0] if versions else ""


def _framework_text(framework: Optional[FrameworkRecord]) -> str:
    if not framework:
        return ""
    return f"{framework.name} {framework.version} ({framework.variant})"


def _framework_installed(recorded: Dict[str, Any]) -> str:
    if not recorded:
        return ""
    if recorded.get("error"):
        return f"import failed: {recorded['error']}"
    text = _text(recorded.get("version"))
    if recorded.get("cuda"):
        text += f" (CUDA {recorded['cuda']})"
    return text


# ----------------------------------------------------------------------------- verify


def _pinned_packages(pins: Sequence[str], installed: Dict[str, Any]) -> List[Tuple[str, Optional[str]]]:
    """(pin, installed version) for each pin: the recorded name the pin starts with decides."""
    recorded: Dict[str, Any] = installed.get("packages") or {}
    found = []
    for pin in pins:
        name = _name_of(pin, recorded)
        found.append((pin, (recorded.get(name) or None) if name else None))
    return found


def _name_of(pin: str, recorded: Dict[str, Any]) -> Optional[str]:
    candidates = [
        n
        for n in recorded
        if (pin.startswith(n + "-") or pin.startswith(n + "=")) and pin[len(n) + 1 : len(n) + 2].isdigit()
    ]
    return max(candidates, key=len) if candidates else None


def _version_of(pin: str, name: str) -> str:
    return pin[len(name) + 1 :]


def verify(content: ImageContent) -> List[Mismatch]:
    # a private key in any layer is every puller's (SSH host keys made at build time)
    keys = [
        Mismatch("private key", "none in any layer", f"/{path}", "image layers")
        for path in content.private_keys
    ]
    return keys + _verify_stack(content)


def _verify_stack(content: ImageContent) -> List[Mismatch]:
    document = content.json_file(STACK_FILE)
    installed = content.json_file(INSTALLED_FILE)
    if not isinstance(document, dict) or "error" in document:
        return [Mismatch("stack manifest", f"/{STACK_FILE}", "missing or not JSON", "image")]
    if not isinstance(installed, dict) or "error" in installed:
        return [Mismatch("build record", f"/{INSTALLED_FILE}", "missing or not JSON", "image")]

    problem = problem_of(document)
    if problem:
        return [Mismatch("stack manifest", "a stack manifest mlcc wrote", problem, f"/{STACK_FILE}")]
    stack = StackManifest.of(document)
    installed = _recorded(installed)
    components = stack.components
    problems: List[Mismatch] = []
    problems += _labels(stack, content.labels)
    problems += _base_digest(stack, content.labels)
    problems += _platform(stack, installed, content)
    problems += _cuda(components.cuda, installed, runtime=stack.flavour == "runtime")
    problems += _library("cuDNN", components.cudnn, installed, "cudnn")
    problems += _library("NCCL", components.nccl, installed, "nccl")
    problems += _python(components.python, installed)
    if stack.flavour == "runtime":
        problems += _no_compilers(installed)
    else:
        problems += _gcc(components.gcc, installed)
    problems += _framework(components.framework, installed)
    problems += _framework_libraries(components, installed)
    problems += _pip_locked(stack.fetches, installed)
    return problems


def _pip_name(name: str) -> str:
    """PEP 503's normal form: lowercase, each run of -_. one -."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _same_version(a: str, b: str) -> bool:
    try:
        return parse_version(a) == parse_version(b)
    except ValueError:
        return a == b


def _pip_locked(fetches: Optional[Fetches], installed: Dict[str, Any]) -> List[Mismatch]:
    """Each package a hash lock fetched (the last install to pin it) against what ``pip
    list`` says at the end of the build. A later install that is not hash-locked may
    replace a version (resolving its own dependencies), so a difference is a note, not
    drift; a package pip does not list is not reported (another environment's)."""
    listed = installed.get("pip")
    if fetches is None or not isinstance(listed, list):
        return []
    versions: Dict[str, str] = {}
    for entry in listed:
        if (
            isinstance(entry, dict)
            and isinstance(entry.get("name"), str)
            and isinstance(entry.get("version"), str)
        ):
            versions.setdefault(_pip_name(entry["name"]), entry["version"])
    pinned: Dict[str, Tuple[str, str, str]] = {}  # name -> (as the lock spells it, version, lock id)
    for install in fetches.pip:
        for package in install.packages:
            if package.sha256:
                pinned[_pip_name(package.name)] = (package.name, package.version, install.lock)
    found: List[Mismatch] = []
    for name, (spelled, version, lock) in sorted(pinned.items()):
        seen = versions.get(name)
        if seen is not None and not _same_version(seen, version):
            found.append(
                Mismatch(f"pip {spelled}", f"{version} (hash-locked, {lock})", seen, "installed.json", "note")
            )
    return found


def _framework_libraries(components: Components, installed: Dict[str, Any]) -> List[Mismatch]:
    """The cuDNN / NCCL the framework itself reports loading against the stamped stack's:
    a framework that brings its own (a conda channel, a wheel that bundles them) must be
    stamped with those, not with a system library nothing uses."""
    framework = components.framework
    recorded = _get(installed, "modules", framework.module) if framework else None
    if not isinstance(recorded, dict) or recorded.get("error"):
        return []  # _framework reports a missing or failed import
    problems: List[Mismatch] = []
    for library, title, stamped in (("cudnn", "cuDNN", components.cudnn), ("nccl", "NCCL", components.nccl)):
        if library not in recorded:
            continue  # recorded by an older mlcc-record
        expected = stamped.version if stamped else ""
        if stamped is not None and stamped.method == "base" and framework is not None:
            # an image base's library as far as a source confirms it (UNCONFIRMED otherwise)
            expected = dict(framework.loads).get(library, expected)
        found = _text(recorded.get(library))
        what = f"{title} the framework loads"
        if expected == UNCONFIRMED:
            # the recipe knows the framework brings its own copy but no source names the
            # version: what the framework reports is the first evidence, worth recording
            if found:
                problems.append(
                    Mismatch(
                        what, "a version no source confirmed", found, "installed.json (framework)", "note"
                    )
                )
            continue
        if expected and not found:
            problems.append(Mismatch(what, expected, "none reported", "installed.json (framework)", "note"))
        elif found and not expected:
            problems.append(Mismatch(what, "none in the stack", found, "installed.json (framework)"))
        elif found and not _same_release(expected, found):
            problems.append(Mismatch(what, expected, found, "installed.json (framework)"))
    return problems + _framework_runtime(framework, recorded)


def _framework_runtime(framework: Optional[FrameworkRecord], recorded: Dict[str, Any]) -> List[Mismatch]:
    """The CUDA runtime the framework reports (torch.version.cuda) against the one its build
    brings (``loads.cuda_runtime``: a wheel's own libcudart, a conda channel's cudatoolkit)."""
    expected = _text(dict(framework.loads).get("cuda_runtime")) if framework else ""
    found = _text(recorded.get("cuda"))
    if not expected or not found:
        return []
    what = "CUDA runtime the framework loads"
    if expected == UNCONFIRMED:
        return [Mismatch(what, "a version no source confirmed", found, "installed.json (framework)", "note")]
    if not _same_release(expected, found):
        return [Mismatch(what, expected, found, "installed.json (framework)")]
    return []


def _same_release(expected: str, found: str) -> bool:
    """Equal as far as both say: TensorFlow reports cuDNN "8" or "8.1", and a recipe may know
    only the minor a conda channel brings ("7.6" while torch reports 7.6.3)."""
    wanted = expected.split(".")
    got = found.split(".")
    depth = min(len(wanted), len(got), 3)
    return wanted[:depth] == got[:depth]


def _labels(stack: StackManifest, labels: Dict[str, str]) -> List[Mismatch]:
    components = stack.components
    source = stack.benchmark.source
    expected = {
        "io.mlcc.variant": stack.variant,
        "io.mlcc.benchmark": stack.benchmark.name,
        "io.mlcc.arch": stack.arch,
        "io.mlcc.cuda": components.cuda.version if components.cuda else None,
        "io.mlcc.cudnn": _labelled_version(components.cudnn),
        "io.mlcc.nccl": _labelled_version(components.nccl),
        "io.mlcc.python": components.python.version if components.python else None,
        "io.mlcc.framework.version": components.framework.version if components.framework else None,
        "org.opencontainers.image.revision": source.commit if source else None,
    }
    problems = []
    for label, value in expected.items():
        if value is not None and labels.get(label) != value:
            found = labels.get(label, "(no label)")
            problems.append(Mismatch(f"label {label}", value, found, "image labels"))
    if not labels.get("io.mlcc.digest"):
        problems.append(Mismatch("label io.mlcc.digest", "the content digest", "(no label)", "image labels"))
    return problems


BASE_DIGEST_LABEL = "org.opencontainers.image.base.digest"


def _base_digest(stack: StackManifest, labels: Dict[str, str]) -> List[Mismatch]:
    """The base manifest the build pulled, as stack.json records it, against the image's own
    annotation of it; an image on a base that holds its stack (NGC) must record it, as what
    CUDA and the framework are rests on that manifest alone."""
    base = stack.base
    label = labels.get(BASE_DIGEST_LABEL)
    if base.digest and label and label != base.digest:
        return [Mismatch("base image digest", base.digest, label, f"image labels ({BASE_DIGEST_LABEL})")]
    if base.provides and not base.digest:
        held = ", ".join(base.provides)
        return [
            Mismatch(
                f"base image digest ({held} come with {base.default_image})",
                "the manifest the build pulled",
                "not recorded",
                f"/{STACK_FILE} (base.digest)",
            )
        ]
    return []


def _labelled_version(lib: Optional[LibraryRecord]) -> Optional[str]:
    """The label a library's record implies: none for a version no source confirmed (mlcc
    stamps no label then; an older image's ``unconfirmed`` label is not checked either)."""
    return lib.version if lib is not None and lib.version != UNCONFIRMED else None


def _platform(stack: StackManifest, installed: Dict[str, Any], content: ImageContent) -> List[Mismatch]:
    arch = stack.arch
    problems = []
    if installed.get("arch") != arch:
        problems.append(
            Mismatch("architecture", arch, _text(installed.get("arch")), "installed.json (uname -m)")
        )
    config_arch = OCI_ARCH_NAMES.get(content.arch or "", content.arch)
    if content.arch and config_arch != arch:
        problems.append(Mismatch("architecture", arch, str(content.arch), "image config"))
    return problems


def _packages(component: str, pins: Sequence[str], installed: Dict[str, Any]) -> List[Mismatch]:
    problems = []
    recorded: Dict[str, Any] = installed.get("packages") or {}
    for pin in pins:
        name = _name_of(pin, recorded)
        if name is None:
            problems.append(Mismatch(f"{component} package", pin, "not recorded", "installed.json"))
            continue
        version = recorded.get(name)
        if not version:
            problems.append(
                Mismatch(
                    f"{component} package {name}", _version_of(pin, name), "not installed", "installed.json"
                )
            )
        elif version != _version_of(pin, name):
            problems.append(
                Mismatch(
                    f"{component} package {name}", _version_of(pin, name), str(version), "installed.json"
                )
            )
    return problems


def _cuda(cuda: Optional[CudaRecord], installed: Dict[str, Any], runtime: bool = False) -> List[Mismatch]:
    if not cuda:
        return []
    problems = _packages("CUDA", cuda.packages, installed)
    if runtime:  # nvcc is a compiler: _no_compilers wants none
        return problems
    nvcc = installed.get("nvcc")
    minor = ".".join(cuda.version.split(".")[:2])
    if not nvcc:
        problems.append(Mismatch("CUDA nvcc", minor, "no nvcc found", "installed.json"))
    elif ".".join(str(nvcc).split(".")[:2]) != minor:
        problems.append(Mismatch("CUDA nvcc", minor, str(nvcc), "installed.json"))
    return problems


def _library(
    label: str, lib: Optional[LibraryRecord], installed: Dict[str, Any], header: str
) -> List[Mismatch]:
    if not lib:
        return []
    if lib.method == "tarball":
        found = _get(installed, "headers", header)
        expected = ".".join(lib.version.split(".")[:3])
        if found != expected:
            return [Mismatch(f"{label} headers", expected, _text(found) or "not found", "installed.json")]
        return []
    return _packages(label, lib.packages, installed)


def _python(python: Optional[PythonRecord], installed: Dict[str, Any]) -> List[Mismatch]:
    if not python:
        return []
    expected = python.version
    found = _text(installed.get("python"))
    if ".".join(found.split(".")[:2]) != expected:
        return [Mismatch("Python", expected, found or "not found", "installed.json")]
    return _python_executable(python, installed)


def _python_executable(python: PythonRecord, installed: Dict[str, Any]) -> List[Mismatch]:
    """The interpreter the benchmark's ``python`` resolves to against the one stack.json
    names (recorded by mlcc-record since it records ``python_executable``)."""
    found = _text(installed.get("python_executable"))
    if not found or found == python.executable:
        return []
    return [Mismatch("Python executable", python.executable, found, "installed.json (python on PATH)")]


def _no_compilers(installed: Dict[str, Any]) -> List[Mismatch]:
    """A runtime image holds no compiler: mlcc-record lists cc, c++, gcc, g++, clang, nvcc
    and gfortran on PATH, and nvcc and RHEL toolsets' gcc where they install."""
    found = installed.get("compilers")
    if not isinstance(found, list):
        return [Mismatch("compilers", "none (a runtime image)", "not recorded", "installed.json")]
    paths = [_text(path) for path in found]
    if paths:
        return [Mismatch("compilers", "none (a runtime image)", ", ".join(paths), "installed.json")]
    return []


def _gcc(gcc: GccRecord, installed: Dict[str, Any]) -> List[Mismatch]:
    expected = gcc.version
    found = _text(installed.get("gcc"))
    if not found:
        return [Mismatch("GCC", expected, "not found", "installed.json")]
    if found.split(".")[0] != expected.split(".")[0]:
        return [Mismatch("GCC", expected, found, "installed.json")]
    if found != expected:  # a base image update moves the patch level: worth saying, not failing
        return [Mismatch("GCC", expected, found, "installed.json", "note")]
    return []


def _framework(framework: Optional[FrameworkRecord], installed: Dict[str, Any]) -> List[Mismatch]:
    if not framework:
        return []
    what = f"framework {framework.name}"
    expected = framework.version
    recorded = _get(installed, "modules", framework.module)
    if not recorded:
        return [Mismatch(what, expected, "not recorded", "installed.json")]
    if recorded.get("error"):
        # GPU frameworks can fail to import on a build host without a driver (MXNet): say so
        return [Mismatch(what, expected, f"import failed ({recorded['error']})", "installed.json", "note")]
    found = _text(recorded.get("version"))
    if found != expected and not found.startswith(expected + "+"):
        return [Mismatch(what, expected, found, "installed.json")]
    cuda = recorded.get("cuda")
    lines = list(framework.cuda)
    if cuda and lines and ".".join(str(cuda).split(".")[:2]) not in lines:
        return [Mismatch(f"{what} CUDA build", " or ".join(lines), str(cuda), "installed.json")]
    return []
