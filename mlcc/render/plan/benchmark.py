"""The benchmark's steps: its packages, its recipe's build steps and the scripts they run,
sshd for multi-node runs, a runtime image's final stage, and the manifest."""

from __future__ import annotations

import shlex
from typing import List, Sequence, Set, Tuple

from mlcc.kb.model import BuildStep
from mlcc.kb.pip_locks import PipInstall, pip_names
from mlcc.render import fetches
from mlcc.render.manifest import CONDA_ENV
from mlcc.render.mirror import MIRROR_NAME, PIP_SETTINGS, host_mirrored
from mlcc.render.plan.commands import (
    _copy_also,
    _env_prefix,
    _git_checkout,
    _requirement_name,
    _sh,
    _submodule_update,
    extended_value,
    recorder_args,
)
from mlcc.render.plan.model import (
    BASE_DEPENDENCIES,
    BUILD_STAGE,
    HANDOFF,
    LDCONFIG,
    LOCAL_SOURCE,
    LOCAL_SOURCE_NO_DEPS,
    MANIFEST_DIR,
    MLCC_HOME,
    NCCL_TARBALL_HOME,
    RECORDER,
    SCRIPTS,
    VENV,
    Step,
)
from mlcc.render.plan.writer import StepWriter


class BenchmarkSteps(StepWriter):
    """The benchmark's own steps, and what the image records about itself."""

    def benchmark(self) -> None:
        bench = self.stack.benchmark
        build = bench.build
        if build is None:
            return
        packages = list(build.packages_for(self.base.family))
        if build.mpi is not None:
            packages += [p for p in build.mpi.packages_for(self.base.family) if p not in packages]
        self.add(f"{bench.name}: system packages", self.install(packages))
        if build.mpi is not None:
            self.sshd()
        self.add(f"{bench.name}: environment", env=self.benchmark_env())
        if build.source is None:
            self.add(f"{bench.name}: work directory", [f"mkdir -p {build.workdir}"])
        else:
            src = build.source
            checkout = "/tmp/mlcc-source"
            folder = f"{checkout}/{src.path}" if src.path else checkout
            repository = host_mirrored(src.repository + ".git", self.hosts)
            self.fetched.append(fetches.git(f"source:{bench.name}", repository, src.commit))
            self.add(
                f"{bench.name}: source {src.repository} @ {src.commit[:12]}"
                + (f" ({src.path})" if src.path else ""),
                [
                    *_git_checkout(src.repository + ".git", src.commit, self.hosts),
                    f"mkdir -p {build.workdir}",
                    f"cp -a {shlex.quote(folder)}/. {build.workdir}/",
                    *_copy_also(checkout, build.workdir, src.also),
                    f"rm -rf {checkout} {build.workdir}/.git",
                ],
                workdir=checkout,
            )
        for step in build.steps:
            if step.applies_to(self.arch, self.base.family):
                self.build_step(build.workdir, step)
        writable = [build.workdir, *build.writable, MLCC_HOME]
        self.add(
            f"{bench.name}: writable by OpenShift's arbitrary UID (group 0)",
            [
                f"mkdir -p {' '.join(writable)}",
                f"chgrp -R 0 {' '.join(writable)}",
                f"chmod -R g=u {' '.join(writable)}",
            ],
        )
        # A host's /data and /results (the dataset, other runs' results) belong to their
        # owners: install.sh creates the folders and changes no group or mode of anything.
        self.steps[-1] = self.steps[-1]._replace(
            host=Step(f"{bench.name}: folders it reads and writes", (f"mkdir -p {' '.join(writable)}",))
        )

    def runtime_benchmark(self) -> None:
        """The final stage's own steps: the benchmark's runtime packages, what the build
        stage made (the Python environment, the work directory, the recipe's paths), its
        environment and the folders it writes."""
        bench = self.stack.benchmark
        build = bench.build
        assert build is not None  # the resolver makes no runtime stack without one
        family = self.base.packaging
        packages = list(build.runtime_packages_for(family))
        if build.mpi is not None:
            packages += [p for p in build.mpi.packages_for(self.base.family) if p not in packages]
        self.add(f"{bench.name}: system packages it runs with", self.install(packages))
        if build.mpi is not None:
            self.sshd()
        copied: List[str] = []
        env: List[Tuple[str, str]] = []
        fw = self.stack.framework
        if fw is not None and fw.install.method == "conda":
            # the environment the framework lives in, not the installer's base it was made with
            copied.append(CONDA_ENV)
            env += [("PATH", f"{CONDA_ENV}/bin:${{PATH}}"), *fw.install.build_env]
        elif self.stack.python is not None:
            copied.append(VENV)
        copied += [build.workdir, *[p for p in build.runtime_copy if p not in copied]]
        copies = [(path, path) for path in copied]
        libraries = self.tarball_libraries()
        if libraries:  # the handoff's shared libraries, merged into their own folders
            copies.append((f"{HANDOFF}/", "/"))
        self.steps.append(
            Step(
                f"{bench.name}: what the build stage made",
                commands=LDCONFIG if libraries else (),
                copies=tuple(copies),
                env=tuple(env),
                from_stage=BUILD_STAGE,
            )
        )
        self.add(f"{bench.name}: environment", env=self.benchmark_env())
        for step in build.steps:  # what the build set up outside the copies: again, here
            if step.kind == "script" and step.runtime and step.applies_to(self.arch, self.base.family):
                self.build_step(build.workdir, step)
        # the copies keep the build stage's group and modes: only the folders not copied
        writable = [p for p in [*build.writable, MLCC_HOME] if p not in copied]
        self.add(
            f"{bench.name}: writable by OpenShift's arbitrary UID (group 0)",
            [
                f"mkdir -p {' '.join(writable)}",
                f"chgrp -R 0 {' '.join(writable)}",
                f"chmod -R g=u {' '.join(writable)}",
            ],
        )

    def tarball_libraries(self) -> List[Tuple[str, str]]:
        """(folder, file pattern) of the shared libraries of cuDNN and NCCL from tarballs:
        a runtime image's final stage takes these, and neither headers nor static archives."""
        found: List[Tuple[str, str]] = []
        cuda = self.stack.cuda
        if self.stack.cudnn is not None and self.stack.cudnn.method == "tarball" and cuda is not None:
            found.append((f"/usr/local/cuda-{cuda.minor}/", "libcudnn*.so*"))  # where the link points
        if self.stack.nccl is not None and self.stack.nccl.method == "tarball":
            found.append((f"{NCCL_TARBALL_HOME}/", "libnccl*.so*"))
        return found

    def build_only_installed(self) -> List[str]:
        """The build-only Python packages (recipes/tools.yaml) that a pip install of this
        build names or its lock pins, in the rule's order. The names are PEP 503's, which the
        knowledge base recorded for the rules and for every install its lock files have."""
        names: Set[str] = set()
        for ident, _previous, install in self.pip_installs:
            locked = self.stack.pip_locks.get(ident) if self.stack.pip_locks else None
            names.update(locked.names if locked is not None else pip_names(install.requirements))
        return [name for name, canonical in self.stack.build_only if canonical in names]

    def handoff(self) -> None:
        """The build stage's last step in a runtime image: gather the shared libraries the
        final stage takes (their symlinks kept, under their own paths) and uninstall the
        build-only packages from the environment it copies."""
        commands: List[str] = []
        for folder, pattern in self.tarball_libraries():
            commands += [
                f"mkdir -p {HANDOFF}",
                f"find {folder} -name '{pattern}' ! -type d -exec cp -a --parents -t {HANDOFF}/ {{}} +",
                f"test -d {HANDOFF}{folder}",
            ]
        build_only = self.build_only_installed()
        if build_only:
            commands.append(_sh(["python", "-m", "pip", "uninstall", "-y", *build_only]))
        if commands:
            commands = list(dict.fromkeys(commands))  # one mkdir
            title = f"{self.stack.benchmark.name}: what the final stage takes (build-only files left out)"
            self.add(title, commands)

    def benchmark_env(self) -> List[Tuple[str, str]]:
        """The recipe's environment: its values (the arch lists as --gpu spells them), HOME,
        then the variables it extends, each around the value the stage's base gives it."""
        build = self.stack.benchmark.build
        assert build is not None
        extended = [(ext.name, extended_value(ext)) for ext in build.env_extensions]
        return [*self.gpu_arch(build.env, build.arch_list_names), ("HOME", MLCC_HOME), *extended]

    def sshd(self) -> None:
        self.add(
            f"{self.stack.benchmark.name}: sshd and ssh for MPIJob launchers and workers (mpi-operator)",
            [
                # no host keys: a key made here would be in every pull of the image, shared by
                # every pod of every run; the worker makes its own when it starts (run manifest)
                "mkdir -p /run/sshd",
                "sed -i 's/^#\\?StrictModes .*/StrictModes no/' /etc/ssh/sshd_config",
                "printf '%s\\n' 'Host *' '    StrictHostKeyChecking no'"
                " '    UserKnownHostsFile /dev/null' >> /etc/ssh/ssh_config",
            ],
        )

    def pip_step(self, step: BuildStep) -> List[str]:
        """A recipe's pip step. On an image base whose own packages mlcc cannot list (NGC's),
        a step of exact pins is two installs: the pins alone (--no-deps, hash-locked), then the
        same requirements, which pip finds installed and completes with the dependencies the
        base lacks; a full lock would pin those too and replace the base's own versions."""
        split = (
            bool(self.stack.from_base)
            and not step.no_deps
            and step.pip_index is None
            and _exact_pins(step.packages)
        )
        first = self.pip(
            step.packages,
            extra_index=step.pip_index,
            no_deps=step.no_deps or split,
            env=step.env,
            origins=step.origins,
        )
        if not split:
            return [first]
        reason = BASE_DEPENDENCIES.format(image=self.stack.base.ref)
        return [first, self.pip(step.packages, env=step.env, origins=step.origins, unlockable=reason)]

    def build_step(self, workdir: str, step: BuildStep) -> None:
        bench = self.stack.benchmark.name
        if step.kind == "pip":
            names = [_requirement_name(r) for r in step.packages]
            title = f"{bench}: pip install {', '.join(names[:4])}" + (", ..." if len(names) > 4 else "")
            self.add(title, self.pip_step(step))
        elif step.kind == "git":
            assert step.git_url and step.git_ref and step.dest
            name = step.dest.rsplit("/", 1)[1]
            self.fetched.append(fetches.git(name, host_mirrored(step.git_url, self.hosts), step.git_ref))
            commands = [
                *_git_checkout(step.git_url, step.git_ref, self.hosts),
                _submodule_update(self.hosts),
                _env_prefix(step.env) + "python setup.py install " + _sh(step.setup_options),
                f"rm -rf {step.dest}/build",
            ]
            self.add(
                f"{bench}: {name} @ {step.git_ref[:12]} " + " ".join(step.setup_options),
                commands,
                workdir=step.dest,
            )
        elif step.kind == "install":
            folder = step.install_dir or "."
            flag = (
                f"-e {shlex.quote(folder)}" if step.install == "editable" else shlex.quote(_as_path(folder))
            )
            # pip hashes files, not a directory: the source itself is the pinned checkout
            reason = LOCAL_SOURCE_NO_DEPS if step.no_deps else LOCAL_SOURCE
            self.record_pip(
                PipInstall((flag,), no_deps=step.no_deps, environment=self.pip_environment, unlockable=reason)
            )
            no_deps = " --no-deps" if step.no_deps else ""
            self.add(
                f"{bench}: its own package ({step.install})"
                if step.install_dir is None
                else f"{bench}: {step.install_dir} ({step.install})",
                [_env_prefix(step.env) + f"python -m pip install --no-cache-dir{no_deps} {flag}"],
                workdir=workdir,
                notes=[f"mlcc: DF011 waived: {reason}"],
            )
        elif step.kind == "make":
            args = " ".join(f'"{a}"' for a in step.make_args)
            self.add(
                f"{bench}: make", [_env_prefix(step.env) + f'make -C {workdir} -j"$(nproc)" {args}'.rstrip()]
            )
        elif step.kind == "script":
            assert step.script is not None
            target = f"{SCRIPTS}/{step.script}"
            self.script_fetches(step.script)
            self.add(
                f"{bench}: {step.script}" + (f" ({step.note})" if step.note else ""),
                [_env_prefix(step.env) + f"bash {target}"],
                copies=[(f"scripts/{step.script}", target)],
                workdir=workdir,
            )

    def script_fetches(self, name: str) -> None:
        """A recipe's script fetches by itself: mlcc planned none of it and cannot vouch for
        what it checks, so each mirror build argument it reads is unverified (pip, which it
        may run, reads its own)."""
        build = self.stack.benchmark.build
        text = dict(build.scripts).get(name, "") if build else ""
        used = [
            v for v in (MIRROR_NAME, *[r.var for r in self.hosts]) if f"${{{v}" in text or f"${v}" in text
        ]
        if "pip install" in text:
            used += [p.var for p in PIP_SETTINGS]
        self.unrecorded += [
            (var, f"scripts/{name} fetches through {var} by itself: mlcc cannot vouch for what it checks")
            for var in used
        ]

    def manifest(self) -> None:
        self.add(
            "The stack manifest, and a record of what the build really installed",
            [
                f"chmod 0755 {RECORDER}",
                f"{RECORDER} {_sh(recorder_args(self.stack))} > {MANIFEST_DIR}/installed.json",
                f"chmod 0644 {MANIFEST_DIR}/stack.json {MANIFEST_DIR}/installed.json",
            ],
            copies=[("stack.json", f"{MANIFEST_DIR}/stack.json"), ("mlcc-record", RECORDER)],
        )


def _as_path(folder: str) -> str:
    """A work-directory folder as ``pip install`` takes it for a path: it reads a word without a
    slash that does not start with a dot (``embedding_lib``) as a requirement name to look up
    on the index, whatever folder of that name is there (``-e`` looks for the folder first)."""
    return folder if "/" in folder or folder.startswith(".") else f"./{folder}"


def _exact_pins(requirements: Sequence[str]) -> bool:
    """Every requirement is ``name==version`` from the index (no URL, no wildcard)."""
    # imported here: packaging.requirements brings packaging.utils and packaging.tags
    # (logging, subprocess, platform), which only a stack on an image base needs
    from packaging.requirements import InvalidRequirement, Requirement

    for text in requirements:
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            return False
        specs = list(requirement.specifier)
        if requirement.url or len(specs) != 1 or specs[0].operator != "==" or specs[0].version.endswith(".*"):
            return False
    return True
