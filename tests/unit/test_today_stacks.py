"""The stacks clusters run today (issue 36, data and resolution): CUDA 12.8 .. 13.0 as
NVIDIA's UBI images install them, Hopper/Ada/Blackwell GPUs with their node shapes, Grace
(aarch64) hosts chosen by the GPU, and UBI 10 (rhel10 packages, their own signing key)."""

from __future__ import annotations

import json

import pytest

from mlcc.api import Pins, request_for
from mlcc.errors import ConflictError, RecipeError
from mlcc.kb import load
from mlcc.render import render
from mlcc.resolve import Resolver
from mlcc.versions import parse_version, satisfies

# name -> (sm, first CUDA, its driver, GPUs per node, host arch)
NEW_GPUS = {
    "h200": ("sm_90", "11.8", "520.61.05", 8, None),
    "l40s": ("sm_89", "11.8", "520.61.05", None, None),
    "b200": ("sm_100", "12.8", "570.26", 8, None),
    "gb200": ("sm_100", "12.8", "570.26", 4, "aarch64"),
    "b300": ("sm_103", "12.9", "575.51.03", 8, None),
    "gb300": ("sm_103", "12.9", "575.51.03", 4, "aarch64"),
    "rtxpro6000": ("sm_120", "12.8", "570.26", None, None),
}


def test_list_gpus_shows_each_new_gpu_with_its_sm_cuda_and_driver(cli) -> None:  # type: ignore[no-untyped-def]
    table = cli("list", "gpus").out
    rows = {line.split()[0]: line for line in table.splitlines()[2:] if line.strip()}
    listed = {row["name"]: row for row in json.loads(cli("list", "gpus", "--json").out)}
    for name, (sm, cuda, driver, per_node, host) in NEW_GPUS.items():
        assert name in rows, table
        assert f"{sm} " in rows[name] and f" {cuda} " in rows[name] and rows[name].endswith(driver), rows[
            name
        ]
        assert (listed[name]["gpus_per_node"], listed[name]["host_arch"]) == (per_node, host)
        # the facts' source ids are given, and product labels GFD was not read for stay unconfirmed
        assert "product_labels" in listed[name]["unverified_fields"]


@pytest.mark.parametrize(
    ("gpu", "floor"), [("b200", "12.8"), ("gb200", "12.8"), ("gb300", "12.9"), ("b300", "12.9")]
)
def test_a_blackwell_gpu_resolves_to_a_cuda_that_targets_it(kb, resolver, gpu: str, floor: str) -> None:  # type: ignore[no-untyped-def]
    stack = resolver.resolve(request_for(kb, "nccl-tests", Pins(gpu=gpu)))
    assert stack.cuda is not None and parse_version(stack.cuda.version) >= parse_version(floor)
    assert stack.nccl is not None and stack.nccl.version.startswith("2.2")
    assert stack.gpu_capability == kb.gpus[gpu].compute_capability
    assert stack.variant.endswith("-" + kb.gpus[gpu].sm.replace("_", ""))


def test_a_grace_gpu_resolves_for_aarch64_on_an_x86_64_host_and_says_so(kb, resolver, cli) -> None:  # type: ignore[no-untyped-def]
    # the resolver fixture runs as an x86_64 host: the GPU, not the host, chooses
    for gpu in ("gb200", "gb300"):
        assert resolver.resolve(request_for(kb, "nccl-tests", Pins(gpu=gpu))).arch.name == "aarch64"
    # an HGX board's host is the vendor's choice: the host's arch stays the default
    assert resolver.resolve(request_for(kb, "nccl-tests", Pins(gpu="b200"))).arch.name == "x86_64"
    # --arch still wins
    asked = resolver.resolve(request_for(kb, "nccl-tests", Pins(gpu="gb200", arch="x86_64")))
    assert asked.arch.name == "x86_64"
    shown = cli("resolve", "nccl-tests", "--gpu", "gb200")
    assert shown.code == 0
    assert "aarch64" in shown.out.split("\n\n")[0] and "sm100" in shown.out
    assert (
        "note: GB200 nodes have NVIDIA Grace (aarch64) hosts: resolved for aarch64 without --arch"
        in shown.out
    )
    assert "recipes/gpus.yaml:" in shown.out
    notes = json.loads(cli("resolve", "nccl-tests", "--gpu", "gb300", "--json").out)["request"]["notes"]
    assert notes and "GB300" in notes[0] and "aarch64" in notes[0]
    # nothing to say when --arch was given
    assert "note:" not in cli("resolve", "nccl-tests", "--gpu", "gb200", "--arch", "aarch64").out


def test_a_gpu_the_asked_cuda_cannot_target_is_refused_naming_the_cuda_that_can(cli) -> None:  # type: ignore[no-untyped-def]
    refused = cli("resolve", "nccl-tests", "--gpu", "gb300", "--cuda", "12.8")
    assert refused.code == 3, refused.out
    assert "GB300 is compute capability 10.3 (sm_103): it needs CUDA >= 12.9" in refused.err
    assert "--cuda 12.9" in refused.err or "--cuda 13.0" in refused.err


def test_cuda_13_0_resolves_with_the_packages_nvidia_images_install_and_their_sources(cli) -> None:  # type: ignore[no-untyped-def]
    shown = cli("resolve", "nccl-tests", "--cuda", "13.0", "--arch", "x86_64", "-v")
    assert shown.code == 0, shown.err
    rows = {line.split()[0]: line for line in shown.out.splitlines() if line[:1].isalpha()}
    assert rows["cuda"].split()[1] == "13.0.0"
    assert rows["driver"].split()[1] == "580.65.06"
    assert rows["nccl"].split()[1] == "2.27.7"
    # each component names where it is written and its sources
    flat = " ".join(shown.out.split())
    for recipe in ("cuda.yaml", "nccl.yaml", "bases.yaml"):
        assert f"[recipes/{recipe}:" in flat, recipe
    assert flat.count("sources:") >= 4
    assert "gitlab.com/nvidia/container-images/cuda" in shown.out


def test_every_new_cuda_release_has_its_driver_and_rhel_packages(kb) -> None:  # type: ignore[no-untyped-def]
    drivers = {
        "12.8.0": "570.26",
        "12.8.1": "570.124.06",
        "12.9.0": "575.51.03",
        "12.9.1": "575.57.08",
        "13.0.0": "580.65.06",
    }
    releases = {r.version: r for r in kb.cuda}
    for version, driver in drivers.items():
        release = releases[version]
        assert release.min_driver == driver
        repos = dict(release.repos)
        assert repos["rhel9"] == ("x86_64", "aarch64") and "ppc64le" not in dict(release.host_gcc)
        assert ("rhel10" in repos) == version.startswith("13.")
        names = [p[0] for p in release.packages]
        minor = "-".join(version.split(".")[:2])
        assert f"cuda-cudart-{minor}" in names and f"libcublas-devel-{minor}" in names
        assert (f"cuda-nvprof-{minor}" in names) == version.startswith("12.")
        assert "host_gcc.x86_64" in release.prov.unverified_fields  # derived from Spack, not NVIDIA's table


def test_ubi10_is_listed_with_its_arches_python_and_x86_64_baseline(cli) -> None:  # type: ignore[no-untyped-def]
    table = cli("list", "bases").out
    assert "registry.access.redhat.com/ubi10/ubi:10.2" in table
    # the table itself says what an x86_64 host must be to run it, beside arches, Pythons, GCC
    assert "isa baseline" in table.splitlines()[0]
    row_text = next(line for line in table.splitlines() if line.startswith("ubi10"))
    assert " x86_64,aarch64 " in row_text and " x86_64:x86-64-v3 " in row_text
    assert " 3.12 " in row_text and row_text.endswith("14.2.1")
    row = next(r for r in json.loads(cli("list", "bases", "--json").out) if r["name"] == "ubi10")
    assert row["arches"] == ["x86_64", "aarch64"]
    assert row["isa_baseline"] == {"x86_64": "x86-64-v3"}
    assert row["python_default"] == "3.12" and row["repo_distro"] == "rhel10"
    assert row["verified"] is False  # its glibc and GCC release are not confirmed from the image


def test_ubi10_builds_cuda_13_from_the_rhel10_repository_and_its_own_key(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    stack = resolver.resolve(request_for(kb, "nccl-tests", Pins(cuda="13.0", base="ubi10", gpu="gb200")))
    assert (stack.base.name, stack.arch.name) == ("ubi10", "aarch64")
    rendered = render(stack)
    dockerfile = rendered.content(rendered.main_file)
    assert "compute/cuda/repos/rhel10/sbsa" in dockerfile
    assert "rhel10/sbsa/CDF6BA43.pub" in dockerfile and "D42D0685.pub" not in dockerfile
    assert "libnccl-2.27.7-1+cuda13.0" in dockerfile


def test_cuda_12_9_on_ubi10_is_refused_because_nvidia_has_no_rhel10_packages_of_it(kb, resolver, cli) -> None:  # type: ignore[no-untyped-def]
    """Issue 36's done-when lists `--cuda 12.9 --base ubi10` among the requests that resolve.
    Decided otherwise, on the evidence: NVIDIA's first CUDA with rhel10 packages is 13.0.0 (its
    13.0 features archive adds RHEL 10.0; its container history has ubi10 image folders from
    13.0.0 on and none for 12.8.x/12.9.x), and no public source shows its rhel10 repository
    carrying a 12.x toolkit. A stack made up for it would install packages that do not exist,
    so the request is refused, naming the CUDA UBI 10 carries and the bases that carry 12.9."""
    with pytest.raises(ConflictError) as caught:
        resolver.resolve(request_for(kb, "nccl-tests", Pins(cuda="12.9", base="ubi10")))
    text = str(caught.value)
    assert "has no rhel10/x86_64 packages" in text and "--cuda 13.0" in text
    refused = cli("resolve", "nccl-tests", "--cuda", "12.9", "--base", "ubi10")
    assert refused.code == 3 and not refused.out
    why = " ".join(refused.err.split())
    for release in ("12.9.0", "12.9.1"):
        assert (
            f"CUDA {release} has no rhel10/x86_64 packages (NVIDIA's rhel10 repositories do not carry it)"
            in why
        )
    assert "--cuda 13.0 -> ubi10/x86_64, CUDA 13.0.0" in why  # what UBI 10 can carry
    assert "--base ubi9 -> ubi9/x86_64, CUDA 12.9.1" in why  # where 12.9 can go


def test_ubi9_keeps_the_family_key(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    stack = resolver.resolve(request_for(kb, "nccl-tests", Pins(cuda="13.0", base="ubi9")))
    rendered = render(stack)
    assert "rhel9/x86_64/D42D0685.pub" in rendered.content(rendered.main_file)


def test_ubi9_is_at_its_current_minor_with_the_x86_64_baseline_rhel9_needs(kb, cli) -> None:  # type: ignore[no-untyped-def]
    # 9.8 is the newest UBI 9 minor public Dockerfiles pull by digest (recipes/bases.yaml ubi9-tags)
    rows = {r["name"]: r for r in json.loads(cli("list", "bases", "--json").out)}
    for name, image in (("ubi9", "ubi9/ubi"), ("ubi9-minimal", "ubi9/ubi-minimal")):
        assert rows[name]["image"] == f"registry.access.redhat.com/{image}:9.8"
        assert rows[name]["isa_baseline"] == {"x86_64": "x86-64-v2"}
        prov = kb.base(name).prov
        assert "tag" not in prov.unverified_fields
        assert any("ubi9/ubi:9.8-1782365825@sha256:" in text for text in prov.source)
    # UBI 10 by the same rule: its newest minor seen pulled by digest (10.2), not 10.0
    assert rows["ubi10"]["image"] == "registry.access.redhat.com/ubi10/ubi:10.2"
    assert "tag" not in kb.base("ubi10").prov.unverified_fields
    # every other base has no baseline beyond its arch's first level: the table shows a dash
    ubi8 = next(line for line in cli("list", "bases").out.splitlines() if line.startswith("ubi8 "))
    assert " - " in ubi8


# version -> (driver, cudart, cuBLAS): NVIDIA's RPMs as Amazon Linux 2023 lists them and its
# cuda-toolkit metapackage on PyPI pins them (recipes/cuda.yaml al2023-nvidia-packages)
LATER_RELEASES = {
    "13.0.1": ("580.82.07", "13.0.88-1", "13.0.2.14-1"),
    "13.0.2": ("580.95.05", "13.0.96-1", "13.1.0.3-1"),
    "13.1.0": ("590.44.01", "13.1.80-1", "13.2.0.9-1"),
}


def test_cuda_releases_after_13_0_0_are_recorded_with_their_driver_packages_and_doubts(kb) -> None:  # type: ignore[no-untyped-def]
    releases = {r.version: r for r in kb.cuda}
    for version, (driver, cudart, cublas) in LATER_RELEASES.items():
        release = releases[version]
        minor = "-".join(version.split(".")[:2])
        pins = dict(release.packages)
        assert release.min_driver == driver
        assert pins[f"cuda-cudart-{minor}"] == cudart and pins[f"libcublas-devel-{minor}"] == cublas
        assert pins[f"cuda-libraries-{minor}"] == f"{version}-1"
        # no NVIDIA image of the release was read: which repositories carry it stays unconfirmed
        assert "repos" in release.prov.unverified_fields
        assert dict(release.repos) == {"rhel9": ("x86_64", "aarch64"), "rhel10": ("x86_64", "aarch64")}
    # 13.0.2 keeps 13.0.1's nvtx and NPP (the metapackage pins the same wheels)
    assert (
        dict(releases["13.0.2"].packages)["libnpp-13-0"] == dict(releases["13.0.1"].packages)["libnpp-13-0"]
    )


def test_a_stack_that_needs_nccl_says_which_newer_cuda_has_none(cli) -> None:  # type: ignore[no-untyped-def]
    shown = cli("resolve", "nccl-tests", "--cuda", "13.0", "--arch", "x86_64")
    assert shown.code == 0, shown.err
    flat = " ".join(shown.out.split())
    assert (
        "newest CUDA release with x86_64 packages for rhel9 (13.1.0, 13.0.2, 13.0.1 have no NCCL build known)"
        in flat
    )
    refused = cli("resolve", "nccl-tests", "--cuda", "13.1")
    assert refused.code == 3
    assert "no NCCL build is known for CUDA 13.1.0 on rhel9/x86_64" in refused.err
    assert "--cuda 13.0" in refused.err


def test_host_gcc_bounds_of_12_8_to_13_x_pick_a_toolset_or_refuse(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    # GCC 14 (gcc-toolset-14 on UBI 9) is first accepted by 12.8 (Spack: gcc@14 conflicts cuda@:12.6)
    stack = resolver.resolve(
        request_for(kb, "nccl-tests", Pins(base="ubi9", cuda="12.8", gcc="14", arch="x86_64"))
    )
    assert stack.gcc.toolset is not None and stack.gcc.toolset.name == "gcc-toolset-14"
    with pytest.raises(ConflictError) as caught:
        resolver.resolve(
            request_for(kb, "nccl-tests", Pins(base="ubi9", cuda="12.6", gcc="14", arch="x86_64"))
        )
    assert "CUDA 12.6.3 on x86_64 accepts GCC <14" in str(caught.value)
    # UBI 10's system GCC 14 is within CUDA 13.0's bound (<16): no toolset needed
    ubi10 = resolver.resolve(request_for(kb, "nccl-tests", Pins(base="ubi10", cuda="13.0", arch="x86_64")))
    assert ubi10.gcc.toolset is None and ubi10.gcc.version == "14.2.1"
    assert satisfies(ubi10.gcc.version, ubi10.cuda.host_gcc_spec("x86_64"))


def test_a_system_gcc_too_new_for_the_cuda_and_no_toolset_is_refused_naming_the_bound(recipes_copy) -> None:  # type: ignore[no-untyped-def]
    # a UBI 10 whose system GCC were 16: nvcc 13.0 rejects it, and UBI 10 offers no older toolset
    bases = recipes_copy / "bases.yaml"
    bases.write_text(bases.read_text().replace('system: "14.2.1"', 'system: "16.1.1"'))
    kb = load(str(recipes_copy))
    with pytest.raises(ConflictError) as caught:
        Resolver(kb, host_arch="x86_64").resolve(
            request_for(kb, "nccl-tests", Pins(base="ubi10", cuda="13.0", arch="x86_64"))
        )
    assert "CUDA 13.0.0 on x86_64 accepts GCC <16; ubi10 offers system 16.1.1" in str(caught.value)


@pytest.mark.parametrize(
    ("gpu", "torch", "gencode"),
    [("b200", "10.0", "sm_100"), ("gb300", "10.3", "sm_103"), ("rtxpro6000", "12.0", "sm_120")],
)
def test_source_builds_compile_for_the_blackwell_gpu_asked(
    kb, resolver, gpu: str, torch: str, gencode: str
) -> None:  # type: ignore[no-untyped-def]
    stack = resolver.resolve(request_for(kb, "nccl-tests", Pins(gpu=gpu)))
    spelled = dict(stack.gpu_arch_env)
    assert spelled["TORCH_CUDA_ARCH_LIST"] == torch and spelled["TF_CUDA_COMPUTE_CAPABILITIES"] == torch
    # nccl-tests' Makefile takes NVCC_GENCODE from the environment (its build.arch_list_env)
    sm = gencode.split("_")[1]
    dockerfile = render(stack).content(render(stack).main_file)
    assert f'NVCC_GENCODE="-gencode=arch=compute_{sm},code={gencode}"' in dockerfile


def test_without_gpu_nccl_tests_keeps_its_makefiles_own_arch_list(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    stack = resolver.resolve(request_for(kb, "nccl-tests", Pins(cuda="13.0")))
    assert stack.gpu_arch_env == ()
    assert "NVCC_GENCODE" not in render(stack).content(render(stack).main_file)


def test_a_recipe_declares_its_own_arch_list_variable_and_spelling(recipes_copy) -> None:  # type: ignore[no-untyped-def]
    # what a TransformerEngine build declares: NVTE_CUDA_ARCHS spells a GPU "100a" (sm_100a)
    recipe = recipes_copy / "benchmarks" / "nccl-tests.yaml"
    text = recipe.read_text()
    recipe.write_text(
        text.replace(
            "  env:\n    LOGDIR: /results\n",
            '  env:\n    LOGDIR: /results\n    NVTE_CUDA_ARCHS: "90a"\n    TORCH_CUDA_ARCH_LIST: "9.0"\n',
        ).replace("  arch_list_env:\n", '  arch_list_env:\n    NVTE_CUDA_ARCHS: "{sm}a"\n')
    )
    kb = load(str(recipes_copy))
    resolver = Resolver(kb, host_arch="x86_64")
    for gpu, nvte, torch in (("b200", "100a", "10.0"), ("gb300", "103a", "10.3")):
        stack = resolver.resolve(request_for(kb, "nccl-tests", Pins(gpu=gpu)))
        dockerfile = render(stack).content(render(stack).main_file)
        assert f'NVTE_CUDA_ARCHS="{nvte}"' in dockerfile and f'TORCH_CUDA_ARCH_LIST="{torch}"' in dockerfile
    plain = resolver.resolve(request_for(kb, "nccl-tests", Pins(cuda="13.0")))
    assert 'NVTE_CUDA_ARCHS="90a"' in render(plain).content(render(plain).main_file)


def test_an_arch_list_spelling_with_an_unknown_placeholder_is_a_recipe_error(recipes_copy) -> None:  # type: ignore[no-untyped-def]
    gpus = recipes_copy / "gpus.yaml"
    gpus.write_text(
        gpus.read_text().replace('TORCH_CUDA_ARCH_LIST: "{capability}"', 'TORCH_CUDA_ARCH_LIST: "{gpu}"')
    )
    with pytest.raises(RecipeError) as caught:
        load(str(recipes_copy))
    assert "recipes/gpus.yaml:" in str(
        caught.value
    ) and "arch_list_env.variables.TORCH_CUDA_ARCH_LIST" in str(caught.value)


@pytest.mark.parametrize("gpu", ["p100", "v100"])
def test_a_gpu_cuda_13_dropped_resolves_to_the_last_cuda_that_targets_it(kb, resolver, cli, gpu: str) -> None:  # type: ignore[no-untyped-def]
    # CUDA 13.0 dropped Pascal and Volta (offline compilation and library support)
    stack = resolver.resolve(request_for(kb, "nccl-tests", Pins(gpu=gpu)))
    assert stack.cuda is not None and stack.cuda.minor == "12.9"
    refused = cli("resolve", "nccl-tests", "--gpu", gpu, "--cuda", "13.0")
    assert refused.code == 3
    sm = kb.gpus[gpu].sm
    assert f"({sm}): it needs CUDA >= {kb.gpus[gpu].min_cuda} and <= 12.9" in refused.err
    assert "--cuda 12.9" in refused.err
    # the CUDA row says why it is not the default stack's, in words any request for it gets
    for asked in (("--gpu", gpu), ("--gpu", gpu, "--cuda", "12.9")):
        flat = " ".join(cli("resolve", "nccl-tests", *asked, "--arch", "x86_64").out.split())
        capability = kb.gpus[gpu].compute_capability
        assert f"newest CUDA release that targets compute capability {capability} with x86_64" in flat
        assert "not the default stack's (13.0.0)" in flat
    row = next(r for r in json.loads(cli("list", "gpus", "--json").out) if r["name"] == gpu)
    assert row["max_cuda"] == "12.9"
    assert (
        next(r for r in json.loads(cli("list", "gpus", "--json").out) if r["name"] == "t4")["max_cuda"]
        is None
    )
