"""Reading an image's stack back: the summary `inspect` prints, `diff`, and `verify`.

``stack.json`` says what was resolved, ``installed.json`` (written by the image's last build
step) what the build really installed, and the labels what the image claims. `verify`
compares the three and lists every mismatch.
"""

from __future__ import annotations

from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from mlcc.errors import DriftError
from mlcc.image.content import INSTALLED_FILE, OCI_ARCH_NAMES, STACK_FILE, ImageContent
from mlcc.image.untrusted import stack_problem


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
    stack = _stack(content)
    installed = _recorded(content.json_file(INSTALLED_FILE) or {})
    labels = content.labels
    components = stack.get("components") or {}
    bench = stack.get("benchmark") or {}
    source = bench.get("source") or {}
    framework = components.get("framework") or {}
    module = framework.get("module") or ""
    recorded_fw = _get(installed, "modules", module) or {}
    rows = [
        Row(
            "benchmark",
            f"{bench.get('name', labels.get('io.mlcc.benchmark', ''))}",
            _text(bench.get("title")),
        ),
        Row(
            "benchmark source",
            f"{source.get('repository', '')} @ {source.get('commit', '')[:12]}".strip(" @"),
            "",
        ),
        Row("variant", _text(stack.get("variant") or labels.get("io.mlcc.variant")), ""),
        Row("base image", _text(_get(stack, "base", "image")), _os(installed)),
        Row(
            "architecture",
            _text(stack.get("arch")),
            _text(installed.get("arch")) or OCI_ARCH_NAMES.get(content.arch or "", ""),
        ),
        Row("CUDA", _text(_get(components, "cuda", "version")) or "none (CPU)", _nvcc(installed)),
        Row("minimum driver", _text(_get(components, "cuda", "min_driver")), ""),
        Row(
            "cuDNN",
            _lib_text(components.get("cudnn")),
            _lib_installed(components.get("cudnn"), installed, "cudnn"),
        ),
        Row(
            "NCCL",
            _lib_text(components.get("nccl")),
            _lib_installed(components.get("nccl"), installed, "nccl"),
        ),
        Row("Python", _text(_get(components, "python", "version")), _text(installed.get("python"))),
        Row("GCC", _gcc_text(components.get("gcc")), _text(installed.get("gcc"))),
        Row("framework", _framework_text(framework), _framework_installed(recorded_fw)),
        Row("mlcc", _text(_get(stack, "generator", "version") or labels.get("io.mlcc.version")), ""),
        Row("content digest", _text(labels.get("io.mlcc.digest")), ""),
    ]
    return [r for r in rows if r.resolved or r.installed]


def _stack(content: ImageContent) -> Dict[str, Any]:
    """The image's stack.json when it is a stack manifest; else an error for the user."""

    stack = content.json_file(STACK_FILE)
    if stack is None:
        return {}
    problem = stack.get("error") if isinstance(stack, dict) else None
    problem = problem or stack_problem(stack)
    if problem:
        raise DriftError(
            f"{content.reference}: /{STACK_FILE} is not a stack manifest mlcc wrote: {problem}",
            hint="rebuild the image with mlcc build, or inspect another image",
        )
    return stack if isinstance(stack, dict) else {}


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


def _lib_text(lib: Optional[Dict[str, Any]]) -> str:
    if not lib:
        return ""
    return f"{lib.get('version', '')} ({lib.get('method', '')})"


def _gcc_text(gcc: Optional[Dict[str, Any]]) -> str:
    if not gcc:
        return ""
    toolset = gcc.get("toolset")
    return f"{gcc.get('version', '')}" + (f" ({toolset})" if toolset else "")


def _lib_installed(lib: Optional[Dict[str, Any]], installed: Dict[str, Any], header: str) -> str:
    if not lib:
        return ""
    if lib.get("method") == "tarball":
        return _text(_get(installed, "headers", header))
    versions = [v for n, v in _pinned_packages(lib.get("packages") or [], installed) if v]
    return versions[0] if versions else ""


def _framework_text(framework: Dict[str, Any]) -> str:
    if not framework:
        return ""
    return f"{framework.get('name', '')} {framework.get('version', '')} ({framework.get('variant', '')})"


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
    stack = content.json_file(STACK_FILE)
    installed = content.json_file(INSTALLED_FILE)
    if not isinstance(stack, dict) or "error" in stack:
        return [Mismatch("stack manifest", f"/{STACK_FILE}", "missing or not JSON", "image")]
    if not isinstance(installed, dict) or "error" in installed:
        return [Mismatch("build record", f"/{INSTALLED_FILE}", "missing or not JSON", "image")]

    problem = stack_problem(stack)
    if problem:
        return [Mismatch("stack manifest", "a stack manifest mlcc wrote", problem, f"/{STACK_FILE}")]
    installed = _recorded(installed)
    problems: List[Mismatch] = []
    problems += _labels(stack, content.labels)
    problems += _platform(stack, installed, content)
    components = stack.get("components") or {}
    problems += _cuda(components.get("cuda"), installed)
    for name, header in (("cudnn", "cudnn"), ("nccl", "nccl")):
        problems += _library(name, components.get(name), installed, header)
    problems += _python(components.get("python"), installed)
    problems += _gcc(components.get("gcc"), installed)
    problems += _framework(components.get("framework"), installed)
    problems += _framework_libraries(components, installed)
    return problems


def _framework_libraries(components: Dict[str, Any], installed: Dict[str, Any]) -> List[Mismatch]:
    """The cuDNN / NCCL the framework itself reports loading against the stamped stack's:
    a framework that brings its own (a conda channel, a wheel that bundles them) must be
    stamped with those, not with a system library nothing uses."""
    framework = components.get("framework") or {}
    module = framework.get("module")
    recorded = _get(installed, "modules", module) if module else None
    if not isinstance(recorded, dict) or recorded.get("error"):
        return []  # _framework reports a missing or failed import
    problems: List[Mismatch] = []
    for library, title in (("cudnn", "cuDNN"), ("nccl", "NCCL")):
        if library not in recorded:
            continue  # recorded by an older mlcc-record
        expected = _text(_get(components, library, "version"))
        found = _text(recorded.get(library))
        what = f"{title} the framework loads"
        if expected and not found:
            problems.append(Mismatch(what, expected, "none reported", "installed.json (framework)", "note"))
        elif found and not expected:
            problems.append(Mismatch(what, "none in the stack", found, "installed.json (framework)"))
        elif found and not _same_release(expected, found):
            problems.append(Mismatch(what, expected, found, "installed.json (framework)"))
    return problems


def _same_release(expected: str, found: str) -> bool:
    """Equal as far as the framework says (TensorFlow reports cuDNN "8" or "8.1")."""
    wanted = expected.split(".")
    got = found.split(".")
    depth = min(len(got), 3)
    return wanted[:depth] == got[:depth]


def _labels(stack: Dict[str, Any], labels: Dict[str, str]) -> List[Mismatch]:
    components = stack.get("components") or {}
    expected = {
        "io.mlcc.variant": stack.get("variant"),
        "io.mlcc.benchmark": _get(stack, "benchmark", "name"),
        "io.mlcc.arch": stack.get("arch"),
        "io.mlcc.cuda": _get(components, "cuda", "version"),
        "io.mlcc.cudnn": _get(components, "cudnn", "version"),
        "io.mlcc.nccl": _get(components, "nccl", "version"),
        "io.mlcc.python": _get(components, "python", "version"),
        "io.mlcc.framework.version": _get(components, "framework", "version"),
        "org.opencontainers.image.revision": _get(stack, "benchmark", "source", "commit"),
    }
    problems = []
    for label, value in expected.items():
        if value is not None and labels.get(label) != str(value):
            problems.append(
                Mismatch(f"label {label}", str(value), labels.get(label, "(no label)"), "image labels")
            )
    if not labels.get("io.mlcc.digest"):
        problems.append(Mismatch("label io.mlcc.digest", "the content digest", "(no label)", "image labels"))
    return problems


def _platform(stack: Dict[str, Any], installed: Dict[str, Any], content: ImageContent) -> List[Mismatch]:
    arch = stack.get("arch")
    problems = []
    if installed.get("arch") != arch:
        problems.append(
            Mismatch("architecture", str(arch), _text(installed.get("arch")), "installed.json (uname -m)")
        )
    config_arch = OCI_ARCH_NAMES.get(content.arch or "", content.arch)
    if content.arch and config_arch != arch:
        problems.append(Mismatch("architecture", str(arch), str(content.arch), "image config"))
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


def _cuda(cuda: Optional[Dict[str, Any]], installed: Dict[str, Any]) -> List[Mismatch]:
    if not cuda:
        return []
    problems = _packages("CUDA", cuda.get("packages") or [], installed)
    nvcc = installed.get("nvcc")
    minor = ".".join(str(cuda.get("version", "")).split(".")[:2])
    if not nvcc:
        problems.append(Mismatch("CUDA nvcc", minor, "no nvcc found", "installed.json"))
    elif ".".join(str(nvcc).split(".")[:2]) != minor:
        problems.append(Mismatch("CUDA nvcc", minor, str(nvcc), "installed.json"))
    return problems


def _library(
    name: str, lib: Optional[Dict[str, Any]], installed: Dict[str, Any], header: str
) -> List[Mismatch]:
    if not lib:
        return []
    label = {"cudnn": "cuDNN", "nccl": "NCCL"}[name]
    if lib.get("method") == "tarball":
        found = _get(installed, "headers", header)
        expected = ".".join(str(lib.get("version", "")).split(".")[:3])
        if found != expected:
            return [Mismatch(f"{label} headers", expected, _text(found) or "not found", "installed.json")]
        return []
    return _packages(label, lib.get("packages") or [], installed)


def _python(python: Optional[Dict[str, Any]], installed: Dict[str, Any]) -> List[Mismatch]:
    if not python:
        return []
    expected = str(python.get("version", ""))
    found = _text(installed.get("python"))
    if ".".join(found.split(".")[:2]) != expected:
        return [Mismatch("Python", expected, found or "not found", "installed.json")]
    return []


def _gcc(gcc: Optional[Dict[str, Any]], installed: Dict[str, Any]) -> List[Mismatch]:
    if not gcc:
        return []
    expected = str(gcc.get("version", ""))
    found = _text(installed.get("gcc"))
    if not found:
        return [Mismatch("GCC", expected, "not found", "installed.json")]
    if found.split(".")[0] != expected.split(".")[0]:
        return [Mismatch("GCC", expected, found, "installed.json")]
    if found != expected:  # a base image update moves the patch level: worth saying, not failing
        return [Mismatch("GCC", expected, found, "installed.json", "note")]
    return []


def _framework(framework: Optional[Dict[str, Any]], installed: Dict[str, Any]) -> List[Mismatch]:
    if not framework:
        return []
    module = framework.get("module")
    expected = str(framework.get("version", ""))
    recorded = _get(installed, "modules", module) if module else None
    if not recorded:
        return [Mismatch(f"framework {framework.get('name')}", expected, "not recorded", "installed.json")]
    if recorded.get("error"):
        # GPU frameworks can fail to import on a build host without a driver (MXNet): say so
        return [
            Mismatch(
                f"framework {framework.get('name')}",
                expected,
                f"import failed ({recorded['error']})",
                "installed.json",
                "note",
            )
        ]
    found = _text(recorded.get("version"))
    if found != expected and not found.startswith(expected + "+"):
        return [Mismatch(f"framework {framework.get('name')}", expected, found, "installed.json")]
    cuda = recorded.get("cuda")
    lines = [str(c) for c in framework.get("cuda") or []]
    if cuda and lines and ".".join(str(cuda).split(".")[:2]) not in lines:
        return [
            Mismatch(
                f"framework {framework.get('name')} CUDA build",
                " or ".join(lines),
                str(cuda),
                "installed.json",
            )
        ]
    return []
