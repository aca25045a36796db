"""The shell words and commands the planner's steps are written with: package installs,
URLs and requirements as shell words, git checkouts through the mirrors, locked pip
installs, and where a step's mirror build args are placed."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple, TypeVar

from mlcc.errors import MlccError
from mlcc.kb.model import GIT, EnvExtension, PackageManager
from mlcc.kb.pip_locks import LockedInstall
from mlcc.render.manifest import image_cuda_packages, image_library_packages
from mlcc.render.mirror import PIP_SETTINGS, Route, host_mirrored
from mlcc.render.plan.model import NCCL_TARBALL_HOME, Options, Step
from mlcc.resolve.stack import Stack

if TYPE_CHECKING:
    T = TypeVar("T")


def _install(manager: PackageManager, names: Tuple[str, ...]) -> Tuple[str, str]:
    return manager.install_commands(names)


def _sh(words: Sequence[str]) -> str:
    return " ".join([shlex.quote(w) for w in words])


def _url_word(url: str) -> str:
    """A URL as one shell word; a mirrored URL keeps its leading ${VAR} expandable and the
    rest literal (escaped for double quotes)."""
    if not url.startswith(("${", "git+${")):
        return shlex.quote(url)
    head, rest = url.split("}", 1)
    return f'"{head}}}{_double_quoted(rest)}"'


def _requirement_word(requirement: str, hosts: Sequence[Route]) -> str:
    """A pip requirement as one shell word, a URL on a mirrored host through its variable."""
    routed = host_mirrored(requirement, hosts)
    return _url_word(routed) if routed != requirement else shlex.quote(requirement)


def locked_pip_command(pip_install: str, locked: LockedInstall) -> str:
    """``pip install --require-hashes`` of the lock's list, written by the same RUN: pip
    then takes exactly those files or fails (a requirements file also carries the hashes
    that a command line cannot)."""
    listing = f"/tmp/mlcc-pip-{locked.id}.txt"
    lines = " \\\n    ".join(shlex.quote(p.line()) for p in locked.packages)
    return (
        f"printf '%s\\n' \\\n    {lines} \\\n    > {listing}"
        f" && {pip_install} --require-hashes -r {listing} && rm -f {listing}"
    )


def place_args(
    steps: Sequence[Step], options: Options, hosts: Sequence[Route]
) -> Tuple[Tuple[Step, ...], Tuple[Tuple[str, Optional[str]], ...]]:
    """The steps with each mirror build arg declared by the first step that uses it, and
    every mirror build arg they use, with its default: the mirror asked for, else the
    public host (``hosts``: the Stack's, routed); pip's own settings (no default) where a
    step runs pip. Only those used: a chained build's shared stages stay byte-identical
    across benchmarks. Declared with their first use because a Dockerfile ARG takes part
    in the cache key of every RUN after it: declared at the top, GIT_MIRROR would split
    the stack prefix that benchmarks share into one per set of hosts they fetch from."""
    chosen = dict(options.mirrors)
    routes = [("${" + h.var + "}", h.var, chosen.get(h.var, h.public)) for h in hosts]
    pip = [(p.var, chosen.get(p.var)) for p in PIP_SETTINGS]
    declared: Dict[str, Optional[str]] = {}
    placed: List[Step] = []
    for step in steps:
        text = "\n".join(step.commands)
        first: List[Tuple[str, Optional[str]]] = []
        runs_pip = " pip install " in text
        if runs_pip or "${" in text:  # most steps fetch nothing from a mirrored host
            used = [(var, value) for token, var, value in routes if token in text]
            first = [(var, value) for var, value in (used + pip if runs_pip else used) if var not in declared]
            declared.update(first)
        placed.append(step._replace(args=tuple(first)) if first or step.args else step)
    order = [var for _token, var, _value in routes] + [var for var, _value in pip]
    return tuple(placed), tuple((var, declared[var]) for var in order if var in declared)


def merged_args(
    first: Tuple[Tuple[str, Optional[str]], ...], then: Tuple[Tuple[str, Optional[str]], ...]
) -> Tuple[Tuple[str, Optional[str]], ...]:
    """Two stages' mirror args as one list: each name once, the first stage's first."""
    seen = dict(first)
    return (*first, *[(name, value) for name, value in then if name not in seen])


def _copy_also(checkout: str, workdir: str, also: Sequence[Tuple[str, str]]) -> List[str]:
    """Copy further folders of the benchmark's checkout into the work directory, before the
    checkout is removed: the code a Dockerfile clones beside the benchmark, where the pinned
    commit keeps a copy of it (one fetch, one commit, checked like the benchmark's own)."""
    commands = []
    for path, dest in also:
        target = f"{workdir}/{dest}"
        commands += [
            f"mkdir -p {shlex.quote(target)}",
            f"cp -a {shlex.quote(f'{checkout}/{path}')}/. {shlex.quote(target)}/",
        ]
    return commands


def _sha256_check(sha256: str, path: str) -> str:
    """``sha256sum -c`` of a checksum file written beside the download (no pipe: a pipe
    hides a failing left side unless pipefail is set, which OCI-format builds cannot)."""
    listing = shlex.quote(f"{path}.sha256")
    return f"echo {shlex.quote(sha256 + '  ' + path)} > {listing} && sha256sum -c {listing}"


def _git_checkout(url: str, ref: str, hosts: Sequence[Route]) -> List[str]:
    """Check out one commit into the (empty) working directory and prove it: HEAD must be
    the pinned commit afterwards.

    A full SHA is fetched alone where the server allows it (GitHub; ``git daemon`` with
    uploadpack.allowAnySHA1InWant), else with the branches and tags (git 1.8 on RHEL 7
    cannot fetch by SHA; refspecs rather than --tags, whose meaning changed in git 1.9).
    A short hash can only be found in a full clone, and HEAD is then checked to start
    with it. No ``git -C``: RHEL 7's git 1.8.3 lacks it.
    """
    quoted = _url_word(host_mirrored(url, hosts))
    if len(ref) == 40:
        return [
            "git init -q .",
            f"(git fetch -q --depth 1 {quoted} {ref}"
            f" || git fetch -q {quoted} '+refs/heads/*:refs/remotes/origin/*' '+refs/tags/*:refs/tags/*')",
            f"git checkout -q --detach {ref}",
            f'test "$(git rev-parse HEAD)" = {ref}',
        ]
    return [
        f"git clone -q {quoted} .",
        f"git checkout -q --detach {ref}",
        f'expr "$(git rev-parse HEAD)" : {ref} > /dev/null',  # HEAD starts with the short hash
    ]


def _submodule_update(hosts: Sequence[Route]) -> str:
    """``git submodule update`` that fetches every submodule through the git mirror, at the
    commit the superproject pins (a gitlink names a commit, so the mirror cannot change it).
    Every source build runs it after its checkout (the framework's, a ``git:`` step's):
    where the pinned commit has no submodules it does nothing.

    ``.gitmodules`` names the public host's URLs, which git would fetch whatever the mirror
    says: ``-c url.<mirror>/.insteadOf=<public>/`` rewrites them for this one command and
    the nested submodule updates it runs (they inherit ``-c``), leaving no configuration in
    the image. One rewrite per scheme a .gitmodules may spell the host with, in a fixed
    order. The mirror's value, validated when it is generated in (an http(s) URL of host,
    port and plain path), stays a double-quoted ``${GIT_MIRROR}``: a value given only as a
    build arg is expanded, never run. No ``git -C``: RHEL 7's git 1.8.3 lacks it.
    """
    route = next((r for r in hosts if r.var == GIT.var), None)
    if route is None:
        return "git submodule update --init --recursive"
    host = _double_quoted(route.public.split("://", 1)[1])
    rewrites = [
        f'-c "url.${{{route.var}}}/.insteadOf={scheme}{host}/"'
        for scheme in ("https://", "http://", "git://")
    ]
    return f"git {' '.join(rewrites)} submodule update --init --recursive"


def _double_quoted(text: str) -> str:
    """``text`` literal inside a double-quoted shell word."""
    for char in ("\\", '"', "$", "`"):
        text = text.replace(char, "\\" + char)
    return text


def _requirement_name(requirement: str) -> str:
    if "#subdirectory=" in requirement:
        return (
            requirement.rsplit("#subdirectory=", 1)[1]
            + " ("
            + requirement.split("/")[2 if "://" in requirement else 0]
            + ")"
        )
    return requirement.split("==")[0]


def _env_prefix(env: Sequence[Tuple[str, str]]) -> str:
    """NAME=value words before a command; values that refer to ${NAME} stay expandable
    (the recipe schema allows nothing else that a double-quoted word would expand)."""
    return "".join(
        f'{name}="{value}" ' if "${" in value else f"{name}={shlex.quote(value)} " for name, value in env
    )


def extended_value(extension: EnvExtension) -> str:
    """The value an environment step gives a variable it extends: the folders around what
    the variable held, in the ``${NAME:+...}`` form Dockerfile ENV and POSIX shells both
    expand (Docker's "environment replacement": ``word`` may hold other variables). The
    separator comes only with a value: an empty entry left by ``/x:$NAME`` where the base
    sets no NAME would mean the working directory on PATH, LD_LIBRARY_PATH, PYTHONPATH and
    CPATH alike."""
    name = extension.name
    before = ":".join(extension.prepend)
    after = ":".join(extension.append)
    if before and after:
        return f"{before}${{{name}:+:${{{name}}}}}:{after}"
    if before:
        return f"{before}${{{name}:+:${{{name}}}}}"
    return f"${{{name}:+${{{name}}}:}}{after}"


def recorder_args(stack: Stack) -> List[str]:
    """What mlcc-record checks: the packages, headers and modules the stack pins."""
    args: List[str] = []
    kind = stack.base.packaging.recorder_flag
    if stack.cuda is not None:
        if not stack.runtime:  # a runtime image has no nvcc (mlcc verify checks so)
            args += ["--nvcc", "/usr/local/cuda/bin/nvcc"]
        for package in image_cuda_packages(stack):
            args += [kind, package.name]
    for lib, header in ((stack.cudnn, "cudnn"), (stack.nccl, "nccl")):
        if lib is None:
            continue
        if lib.method == "bundled":
            continue  # the framework reports it (--module)
        if lib.method == "tarball" and stack.runtime:  # the shared libraries, no headers
            folder = "/usr/local/cuda/lib64" if header == "cudnn" else f"{NCCL_TARBALL_HOME}/lib"
            args += ["--library", f"{header}={folder}"]
        elif lib.method == "tarball":
            base = "/usr/local/cuda/include" if header == "cudnn" else f"{NCCL_TARBALL_HOME}/include"
            args += ["--header", f"{header}={base}"]
        else:
            for package in image_library_packages(stack, lib):
                args += [kind, package.name]
    if stack.python is not None:
        args += ["--python", "python"]
    if stack.framework_module is not None:
        args += ["--module", stack.framework_module]
    return args


def _required(fact: Optional[T], what: str) -> T:
    """A fact the resolver puts into every stack that needs it (a hand-made Stack may lack it)."""
    if fact is None:
        raise MlccError(
            f"the stack lacks {what}", hint="stacks come from mlcc.resolve.Resolver, which adds it"
        )
    return fact
