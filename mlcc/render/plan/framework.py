"""The framework's steps: a pip install, a conda environment, or a source build."""

from __future__ import annotations

from typing import Sequence, Tuple

from mlcc.kb.model import CONDA
from mlcc.render import fetches
from mlcc.render.manifest import CONDA_ENV
from mlcc.render.mirror import host_mirrored
from mlcc.render.plan.commands import (
    _env_prefix,
    _git_checkout,
    _required,
    _sh,
    _sha256_check,
    _submodule_update,
    _url_word,
)
from mlcc.render.plan.model import CONDA_FORGE, CONDA_ROOT
from mlcc.render.plan.writer import StepWriter


class FrameworkSteps(StepWriter):
    """The framework: installed from wheels, from conda, or built from source."""

    def framework(self) -> None:
        build = self.stack.framework
        assert build is not None
        install = build.install
        title = f"{build.framework} {build.version} ({build.variant}, {install.method})"
        if install.method == "pip":
            wheels = install.wheels_for(self._python_version())
            unchecked = [url for url in wheels if "#sha256=" not in url]
            reason = " ".join((install.wheels_sha256_unavailable or "none recorded").split())
            self.add(
                title,
                [
                    self.pip(
                        [*wheels, *install.packages],
                        index=install.index_url,
                        extra_index=install.extra_index_url,
                        find_links=install.find_links,
                        origins=[
                            *[install.wheels_origin or build.prov.origin] * len(wheels),
                            *(install.origins or [build.prov.origin] * len(install.packages)),
                        ],
                    )
                ],
                stage="framework",
                notes=[f"mlcc: DF010 waived: no checksum: {reason}"] if unchecked else [],
            )
        elif install.method == "conda":
            self.conda(title, install.channels, install.packages, install.build_env)
        else:
            self.source_build(title)

    def conda(
        self,
        title: str,
        channels: Sequence[str],
        packages: Sequence[str],
        build_env: Sequence[Tuple[str, str]],
    ) -> None:
        miniforge = _required(self.stack.installer, f"a Miniforge installer for {self.arch}")
        url = miniforge.url
        installer = "/tmp/" + url.rsplit("/", 1)[1]
        python = self.stack.python
        assert python is not None
        channel_args = " ".join(f"-c {_url_word(host_mirrored(c, self.hosts))}" for c in channels)
        conda_forge = f"{self._host_url(CONDA.var)}/{CONDA_FORGE}"
        commands = [f"curl -fsSL -o {installer} {_url_word(host_mirrored(url, self.hosts))}"]
        sha256 = miniforge.sha256
        checksum_url = None
        if sha256:
            commands.append(_sha256_check(sha256, installer))
        elif miniforge.checksum_suffix:
            checksum = installer + miniforge.checksum_suffix
            checksum_url = host_mirrored(url + miniforge.checksum_suffix, self.hosts)
            commands += [
                f"curl -fsSL -o {checksum} {_url_word(checksum_url)}",
                # the file names the installer without its folder: the step runs in /tmp
                f"sha256sum -c {checksum.rsplit('/', 1)[1]}",
            ]
        commands += [
            f"bash {installer} -b -p {CONDA_ROOT}",
            f"rm -f {installer}*",
            _env_prefix(build_env)
            + f"{CONDA_ROOT}/bin/conda create -y -p {CONDA_ENV} --override-channels"
            + f" {channel_args} -c {_url_word(host_mirrored(conda_forge, self.hosts))} "
            + _sh([f"python={python.version}", *packages]),
            f"{CONDA_ROOT}/bin/conda clean -afy",
        ]
        self.new_environment("conda", [*channels, *packages])
        builds_unknown = self.stack.framework.install.builds_unavailable if self.stack.framework else None
        self.fetched += [
            fetches.download(
                miniforge.name,
                host_mirrored(url, self.hosts),
                sha256,
                miniforge.sha256_unavailable,
                checksum_url,
            ),
            fetches.conda(
                [*[host_mirrored(c, self.hosts) for c in channels], host_mirrored(conda_forge, self.hosts)],
                [f"python={python.version}", *packages],
                builds_unknown,
            ),
        ]
        unbuilt = [p for p in packages if len(p.replace("==", "=").split("=")) < 3]
        self.add(
            title,
            commands,
            [("PATH", f"{CONDA_ENV}/bin:${{PATH}}"), *build_env],
            stage="framework",
            workdir="/tmp",
            notes=(
                [f"mlcc: conda builds not named ({', '.join(unbuilt)}): {' '.join(builds_unknown.split())}"]
                if unbuilt and builds_unknown
                else [f"mlcc: conda builds not named ({', '.join(unbuilt)}) and no reason recorded"]
                if unbuilt
                else []
            ),
        )

    def source_build(self, title: str) -> None:
        build = self.stack.framework
        assert build is not None and build.install.git_url and build.install.git_ref
        dest = f"/opt/src/{build.framework}"
        env = self.gpu_arch(build.install.build_env)
        commands = []
        if build.install.packages:
            commands.append(self.pip(build.install.packages, origins=build.install.origins))
        self.fetched.append(
            fetches.git(
                f"framework:{build.framework}",
                host_mirrored(build.install.git_url, self.hosts),
                build.install.git_ref,
                build.install.git_ref_unresolved,
            )
        )
        commands += [
            *_git_checkout(build.install.git_url, build.install.git_ref, self.hosts),
            _submodule_update(self.hosts),
            _env_prefix(env) + "python setup.py install",
            f"rm -rf {dest}/build",
        ]
        companions = [f"{name}=={version}" for name, version in build.companions]
        if companions:
            commands.append(self.pip(companions, no_deps=True, origins=[build.prov.origin] * len(companions)))
        notes = []
        if build.install.git_ref_unresolved:
            reason = " ".join(build.install.git_ref_unresolved.split())
            notes.append(f"mlcc: DF006 waived: {build.install.git_ref} is a short hash: {reason}")
        self.add(title, commands, stage="framework", notes=notes, workdir=dest)
