"""The resolver's rules: what the knowledge base and the user's pins say of one candidate.

Each rule is a predicate that returns the reasons (:class:`~mlcc.resolve.stages.Failure`) a
candidate fails, empty when it passes: a framework build for a benchmark and arch, a CUDA
release for a build, a base for a release, the Python, cuDNN, NCCL and GCC a base offers.
The search (:mod:`mlcc.resolve.candidates`, :mod:`mlcc.resolve.picks`) filters with them and
the explanations (:mod:`mlcc.resolve.explain`, :mod:`mlcc.resolve.reasons`) quote the same
reasons, so that "why not" is never a second judgement. Rules split in two where the
explanation must tell them apart: the knowledge base's (``*_rule_failures``) and the user's
pins (``*_pin_failures``).
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from mlcc.kb.model import Base, Benchmark, CudaRelease, FrameworkBuild, KnowledgeBase, LibBuild, PythonOption
from mlcc.resolve import gpu as gpu_rule
from mlcc.resolve.request import Request
from mlcc.resolve.stack import Installer
from mlcc.resolve.stages import Failure
from mlcc.versions import parse_version
from mlcc.versions import satisfies as _satisfies

# The downloads entry (recipes/tools.yaml) that installs conda framework builds.
CONDA_INSTALLER = "miniforge"


def _carried_note(release: CudaRelease, distro: str) -> str:
    arches = release.arches_on(distro)
    if not arches:
        return f" (NVIDIA's {distro} repositories do not carry it)"
    return f" (NVIDIA's {distro} repositories carry it for {', '.join(arches)})"


class Rules:
    """The rules of one knowledge base, as predicates over candidates; stateless beyond it."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb

    def benchmark_failures(self, bench: Benchmark, req: Request) -> List[Failure]:
        failures: List[Failure] = []
        if bench.unavailable is not None:
            failures.append(
                Failure(
                    "benchmark-unavailable",
                    f"mlcc can build no stack for {bench.name}: {bench.unavailable}",
                    bench.origin_of("unavailable"),
                )
            )
        accelerator = "cpu" if req.cpu else "cuda"
        if accelerator not in bench.accelerators:
            failures.append(
                Failure(
                    "benchmark-accelerator",
                    f"{bench.name} runs on {' or '.join(bench.accelerators)}, not {accelerator}",
                    bench.origin_of("accelerators"),
                )
            )
        if req.arch is not None and req.arch not in bench.arches:
            cause = bench.why_not_on(req.arch)
            failures.append(
                Failure(
                    "benchmark-arch",
                    f"{bench.name} supports {', '.join(bench.arches)}, not {req.arch}"
                    + (f": {cause}" if cause else ""),
                    bench.origin_of("arches_missing" if cause else "arches"),
                )
            )
        for name, _ in req.frameworks:
            carried = any(
                base.contents is not None and base.contents.carries(name) is not None
                for base in (self.kb.base(b) for b in bench.bases)
            )
            if (bench.framework is None or bench.framework.name != name) and not carried:
                uses = bench.framework.name if bench.framework else "no framework"
                failures.append(
                    Failure(
                        "benchmark-framework",
                        f"{bench.name} uses {uses}, not {name}",
                        bench.origin_of("framework"),
                    )
                )
        if req.python is not None and not bench.needs_python:
            failures.append(
                Failure("benchmark-python", f"{bench.name} uses no Python", bench.origin_of("python"))
            )
        return failures

    def framework_rule_failures(
        self, bench: Benchmark, build: FrameworkBuild, arch: str, accelerator: str
    ) -> List[Failure]:
        rule = bench.framework
        assert rule is not None
        failures: List[Failure] = []
        if not _satisfies(build.version, rule.versions):
            failures.append(
                Failure(
                    "framework-version",
                    f"{bench.name} accepts {rule.name} {rule.versions}, not {build.version}",
                    rule.origin,
                )
            )
        if arch not in build.arches:
            failures.append(
                Failure(
                    "framework-arch",
                    f"{build.label} is built for {', '.join(build.arches)}, not {arch}",
                    build.prov.origin,
                )
            )
        if build.install.method == "conda" and self.installer(arch) is None:
            tools = self.kb.downloads.get(CONDA_INSTALLER)
            failures.append(
                Failure(
                    "framework-installer",
                    f"{build.label} installs with conda, and no Miniforge installer for {arch} is known",
                    tools.prov.origin if tools else "recipes/tools.yaml",
                )
            )
        if (accelerator == "cpu") != build.is_cpu:
            kind = "a CPU" if build.is_cpu else "a CUDA"
            failures.append(
                Failure(
                    "framework-accelerator",
                    f"{build.label} is {kind} build",
                    build.prov.origin,
                    pin=accelerator == "cpu",
                )
            )
        return failures

    def installer(self, arch: str) -> Optional[Installer]:
        """The Miniforge installer for ``arch`` (conda builds), if the tools recipe has one."""
        download = self.kb.downloads.get(CONDA_INSTALLER)
        url = download.url(arch) if download else None
        if download is None or url is None:
            return None
        return Installer(
            download.name,
            download.version,
            url,
            download.checksum_suffix,
            download.sha256_for(arch),
            download.sha256_unavailable,
        )

    def framework_pin_failures(self, bench: Benchmark, build: FrameworkBuild, req: Request) -> List[Failure]:
        assert bench.framework is not None
        name = bench.framework.name
        pin = req.framework_pin(name)
        if pin is not None and not pin.matches(build.version):
            return [Failure("framework-pin", f"--with {name}={pin} excludes {build.version}", "", pin=True)]
        return []

    def cuda_rule_failures(
        self, bench: Benchmark, build: Optional[FrameworkBuild], release: CudaRelease, arch: str
    ) -> List[Failure]:
        failures: List[Failure] = []
        if build is not None and release.minor not in build.cuda:
            failures.append(
                Failure(
                    "cuda-framework",
                    f"{build.label} is built for CUDA {', '.join(build.cuda)}, not {release.version}",
                    build.prov.origin,
                )
            )
        if not _satisfies(release.version, bench.cuda):
            failures.append(
                Failure(
                    "cuda-benchmark",
                    f"{bench.name} needs CUDA {bench.cuda}",
                    bench.origin_of("cuda"),
                )
            )
        if not any(arch in arches for _, arches in release.repos):
            last = self.last_cuda_on(arch)
            failures.append(
                Failure(
                    "cuda-arch",
                    f"NVIDIA publishes no {arch} packages of CUDA {release.version}"
                    + (f" ({arch} packages end at CUDA {last})" if last else ""),
                    release.prov.origin,
                )
            )
        return failures

    def cuda_pin_failures(self, release: CudaRelease, req: Request) -> List[Failure]:
        failures: List[Failure] = []
        if req.cuda is not None and not req.cuda.matches(release.version):
            failures.append(
                Failure("cuda-pin", f"--cuda {req.cuda} excludes {release.version}", "", pin=True)
            )
        if req.driver is not None and parse_version(req.driver) < parse_version(release.min_driver):
            failures.append(
                Failure(
                    "cuda-driver",
                    f"CUDA {release.version} needs driver >= {release.min_driver}, --driver is {req.driver}",
                    release.prov.origin,
                    pin=True,
                )
            )
        problem = gpu_rule.gpu_problem(self.kb, req.gpu, release)
        if problem is not None:
            failures.append(Failure("cuda-gpu", problem[0], problem[1], pin=True))
        return failures

    def last_cuda_on(self, arch: str) -> Optional[str]:
        """The newest CUDA release NVIDIA publishes packages of for ``arch``."""
        for release in self.kb.cuda:  # newest first
            if any(arch in arches for _, arches in release.repos):
                return release.version
        return None

    def base_failures(
        self, base: Base, release: Optional[CudaRelease], arch: str, req: Request
    ) -> List[Failure]:
        return self.base_pin_failures(base, req) + self.base_rule_failures(base, release, arch)

    def base_rule_failures(self, base: Base, release: Optional[CudaRelease], arch: str) -> List[Failure]:
        failures: List[Failure] = []
        if arch not in base.arches:
            failures.append(
                Failure(
                    "base-arch",
                    f"{base.name} has no {arch} image",
                    base.prov.origin,
                )
            )
        if release is not None and not release.carried(base.repo_distro, arch):
            failures.append(
                Failure(
                    "cuda-repo",
                    f"CUDA {release.version} has no {base.repo_distro}/{arch} packages"
                    + _carried_note(release, base.repo_distro),
                    release.prov.origin,
                )
            )
        return failures

    def base_pin_failures(self, base: Base, req: Request) -> List[Failure]:
        if req.base is not None and base.name != req.base:
            return [Failure("base-pin", f"--base {req.base} excludes {base.name}", "", pin=True)]
        return []

    def python_options(
        self, bench: Benchmark, req: Request, build: Optional[FrameworkBuild], base: Base
    ) -> List[PythonOption]:
        return [
            option
            for option in base.pythons
            if (build is None or option.version in build.python)
            and _satisfies(option.version, bench.python)
            and (req.python is None or req.python.matches(option.version))
        ]

    def python_failures(
        self, bench: Benchmark, req: Request, build: Optional[FrameworkBuild], base: Base
    ) -> List[Failure]:
        offered = [o.version for o in base.pythons]
        wanted = [v for v in offered if _satisfies(v, bench.python)]
        failures: List[Failure] = []
        if build is not None:
            fitting = [v for v in wanted if v in build.python]
            if not fitting:
                failures.append(
                    Failure(
                        "python-framework",
                        f"{base.name} offers Python {', '.join(offered)}; {build.label} supports "
                        f"{', '.join(build.python)}",
                        build.prov.origin,
                    )
                )
            wanted = fitting
        if not wanted and bench.python and not failures:
            failures.append(
                Failure(
                    "python-benchmark",
                    f"{base.name} offers Python {', '.join(offered)}; {bench.name} needs {bench.python}",
                    bench.origin_of("python"),
                )
            )
        if req.python is not None:
            failures.append(
                Failure(
                    "python-pin",
                    f"--python {req.python} matches none of "
                    f"{', '.join(wanted) or 'the remaining versions'} on {base.name}",
                    base.prov.origin,
                    pin=True,
                )
            )
        return failures

    def lib_needed(
        self,
        library: str,
        bench: Benchmark,
        req: Request,
        build: Optional[FrameworkBuild],
        cuda: Optional[CudaRelease],
    ) -> bool:
        if cuda is None:
            return False
        if getattr(req, library) is not None or library in bench.requires or library in bench.links:
            return True
        return library == "cudnn" and build is not None and build.cudnn is not None

    def reference_version(self, bench: Benchmark, req: Request, component: str) -> Optional[str]:
        """The reference run's version of ``component``, when the default policy uses it."""
        if req.newest or bench.reference_stack is None:
            return None
        return bench.reference_stack.version_of(component)

    def lib_failures(
        self,
        library: str,
        cuda: CudaRelease,
        base: Base,
        arch: str,
        build: Optional[FrameworkBuild],
        spec: Optional[str],
        pin: object,
        candidates: Sequence[LibBuild],
    ) -> List[Failure]:
        title = "cuDNN" if library == "cudnn" else "NCCL"
        if not candidates:
            return [
                Failure(
                    f"{library}-availability",
                    f"no {title} build is known for CUDA {cuda.version} on {base.repo_distro}/{arch}",
                    f"recipes/{library}.yaml",
                )
            ]
        versions = ", ".join(sorted({c.version for c in candidates}, key=parse_version))
        failures: List[Failure] = []
        if spec is not None and build is not None:
            failures.append(
                Failure(
                    f"{library}-framework",
                    f"{build.label} needs {title} {spec}; CUDA {cuda.version} on "
                    f"{base.repo_distro}/{arch} has {versions}",
                    build.prov.origin,
                )
            )
        if pin is not None:
            where = f"CUDA {cuda.version} on {base.repo_distro}/{arch}"
            matched = [c.version for c in candidates if pin.matches(c.version)]  # type: ignore[attr-defined]
            if matched and spec is not None and build is not None:
                said = f"selects {', '.join(matched)} for {where}, outside {build.label}'s range {spec}"
            elif matched:
                said = f"selects {', '.join(matched)} for {where}"
            else:
                said = f"matches none of {versions} ({where})"
            failures.append(Failure(f"{library}-pin", f"--{library} {pin} {said}", "", pin=True))
        return failures

    def gcc_bounds(
        self,
        bench: Benchmark,
        build: Optional[FrameworkBuild],
        cuda: Optional[CudaRelease],
        arch: str,
    ) -> List[Tuple[str, str, str]]:
        """(specifier, who imposes it, origin) for every bound on the host compiler."""
        bounds: List[Tuple[str, str, str]] = []
        if cuda is not None:
            spec = cuda.host_gcc_spec(arch)
            if spec:
                bounds.append((spec, f"CUDA {cuda.version} on {arch}", cuda.prov.origin))
        if bench.gcc:
            bounds.append((bench.gcc, bench.name, bench.origin_of("gcc")))
        if build is not None and build.gcc:
            bounds.append((build.gcc, build.label, build.prov.origin))
        return bounds
