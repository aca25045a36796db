"""A mirror that serves the same verified bytes does not change the content digest.

The plan records, per mirror build argument, whether every fetch through it is checked
against a pin the recipes hold (mlcc.render.plan.MirrorUse). The digest hashes a verified
mirror at its placeholder (the public host it replaces; pip's settings unset), whether
the mirror is given at generation or as a build arg; a mirror with an unverified fetch
keeps its URL in the digest.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

from mlcc.api import Pins, request_for
from mlcc.app.generate import SourceFlags
from mlcc.engines.base import BuildJob, BuildPolicy, EngineBuild, EngineSettings, ImageEngine, Log, job_for
from mlcc.image.base import ResolvedBase
from mlcc.kb.pip_locks import LockedInstall, PipLocks
from mlcc.render import FORMATS, Rendered, render
from mlcc.render import digest as digests
from mlcc.render.plan import Plan, build_plan
from mlcc.render.verified import mirror_uses
from mlcc.resolve import Stack

NVIDIA = "https://mirror.internal/nvidia"
GIT = "https://git.internal/github"
PYPI = "https://mirror.internal/pypi/simple"
CONDA = "https://mirror.internal/conda"
WMLCE = "https://mirror.internal/wmlce"


def _stack(kb: Any, resolver: Any, benchmark: str, **pins: Any) -> Stack:
    return resolver.resolve(request_for(kb, benchmark, Pins(**pins)))


def _cpu(kb: Any, resolver: Any) -> Stack:
    """tf_cnn_benchmarks without CUDA: no NVIDIA repository, git checkouts by full SHA."""
    return _stack(kb, resolver, "tf_cnn_benchmarks", cpu=True)


def _wheels_only(stack: Stack) -> Stack:
    """The stack with hash locks that take wheels alone (no sdist to build), as a lock of
    wheel-only installs would be: every pip install is then verified."""
    assert stack.pip_locks is not None
    installs: List[Tuple[str, LockedInstall]] = []
    for ident, locked in stack.pip_locks.installs:
        packages = tuple(
            p
            if not p.filename or p.filename.endswith(".whl")
            else p._replace(filename=f"{p.name}-{p.version}-py3-none-any.whl")
            for p in locked.packages
        )
        installs.append((ident, locked._replace(packages=packages)))
    return stack._replace(pip_locks=PipLocks(stack.pip_locks.path, tuple(installs)))


def _options(**mirrors: Optional[str]) -> Any:
    return SourceFlags(**mirrors).options()


def _uses(plan: Plan) -> Dict[str, Tuple[str, ...]]:
    return {m.var: m.unverified for m in plan.mirrors}


def _as_build_args(rendered: Rendered, **values: str) -> Tuple[Tuple[str, str], ...]:
    """The rendering's build args with the mirrors given on the build's command line."""
    given = dict(rendered.build_args)
    given.update(values)
    return tuple(given.items())


def _recompute(rendered: Rendered, build_args: Any) -> str:
    return digests.recompute(
        rendered.files,
        build_args,
        rendered.platform,
        rendered.digest,
        rendered.command,
        rendered.plan.placeholders,
    )


# ----------------------------------------------------------------------- what the plan records


def test_the_plan_records_per_mirror_whether_its_fetches_are_verified(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    cpu = _uses(build_plan(_cpu(kb, resolver)))
    assert cpu["NVIDIA_MIRROR"] == ()  # declared, fetches nothing: nothing to change
    assert cpu["GIT_MIRROR"] == ()  # the benchmark's source at a full commit, checked
    # tensorflow-cpu's lock builds sdists, whose build requirements pip takes unhashed
    assert any("from source" in why for why in cpu["PIP_INDEX_URL"])
    assert _uses(build_plan(_wheels_only(_cpu(kb, resolver))))["PIP_INDEX_URL"] == ()

    cuda = _uses(build_plan(_stack(kb, resolver, "tf_cnn_benchmarks", cuda="10.1", base="ubi8")))
    # the repositories' signing key comes unchecked from the mirror that serves the packages
    assert any(why.startswith("nvidia-key:cuda ") for why in cuda["NVIDIA_MIRROR"])

    ssd = _uses(build_plan(_stack(kb, resolver, "ssd", cuda="10.1", base="ubi8")))
    assert any("short hash" in why for why in ssd["GIT_MIRROR"])  # PyTorch from source at 828a6a3

    power = _uses(build_plan(_stack(kb, resolver, "ssd", arch="ppc64le")))
    for var in ("CONDA_MIRROR", "WMLCE_MIRROR"):
        assert any("channel's own index" in why for why in power[var]), var
    # Miniforge is checked against a checksum file fetched from the same mirror only
    assert any("checksum file from the same mirror" in why for why in power["GIT_MIRROR"])

    minigo = _uses(build_plan(_stack(kb, resolver, "minigo")))
    assert any("build-minigo-cc.sh" in why for why in minigo["GIT_MIRROR"])


def test_a_mirror_a_step_uses_without_a_recorded_fetch_is_unverified() -> None:
    """A fetch site that forgets to record itself is never taken for a checked one."""
    (git,) = mirror_uses(
        (),
        (),
        (),
        'curl -fsSL -o /tmp/x "${GIT_MIRROR}/x"',
        [("GIT_MIRROR", GIT, "https://github.com")],
        "",
        (),
    )
    assert not git.verified and "no fetch the plan recorded" in git.unverified[0]
    (unused,) = mirror_uses((), (), (), "true", [("GIT_MIRROR", GIT, "https://github.com")], "", ())
    assert unused.verified  # declared, fetched through by nothing


def test_every_published_fetch_through_a_mirror_is_recorded(kb) -> None:  # type: ignore[no-untyped-def]
    from mlcc.app.matrix import MatrixFilters, cell_results, published

    results, _ = cell_results(kb, MatrixFilters())
    for cell in published(results):
        assert cell.stack is not None
        for use in build_plan(cell.stack).mirrors:
            assert not any("no fetch the plan recorded" in why for why in use.unverified), (
                cell.cell.label,
                use,
            )


# ----------------------------------------------------------------------- one digest


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_verified_mirrors_at_generation_or_as_build_args_give_one_digest(kb, resolver, fmt: str) -> None:  # type: ignore[no-untyped-def]
    stack = _wheels_only(_cpu(kb, resolver))
    plain = render(stack, fmt)
    mirrored = render(stack, fmt, _options(mirror=NVIDIA, git_mirror=GIT, pip_index_url=PYPI))
    # the mirrors are in the files and the build args ...
    assert mirrored.files != plain.files
    assert dict(mirrored.build_args)["GIT_MIRROR"] == GIT
    assert dict(mirrored.build_args)["NVIDIA_MIRROR"] == NVIDIA
    assert dict(mirrored.build_args)["PIP_INDEX_URL"] == PYPI
    assert GIT in mirrored.content(mirrored.main_file)
    # ... and not in the digest
    assert mirrored.digest == plain.digest
    # given as build args to the published files: the same digest again
    args = _as_build_args(plain, NVIDIA_MIRROR=NVIDIA, GIT_MIRROR=GIT, PIP_INDEX_URL=PYPI)
    assert _recompute(plain, args) == plain.digest
    assert _recompute(plain, plain.build_args) == plain.digest
    # the mirrored files are stamped with the digest of the files generated without them
    assert mirrored.plan.placeholders == plain.plan.placeholders
    assert _recompute(plain, mirrored.build_args) == mirrored.digest
    # the files carry that digest, and their own command line
    assert all(digests.DIGEST_PLACEHOLDER not in c for _, c in mirrored.files)
    if fmt != "script":  # install.sh has no labels
        assert plain.digest in mirrored.content(mirrored.main_file)
    assert f"--git-mirror {GIT}" in mirrored.command


def test_a_verified_mirror_of_a_published_stack_gets_the_published_digest(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    """No rewritten lock: the real tf_cnn_benchmarks CPU cell, GIT_MIRROR and NVIDIA_MIRROR."""
    stack = _cpu(kb, resolver)
    plain = render(stack)
    assert render(stack, options=_options(mirror=NVIDIA, git_mirror=GIT)).digest == plain.digest
    # its pip installs build sdists: an index mirror could serve other build requirements
    assert render(stack, options=_options(pip_index_url=PYPI)).digest != plain.digest
    assert _recompute(plain, _as_build_args(plain, PIP_INDEX_URL=PYPI)) != plain.digest


def test_an_unverified_mirror_stays_in_the_digest(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    stack = _stack(kb, resolver, "ssd", arch="ppc64le")  # WML CE's conda channel
    plain = render(stack)
    seen = {plain.digest}
    for mirrors in (
        {"conda_mirror": CONDA},
        {"conda_mirror": CONDA + "2"},
        {"wmlce_mirror": WMLCE},
        {"wmlce_mirror": WMLCE + "2"},
    ):
        seen.add(render(stack, options=_options(**mirrors)).digest)
    assert len(seen) == 5
    # as a build arg too
    assert _recompute(plain, _as_build_args(plain, CONDA_MIRROR=CONDA)) != plain.digest
    # a CUDA stack's NVIDIA repositories are signed by a key the mirror serves
    gnmt = _stack(kb, resolver, "gnmt", cuda="10.1", base="ubi8")
    assert render(gnmt, options=_options(mirror=NVIDIA)).digest != render(gnmt).digest


ALL_MIRRORS = {
    "mirror": NVIDIA,
    "git_mirror": GIT,
    "pip_index_url": PYPI,
    "pip_extra_index_url": PYPI + "/extra",
    "conda_mirror": CONDA,
    "wmlce_mirror": WMLCE,
    "pytorch_mirror": "https://mirror.internal/pytorch",
}
FLAG_OF = {
    "NVIDIA_MIRROR": "mirror",
    "GIT_MIRROR": "git_mirror",
    "PIP_INDEX_URL": "pip_index_url",
    "PIP_EXTRA_INDEX_URL": "pip_extra_index_url",
    "CONDA_MIRROR": "conda_mirror",
    "WMLCE_MIRROR": "wmlce_mirror",
    "PYTORCH_MIRROR": "pytorch_mirror",
}


def test_across_the_published_set_the_digest_sees_the_unverified_mirrors_alone(kb) -> None:  # type: ignore[no-untyped-def]
    """Every mirror asked for gives the digest of only the unverified ones asked for."""
    from mlcc.app.matrix import MatrixFilters, cell_results, published

    results, _ = cell_results(kb, MatrixFilters())
    for cell in published(results):
        assert cell.stack is not None
        plain = render(cell.stack)
        unverified = {
            FLAG_OF[m.var]: ALL_MIRRORS[FLAG_OF[m.var]] for m in plain.plan.mirrors if not m.verified
        }
        everything = render(cell.stack, options=_options(**ALL_MIRRORS))
        assert everything.digest == render(cell.stack, options=_options(**unverified)).digest, cell.cell.label
        assert (everything.digest == plain.digest) == (not unverified), cell.cell.label


def test_recompute_checks_the_published_files_of_every_format(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    for fmt in sorted(FORMATS):
        rendered = render(_stack(kb, resolver, "ssd", arch="ppc64le"), fmt)
        assert _recompute(rendered, rendered.build_args) == rendered.digest


# ----------------------------------------------------------------------- skip-if-built


class _Storage(ImageEngine):
    """A local engine whose storage is a dict: what it built, under which tags."""

    name = "storage"

    def __init__(self) -> None:
        super().__init__(EngineSettings())
        self.tags: Dict[str, str] = {}
        self.built: List[EngineBuild] = []

    def check(self) -> None: ...

    def build_image(self, spec: EngineBuild, log: Any) -> str:
        self.built.append(spec)
        return f"image-{len(self.built)}"

    def tag(self, image: str, ref: str) -> None:
        self.tags[ref] = self.tags.get(image, image)

    def push(self, ref: Any, *, tls_verify: bool, credentials: Any, log: Any) -> None:
        raise AssertionError("nothing is pushed")

    def exists(self, ref: str) -> bool:
        return ref in self.tags

    def save(self, ref: str, destination: Path) -> Path:
        raise AssertionError("nothing is saved")


def _job(rendered: Rendered, policy: BuildPolicy) -> BuildJob:
    base = ResolvedBase(
        rendered.plan.base_image, "sha256:" + "1" * 64, rendered.stack.arch.name, ("rhel",), "8.10"
    )
    return job_for(rendered, policy, rendered.stack.benchmark.name)._replace(base=base)


def test_skip_if_built_finds_the_image_built_through_another_mirror(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    from mlcc.app import build

    engine = _Storage()
    policy = BuildPolicy()
    lines: List[str] = []
    stack = _cpu(kb, resolver)
    first = build.run_job(engine, _job(render(stack), policy), policy, Log(lines.append))
    assert first.status == "built" and len(engine.built) == 1

    # the same stack through verified mirrors: found, not built again
    mirrored = _job(render(stack, options=_options(mirror=NVIDIA, git_mirror=GIT)), policy)
    again = build.run_job(engine, mirrored, policy, Log(lines.append))
    assert again.status == "skipped" and len(engine.built) == 1
    assert str(mirrored.content) in again.reason and mirrored.content == first.job.content

    # built first through a mirror, the published files find it too
    other = _Storage()
    built = build.run_job(other, mirrored, policy, Log(lines.append))
    assert built.status == "built"
    assert ("GIT_MIRROR", GIT) in other.built[0].build_args  # the build did go through the mirror
    assert build.run_job(other, _job(render(stack), policy), policy, Log(lines.append)).status == "skipped"

    # an index mirror for sdist builds is another build: built again
    indexed = _job(render(stack, options=_options(pip_index_url=PYPI)), policy)
    assert build.run_job(engine, indexed, policy, Log(lines.append)).status == "built"
    assert len(engine.built) == 2


# ----------------------------------------------------------------------- chained stages


def _stages(rendered: Rendered) -> Dict[str, Tuple[str, str, str]]:
    """Per stage of a chained build: (BuildConfig name, output tag, its Dockerfile)."""
    from mlcc.render.openshift import ClusterOptions
    from mlcc.render.openshift.build import variant_build_objects

    found = {}
    for obj in variant_build_objects(rendered, ClusterOptions(chain=True, namespace="mlperf")):
        if obj["kind"] == "BuildConfig":
            stream, tag = obj["spec"]["output"]["to"]["name"].rsplit(":", 1)
            stage = {"mlcc-stack": "stack", "mlcc-framework": "framework"}.get(stream, "benchmark")
            found[stage] = (obj["metadata"]["name"], tag, obj["spec"]["source"]["dockerfile"])
    return found


def test_a_chained_stage_built_through_a_verified_mirror_keeps_its_published_tag(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    """A stage image is named by its Dockerfile's digest; a verified mirror in that
    Dockerfile is hashed at its placeholder, as the variant's content digest hashes it."""
    stack = _wheels_only(_cpu(kb, resolver))
    plain = _stages(render(stack))
    mirrored = _stages(render(stack, options=_options(mirror=NVIDIA, git_mirror=GIT, pip_index_url=PYPI)))
    assert set(plain) == set(mirrored) == {"stack", "framework", "benchmark"}
    for stage in ("stack", "framework"):
        # the stage does go through the mirror ...
        assert PYPI in mirrored[stage][2] and PYPI not in plain[stage][2]
        # ... and is the published stage: same BuildConfig, same tag
        assert mirrored[stage][:2] == plain[stage][:2]


def test_a_chained_stage_through_an_unverified_mirror_is_another_image(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    stack = _cpu(kb, resolver)  # its pip installs build sdists: an index mirror is not verified
    plain = _stages(render(stack))
    mirrored = _stages(render(stack, options=_options(pip_index_url=PYPI)))
    for stage in ("stack", "framework"):
        assert PYPI in mirrored[stage][2]
        assert mirrored[stage][1] != plain[stage][1] and mirrored[stage][0] != plain[stage][0]


# ----------------------------------------------------------------------- a mirrored base image

BASE_MIRROR = "mirror.internal:5000/ubi8/ubi:8.10"


def test_a_base_image_mirror_serving_the_same_manifest_builds_the_published_image(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    from mlcc.app import build

    stack = _cpu(kb, resolver)
    published = render(stack)
    mirrored = render(stack, options=_options(base_image=BASE_MIRROR))
    assert published.base_free_digest == published.digest
    # at generation the tag is not pinned: the reference is an input
    assert mirrored.digest != published.digest and BASE_MIRROR in mirrored.content("Dockerfile")
    # pinned by its manifest digest at build time, the base is that digest, wherever it comes from
    policy = BuildPolicy()
    engine = _Storage()
    lines: List[str] = []
    first = build.run_job(engine, _job(published, policy), policy, Log(lines.append))
    through_mirror = _job(mirrored, policy)
    assert through_mirror.digest == first.job.digest and through_mirror.content == first.job.content
    assert build.run_job(engine, through_mirror, policy, Log(lines.append)).status == "skipped"
    # ... and the build would pull it from the mirror, by digest
    assert dict(through_mirror.build_args)["BASE_IMAGE"].startswith("mirror.internal:5000/ubi8/ubi@sha256:")
    # another manifest behind the mirror's tag is another base: built
    other = through_mirror._replace(base=through_mirror.base._replace(digest="sha256:" + "2" * 64))  # type: ignore[union-attr]
    assert other.digest != first.job.digest
    assert build.run_job(engine, other, policy, Log(lines.append)).status == "built"
