"""Lint rules for Dockerfiles, on the structure dockerfile-parse reads.

The rules say what a reproducible, OpenShift-friendly ML image needs; mlcc's own output
must pass all of them, and they are useful on hand-written Dockerfiles too.
"""

from __future__ import annotations

import io
import re
import shlex
from pathlib import Path
from typing import Callable, Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple

from dockerfile_parse import DockerfileParser

REQUIRED_LABELS = (
    "org.opencontainers.image.title",
    "org.opencontainers.image.version",
    "org.opencontainers.image.base.name",
    "io.mlcc.version",
    "io.mlcc.benchmark",
    "io.mlcc.variant",
    "io.mlcc.arch",
    "io.mlcc.digest",
)

DOCKERFILE_RULES: Dict[str, str] = {
    "DF001": "the base image is pinned to a tag or digest, never latest",
    "DF002": "no blanket update/upgrade of the distribution",
    "DF003": "package-manager and pip caches are cleaned in the layer that fills them",
    "DF004": "NVIDIA packages (CUDA, cuDNN, NCCL, cuBLAS, NPP) are installed at exact versions",
    "DF005": "pip installs exact versions (name==version, or a URL pinned to a commit)",
    "DF006": "git checkouts are pinned to a commit",
    "DF007": "downloads use https (or $NVIDIA_MIRROR)",
    "DF008": "the image carries the OCI and io.mlcc labels",
    "DF009": "the image runs as a non-root user (OpenShift's restricted SCC)",
}
DOCKERFILE_WARNINGS = {"DF009"}

_NVIDIA_PACKAGE = re.compile(r"^(cuda-|libcudnn|libnccl|libcublas|libnpp|cuda$)")
_RPM_PINNED = re.compile(r"-[0-9][A-Za-z0-9_+~]*\.[A-Za-z0-9_.+~]*-[0-9A-Za-z_.+~]+$")
_HEX = re.compile(r"^[0-9a-f]{7,40}\Z")
_COMMIT_URL = re.compile(r"[0-9a-f]{40}")
_BLANKET = re.compile(
    r"\b(yum|dnf|microdnf)\s+(-y\s+)?(update|upgrade|distro-sync)\b(?!\s+[A-Za-z0-9])"
    r"|\bapt-get\s+(-y\s+)?(upgrade|dist-upgrade|full-upgrade)\b"
)
_SPLIT = re.compile(r"&&|\|\||;")


class Finding(NamedTuple):
    path: str
    line: int
    rule: str
    message: str
    warning: bool = False

    @property
    def severity(self) -> str:
        return "warning" if self.warning or self.rule in DOCKERFILE_WARNINGS else "error"

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.rule} {self.severity}: {self.message}"


def lint_dockerfile(path: Path, *, content: Optional[str] = None) -> List[Finding]:
    text = content if content is not None else path.read_text(encoding="utf-8")
    parser = DockerfileParser(fileobj=io.BytesIO(text.encode("utf-8")))
    structure = parser.structure
    findings: List[Finding] = []
    display = str(path)
    args = _arg_defaults(structure)
    for item in structure:
        instruction = item["instruction"]
        line = item["startline"] + 1
        value = item["value"]
        for check in _CHECKS.get(instruction, ()):
            for rule, message in check(value, args):
                findings.append(Finding(display, line, rule, message))
    findings += _check_labels(display, parser.labels, structure)
    findings += _check_user(display, structure)
    return sorted(findings, key=lambda f: (f.line, f.rule))


def _arg_defaults(structure: Sequence[Dict[str, object]]) -> Dict[str, str]:
    found: Dict[str, str] = {}
    for item in structure:
        if item["instruction"] == "ARG" and "=" in str(item["value"]):
            name, default = str(item["value"]).split("=", 1)
            found[name.strip()] = default.strip().strip('"')
    return found


Hit = Tuple[str, str]  # (rule, message)
Check = Callable[[str, Dict[str, str]], Iterator[Hit]]


def _check_from(value: str, args: Dict[str, str]) -> Iterator[Hit]:
    image = value.split()[0]
    resolved = re.sub(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", lambda m: args.get(m.group(1), m.group(0)), image)
    if "$" in resolved:
        yield "DF001", f"FROM {image}: the argument has no default, so the base is not pinned"
        return
    name = resolved.rsplit("/", 1)[-1]
    if "@sha256:" in resolved:
        return
    if ":" not in name:
        yield "DF001", f"FROM {resolved}: no tag (means latest)"
    elif name.endswith(":latest"):
        yield "DF001", f"FROM {resolved}: latest is not a release"


def _commands(value: str) -> List[List[str]]:
    result = []
    for part in _SPLIT.split(value.replace("\\\n", " ")):
        part = part.strip().strip("()")
        if not part:
            continue
        try:
            words = shlex.split(part)
        except ValueError:
            words = part.split()
        while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):  # VAR=value prefixes
            words = words[1:]
        if words:
            result.append(words)
    return result


def _check_run(value: str, args: Dict[str, str]) -> Iterator[Hit]:
    text = value.replace("\\\n", " ")
    match = _BLANKET.search(text)
    if match:
        yield "DF002", f"'{match.group(0).strip()}' updates every package: pin what you need instead"
    commands = _commands(value)
    yield from _check_caches(text, commands)
    for words in commands:
        yield from _check_packages(words)
        yield from _check_pip(words)
        yield from _check_download(words)
    yield from _check_git(commands)


def _check_caches(text: str, commands: List[List[str]]) -> Iterator[Hit]:
    tools = {words[0] for words in commands if len(words) > 1 and words[1] == "install"}
    for tool, clean in (
        ("yum", "yum clean all"),
        ("dnf", "dnf clean all"),
        ("microdnf", "microdnf clean all"),
    ):
        if tool in tools and clean not in text:
            yield "DF003", f"{tool} install without '{clean}' in the same RUN"
    if "apt-get" in tools and "/var/lib/apt/lists" not in text:
        yield "DF003", "apt-get install without removing /var/lib/apt/lists in the same RUN"
    for words in commands:
        if _is_pip_install(words) and "--no-cache-dir" not in words:
            yield "DF003", "pip install without --no-cache-dir"


def _check_packages(words: List[str]) -> Iterator[Hit]:
    if len(words) < 2 or words[0] not in ("yum", "dnf", "microdnf", "apt-get") or words[1] != "install":
        return
    for word in words[2:]:
        if word.startswith("-") or not _NVIDIA_PACKAGE.match(word):
            continue
        pinned = "=" in word if words[0] == "apt-get" else bool(_RPM_PINNED.search(word))
        if not pinned:
            yield "DF004", f"{word} has no exact version"


def _is_pip_install(words: List[str]) -> bool:
    if words[:2] == ["pip", "install"] or words[:2] == ["pip3", "install"]:
        return True
    return len(words) > 3 and words[1:4] == ["-m", "pip", "install"]


def _check_pip(words: List[str]) -> Iterator[Hit]:
    if not _is_pip_install(words):
        return
    start = words.index("install") + 1
    skip_next = False
    for word in words[start:]:
        if skip_next:
            skip_next = False
            continue
        if word in (
            "--index-url",
            "--extra-index-url",
            "--find-links",
            "-f",
            "-i",
            "-r",
            "-c",
            "--global-option",
        ):
            skip_next = True
            continue
        if word.startswith("-") or word == ".":
            continue
        if "==" in word or (_COMMIT_URL.search(word) and "://" in word):
            continue
        yield "DF005", f"pip requirement {word!r} is not pinned"


def _check_download(words: List[str]) -> Iterator[Hit]:
    if not words or words[0] not in ("curl", "wget"):
        return
    for word in words[1:]:
        if word.startswith("http://"):
            yield "DF007", f"{word} is fetched over plain http"


def _check_git(commands: List[List[str]]) -> Iterator[Hit]:
    clones = [w for w in commands if w[:2] == ["git", "clone"]]
    if not clones:
        return
    checkouts = [w for w in commands if len(w) > 2 and w[0] == "git" and "checkout" in w]
    refs = [w[-1] for w in checkouts]
    for clone in clones:
        if "-b" in clone or "--branch" in clone:
            flag = "-b" if "-b" in clone else "--branch"
            branch = clone[clone.index(flag) + 1]
            if not _HEX.match(branch):
                yield "DF006", f"git clone of branch {branch!r}: a branch moves; check out a commit"
        if not any(_HEX.match(ref) for ref in refs):
            yield (
                "DF006",
                f"git clone {clone[-2] if len(clone) > 2 else ''} is not followed by a checkout of a commit",
            )


def _check_labels(
    display: str, labels: Dict[str, str], structure: Sequence[Dict[str, object]]
) -> List[Finding]:
    last = _line(structure[-1], "endline") if structure else 1
    return [
        Finding(display, last, "DF008", f"label {name} is missing")
        for name in REQUIRED_LABELS
        if name not in labels
    ]


def _check_user(display: str, structure: Sequence[Dict[str, object]]) -> List[Finding]:
    users = [item for item in structure if item["instruction"] == "USER"]
    if not users:
        last = _line(structure[-1], "endline") if structure else 1
        return [Finding(display, last, "DF009", "no USER: the image runs as root")]
    user = str(users[-1]["value"]).split(":")[0].strip()
    if user in ("root", "0"):
        return [Finding(display, _line(users[-1], "startline"), "DF009", "the final USER is root")]
    return []


def _line(item: Dict[str, object], key: str) -> int:
    value = item[key]
    return (value if isinstance(value, int) else 0) + 1


_CHECKS: Dict[str, Sequence[Check]] = {"FROM": (_check_from,), "RUN": (_check_run,)}
