"""Properties every rendering must have: cache-friendly prefix, determinism, manifest,
digest, OpenShift arbitrary-UID permissions, pinned packages, every format."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, List, Tuple

import jsonschema
import pytest
from dockerfile_parse import DockerfileParser
from hypothesis import given, settings
from hypothesis import strategies as st

from mlcc.api import Pins, request_for
from mlcc.app.generate import check_options
from mlcc.app.published_set import generate_all
from mlcc.kb import load
from mlcc.lint.dockerfile import lint_dockerfile
from mlcc.render import FORMATS, render
from mlcc.render import digest as digests
from mlcc.render.plan import build_plan
from tests.conftest import REPO

SCHEMA = Path(__file__).resolve().parents[2] / "mlcc" / "stackfile" / "stack.schema.json"


def _stack(kb, resolver, benchmark: str, **pins: Any):  # type: ignore[no-untyped-def]
    return resolver.resolve(request_for(kb, benchmark, Pins(**pins)))


def _instructions(dockerfile: str) -> List[Tuple[str, str]]:
    """(instruction, value) pairs as a builder sees them: comments are not instructions."""
    parser = DockerfileParser(fileobj=__import__("io").BytesIO(dockerfile.encode()))
    return [(i["instruction"], i["value"]) for i in parser.structure if i["instruction"] != "COMMENT"]


@pytest.fixture(scope="module")
def published(kb):  # type: ignore[no-untyped-def]
    return generate_all(kb)


def test_published_set_covers_every_benchmark_on_ubi8_x86_64(kb, published) -> None:  # type: ignore[no-untyped-def]
    on_ubi8 = {g.rendered.stack.benchmark.name for g in published if g.folder.endswith("-ubi8-x86_64")}
    missing = set(kb.benchmarks) - on_ubi8
    # minigo and ncf's reference CUDA 10.0 has no RHEL 8 packages: they publish on UBI 7
    # (and say so in recipes/matrix.yaml), every other benchmark has a UBI 8 x86_64 cell.
    # v2.1's recipes that say they are INCOMPLETE (their images would not run the benchmark) stay
    # out of the published set (recipes/matrix.yaml says so); one that is complete must join it
    unfinished = {
        name
        for name, bench in kb.benchmarks.items()
        if bench.round == "v2.1"
        and "INCOMPLETE" in (REPO / "recipes" / "benchmarks" / "v2.1" / f"{bench.base_name}.yaml").read_text()
    }
    # maskrcnn's v2.1 recipe is complete (its steps build apex, DALI, NVIDIA's cocoapi and its own
    # package), and so are bert's (apex with bert's modules, mhalib) and ssd's (apex, DALI and
    # NVIDIA's DALI operators, NVIDIA's cocoapi); resnet50's, unet3d's and rnnt's still say INCOMPLETE
    assert unfinished <= {"resnet50-v2.1", "unet3d-v2.1", "rnnt-v2.1"}, unfinished
    # and those that say no stack can be built (unavailable: dlrm and minigo of v2.1) have none;
    # v5.x's recipes build on the NGC image NVIDIA's Dockerfile names (rgat-v5.1 publishes on NGC
    # DGL 25.03, not UBI 8), the six still saying INCOMPLETE stay out as v2.1's do
    unfinished |= {name for name, bench in kb.benchmarks.items() if bench.unavailable}
    unfinished |= {
        name for name, bench in kb.benchmarks.items() if bench.round in ("v5.0", "v5.1") and bench.incomplete
    }
    # retinanet-reference and the PyPI NeMo stacks (llama31_8b-pypi, llama31_405b-pypi,
    # llama2_70b_lora-pypi: PyPI's PyTorch 2.x wheels) publish their B200 and GB200 cells on UBI 9
    on_ngc = {name for name, bench in kb.benchmarks.items() if bench.bases}
    on_pypi = {"retinanet-reference", "llama31_8b-pypi", "llama31_405b-pypi", "llama2_70b_lora-pypi"}
    assert missing - unfinished - on_ngc <= {"minigo"} | on_pypi, missing
    assert {g.rendered.stack.benchmark.name for g in published} == set(kb.benchmarks) - unfinished
    assert any(g.folder == "maskrcnn/cuda10.1-cudnn7-ubi8-x86_64" for g in published)
    ppc = {g.rendered.stack.benchmark.name for g in published if g.rendered.stack.arch.name == "ppc64le"}
    assert ppc >= {"ssd", "gnmt", "transformer", "ncf", "tf_cnn_benchmarks", "nccl-tests"}
    assert "maskrcnn" not in ppc  # opencv-python has no ppc64le distribution (recipes note why)


def _prefix_key(stack) -> Tuple[Any, ...]:  # type: ignore[no-untyped-def]
    return (
        stack.base.name,
        stack.arch.name,
        stack.cuda.version if stack.cuda else None,
        stack.cudnn.version if stack.cudnn else None,
        stack.nccl.version if stack.nccl else None,
        stack.python.version if stack.python else None,
        stack.python.executable if stack.python else None,
    )


def test_stacks_sharing_base_cuda_cudnn_nccl_python_share_leading_instructions(kb, published) -> None:  # type: ignore[no-untyped-def]
    groups: Dict[Tuple[Any, ...], List[Any]] = defaultdict(list)
    for generated in published:
        groups[_prefix_key(generated.rendered.stack)].append(generated.rendered)
    shared_groups = [g for g in groups.values() if len({r.stack.benchmark.name for r in g}) > 1]
    assert len(shared_groups) >= 3, "the published set should exercise layer sharing"
    for group in shared_groups:
        first = group[0]
        shared_steps = [s for s in build_plan(first.stack).steps if s.shared]
        assert len(shared_steps) >= 4, [s.title for s in shared_steps]
        reference = _instructions(first.content("Dockerfile"))
        # FROM and the two ARGs, then RUN/ENV of each shared step
        length = 3 + sum(bool(s.commands) + bool(s.env) + len(s.args) for s in shared_steps)
        for other in group[1:]:
            mine = _instructions(other.content("Dockerfile"))
            assert mine[:length] == reference[:length], (first.variant, other.stack.benchmark.name)
            # and the prefix really ends there: benchmarks differ right after it
        assert any(_instructions(o.content("Dockerfile"))[length:] != reference[length:] for o in group[1:])


def test_rendering_is_byte_identical_across_runs_and_checkouts(kb, resolver, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    stack = _stack(kb, resolver, "maskrcnn", cuda="10.1")
    first = render(stack)
    assert render(stack) == first
    # a checkout elsewhere on disk (another machine) must render the same bytes
    moved = tmp_path / "elsewhere" / "recipes"
    shutil.copytree(Path(__file__).resolve().parents[2] / "recipes", moved)
    other_kb = load(str(moved))
    from mlcc.resolve import Resolver

    other = render(Resolver(other_kb).resolve(request_for(other_kb, "maskrcnn", Pins(cuda="10.1"))))
    assert other.files == first.files
    assert str(tmp_path) not in "".join(c for _, c in other.files)


def test_source_date_epoch_sets_created_label_and_nothing_else_is_time_dependent(
    kb, resolver, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    stack = _stack(kb, resolver, "ssd")
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    plain = render(stack).content("Dockerfile")
    assert "org.opencontainers.image.created" not in plain
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1561939200")
    stamped = render(stack)
    labels = DockerfileParser(fileobj=__import__("io").BytesIO(stamped.content("Dockerfile").encode())).labels
    assert labels["org.opencontainers.image.created"] == "2019-07-01T00:00:00Z"
    assert render(stack) == stamped


def test_stack_json_validates_and_matches_the_stack(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    for benchmark, pins in (
        ("maskrcnn", {"cuda": "10.1"}),
        ("tf_cnn_benchmarks", {"cpu": True, "base": "ubi8"}),
        ("nccl-tests", {"base": "ubuntu2204"}),
        ("minigo", {}),
    ):
        stack = _stack(kb, resolver, benchmark, **pins)
        document = json.loads(render(stack).content("stack.json"))
        jsonschema.validate(document, schema)
        assert document["benchmark"]["name"] == benchmark
        assert document["arch"] == stack.arch.name
        assert document["variant"] == stack.variant
        if stack.cuda:
            assert document["components"]["cuda"]["version"] == stack.cuda.version
        else:
            assert document["components"]["cuda"] is None


def test_stack_json_says_what_the_stack_is_not_what_was_pinned(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    document = json.loads(render(_stack(kb, resolver, "maskrcnn", cuda="10.1")).content("stack.json"))
    assert "pins" not in document
    assert "matching the --" not in json.dumps(document)  # the reasons quote no pin
    assert document["benchmark"]["source"]["commit"] == "f312518c2d6107eec983750eed23950f1f0c8a0e"
    assert document["generator"] == {"name": "mlcc", "version": __import__("mlcc").__version__}


def test_digest_label_is_the_digest_of_the_build_inputs(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    rendered = render(_stack(kb, resolver, "gnmt"))
    labels = DockerfileParser(
        fileobj=__import__("io").BytesIO(rendered.content("Dockerfile").encode())
    ).labels
    assert labels["io.mlcc.digest"] == rendered.digest
    recomputed = digests.recompute(
        rendered.files, rendered.build_args, rendered.platform, rendered.digest, rendered.command
    )
    assert recomputed == rendered.digest
    # any change to any input changes it
    tampered = [(n, c + "\n" if n == "mlcc-record" else c) for n, c in rendered.files]
    assert (
        digests.recompute(tampered, rendered.build_args, rendered.platform, rendered.digest, rendered.command)
        != rendered.digest
    )
    other_mirror = render(rendered.stack, options=check_options(None, "https://mirror.example.com/nv"))
    assert other_mirror.digest != rendered.digest


def test_labels_name_every_component(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    stack = _stack(kb, resolver, "maskrcnn", cuda="10.1")
    labels = DockerfileParser(
        fileobj=__import__("io").BytesIO(render(stack).content("Dockerfile").encode())
    ).labels
    assert labels["io.mlcc.cuda"] == stack.cuda.version
    assert labels["io.mlcc.cudnn"] == stack.cudnn.version
    assert labels["io.mlcc.nccl"] == stack.nccl.version
    assert labels["io.mlcc.framework.version"] == stack.framework.version
    assert labels["io.mlcc.python"] == stack.python.version
    assert labels["org.opencontainers.image.revision"] == stack.benchmark.build.source.commit
    assert labels["org.opencontainers.image.base.name"] == stack.base.ref


def test_images_are_writable_by_openshifts_arbitrary_uid(kb, published) -> None:  # type: ignore[no-untyped-def]
    for generated in published:
        rendered = generated.rendered
        parser = DockerfileParser(fileobj=__import__("io").BytesIO(rendered.content("Dockerfile").encode()))
        runs = " ".join(i["value"] for i in parser.structure if i["instruction"] == "RUN")
        build = rendered.stack.benchmark.build
        assert build is not None
        for path in (build.workdir, *build.writable):
            assert "chgrp -R 0" in runs and path in runs, (generated.folder, path)
        assert "chmod -R g=u" in runs
        users = [i["value"] for i in parser.structure if i["instruction"] == "USER"]
        assert users and users[-1] not in ("root", "0"), generated.folder


def test_published_dockerfiles_pass_lint_and_have_no_blanket_update(published, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    for generated in published:
        text = generated.rendered.content("Dockerfile")
        findings = [f for f in lint_dockerfile(Path(generated.folder), content=text) if f.severity == "error"]
        assert not findings, findings
        for word in (
            "yum update",
            "dnf update",
            "yum -y update",
            "dnf -y upgrade",
            "apt-get upgrade",
            "master",
        ):
            assert word not in text, (generated.folder, word)


def test_nvidia_packages_are_pinned_to_exact_versions_for_the_arch(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    stack = _stack(kb, resolver, "ssd", arch="ppc64le")
    text = render(stack).content("Dockerfile")
    assert "/ppc64le" in text and "x86_64" not in text.replace("io.mlcc.arch", "")
    for package in stack.cuda.packages_for(stack.base.packaging, "ppc64le"):
        assert f"{package.name}-{package.version}" in text


def test_mirror_and_base_image_overrides_reach_the_dockerfile_only_as_build_args(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    stack = _stack(kb, resolver, "ssd")
    options = check_options("registry.example.com/mirror/ubi8:8.10", "https://mirror.example.com/nvidia/")
    text = render(stack, options=options).content("Dockerfile")
    instructions = _instructions(text)
    assert instructions[0] == ("ARG", "BASE_IMAGE=registry.example.com/mirror/ubi8:8.10")
    assert ("ARG", "NVIDIA_MIRROR=https://mirror.example.com/nvidia") in instructions
    assert "https://developer.download.nvidia.com" not in text


@pytest.mark.parametrize(
    ("base_image", "mirror", "fragment"),
    [
        ("ubi8; rm -rf /", None, "not an image reference"),
        ("registry.example.com/ubi8", None, "names no tag"),
        ("registry.example.com/ubi8:latest", None, "latest"),
        (None, "ftp://mirror.example.com", "http(s) URL"),
        (None, "https://mirror.example.com/$(id)", "http(s) URL"),
    ],
)
def test_bad_overrides_are_refused(base_image, mirror, fragment: str) -> None:  # type: ignore[no-untyped-def]
    from mlcc.errors import UsageError

    with pytest.raises(UsageError, match=__import__("re").escape(fragment)):
        check_options(base_image, mirror)


def test_install_script_is_valid_bash_and_embeds_the_manifest(kb, resolver, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    for benchmark, pins in (
        ("maskrcnn", {"cuda": "10.1"}),
        ("minigo", {}),
        ("nccl-tests", {"base": "ubuntu2204"}),
    ):
        rendered = render(_stack(kb, resolver, benchmark, **pins), fmt="script")
        script = tmp_path / f"{benchmark}.sh"
        script.write_text(rendered.content("install.sh"))
        check = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
        assert check.returncode == 0, check.stderr
        assert rendered.content("stack.json") in rendered.content("install.sh")


def test_singularity_definition_has_the_sections_apptainer_needs(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    text = render(_stack(kb, resolver, "resnet50"), fmt="singularity").content("Singularity.def")
    lines = text.splitlines()
    assert "Bootstrap: docker" in lines
    assert any(line.startswith("From: registry.access.redhat.com/ubi8/ubi:") for line in lines)
    for section in ("%files", "%post", "%environment", "%labels", "%runscript"):
        assert section in lines, section


def test_every_format_renders_every_published_stack(kb, published) -> None:  # type: ignore[no-untyped-def]
    for fmt, (_, main) in FORMATS.items():
        for generated in published[::3]:
            rendered = render(generated.rendered.stack, fmt=fmt)
            assert rendered.content(main).strip()


def test_mlcc_record_is_posix_sh_and_writes_json(tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    recorder = Path(__file__).resolve().parents[2] / "mlcc" / "render" / "files" / "mlcc-record"
    sh = shutil.which("dash") or shutil.which("sh")
    assert sh is not None
    assert subprocess.run([sh, "-n", str(recorder)]).returncode == 0
    result = subprocess.run(
        [sh, str(recorder), "--python", "python3", "--module", "json", "--nvcc", "/nonexistent/nvcc"],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": os.environ["PATH"]},
    )
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert record["arch"] == os.uname().machine
    assert record["python"].startswith("3.")
    assert record["nvcc"] is None
    assert record["modules"]["json"]["version"]
    bad = subprocess.run([sh, str(recorder), "--bogus"], capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown argument" in bad.stderr


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=0, max_value=253402300799))
def test_the_created_label_spells_any_epoch_as_datetime_does(epoch: int) -> None:
    """The label is written with time.strftime (datetime is not imported on gen's path)."""
    from datetime import datetime, timezone

    from mlcc.render.manifest import _created

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SOURCE_DATE_EPOCH", str(epoch))
        expected = datetime.fromtimestamp(epoch, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        assert _created() == expected
