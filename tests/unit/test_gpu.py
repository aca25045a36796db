"""GPU generations (recipes/gpus.yaml): the resolver's GPU rule, the arch lists of source
builds, and the explanation when no stack can run on the GPU asked."""

from __future__ import annotations

import pytest

from mlcc.api import Pins, request_for
from mlcc.errors import ConflictError, UsageError
from mlcc.render import render
from mlcc.versions import parse_version


def test_every_gpu_needs_a_cuda_release_the_knowledge_base_has(kb) -> None:  # type: ignore[no-untyped-def]
    releases = [parse_version(r.version) for r in kb.cuda]
    for gpu in kb.gpus.values():
        first = [r for r in kb.cuda if parse_version(r.version) >= parse_version(gpu.min_cuda)]
        assert first, gpu.name
        # the GPU's minimum driver is the one its first CUDA release needs (NVIDIA's table)
        oldest = min(first, key=lambda r: parse_version(r.version))
        if oldest.version.startswith(gpu.min_cuda + "."):
            assert parse_version(gpu.min_driver) <= parse_version(oldest.min_driver), gpu.name
    assert releases


@pytest.mark.parametrize(("gpu", "floor"), [("a100", "11.0"), ("h100", "11.8")])
def test_the_stack_for_a_gpu_has_a_cuda_that_targets_it(kb, resolver, gpu: str, floor: str) -> None:  # type: ignore[no-untyped-def]
    stack = resolver.resolve(request_for(kb, "nccl-tests", Pins(gpu=gpu)))
    assert stack.cuda is not None and parse_version(stack.cuda.version) >= parse_version(floor)
    # named by the compute capability the source builds compile for: GPUs that share one build one image
    assert stack.variant.endswith("-" + kb.gpus[gpu].sm.replace("_", ""))
    with pytest.raises(ConflictError) as caught:
        resolver.resolve(request_for(kb, "nccl-tests", Pins(gpu=gpu, cuda="10.2")))
    text = str(caught.value)
    assert f"CUDA >= {floor}" in text and "nearest valid alternatives" in text
    alternatives = caught.value.alternatives  # type: ignore[attr-defined]
    assert alternatives and all(
        parse_version(a.stack.cuda.version) >= parse_version(floor) for a in alternatives if a.stack.cuda
    )


def test_maskrcnn_on_h100_explains_why_and_names_the_nearest_gpu(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConflictError) as caught:
        resolver.resolve(request_for(kb, "maskrcnn", Pins(gpu="h100")))
    text = str(caught.value)
    lines = text.splitlines()
    # the GPU is the cause: it leads, right under "why:"
    assert lines[1].strip() == "why:" and lines[2].strip().startswith(
        "[cuda-gpu] H100 is compute capability 9.0 (sm_90): it needs CUDA >= 11.8"
    ), text
    # the nearest GPU generation with a stack is the first alternative, and it really resolves
    alternatives = caught.value.alternatives  # type: ignore[attr-defined]
    assert alternatives[0].change == "--gpu t4", text
    assert resolver.resolve(request_for(kb, "maskrcnn", Pins(gpu="t4"))).cuda is not None
    # and nothing then says that no change helps
    assert "no single change of a pin gives a valid stack" not in text


def test_a_gpu_conflict_says_each_rule_once(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    """Lines that differ in one value only ("not 11.8.0", "not 12.0.1" ...) are one line."""
    with pytest.raises(ConflictError) as caught:
        resolver.resolve(request_for(kb, "maskrcnn", Pins(gpu="h100")))
    why = [line.strip() for line in str(caught.value).splitlines()[2:] if line.strip().startswith("[")]
    templates = [" ".join(w for w in line.split() if not w[:1].isdigit()) for line in why]
    assert len(templates) == len(set(templates)), why
    assert len(why) <= 4, why


def test_a_conflict_never_both_suggests_and_denies_a_change(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    for benchmark, gpu in (("maskrcnn", "h100"), ("ssd", "h100"), ("nccl-tests", "p100")):
        try:
            resolver.resolve(request_for(kb, benchmark, Pins(gpu=gpu)))
        except ConflictError as conflict:
            text = str(conflict)
            suggests = "nearest valid alternatives" in text or "mlcc resolve" in text
            assert not (suggests and "no single change" in text), text


def test_source_builds_compile_for_the_gpu_asked(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    plain = render(resolver.resolve(request_for(kb, "maskrcnn", Pins())))
    t4 = render(resolver.resolve(request_for(kb, "maskrcnn", Pins(gpu="t4"))))
    plain_df = plain.content(plain.main_file)
    t4_df = t4.content(t4.main_file)
    assert 'TORCH_CUDA_ARCH_LIST="7.0"' in plain_df and 'TORCH_CUDA_ARCH_LIST="7.5"' in t4_df
    assert 'TORCH_CUDA_ARCH_LIST="7.0"' not in t4_df


def test_unknown_and_contradictory_gpus_are_usage_errors(kb) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UsageError, match="did you mean 'h100'"):
        request_for(kb, "maskrcnn", Pins(gpu="h10"))
    with pytest.raises(UsageError, match="--cpu and --gpu"):
        request_for(kb, "tf_cnn_benchmarks", Pins(gpu="t4", cpu=True))


def test_cli_resolve_h100_exits_with_the_conflict_code(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("resolve", "maskrcnn", "--gpu", "h100")
    assert result.code == 3 and "sm_90" in result.err


def test_p100_needs_the_driver_of_the_first_cuda_8_0(kb) -> None:  # type: ignore[no-untyped-def]
    # NVIDIA's toolkit/driver table: CUDA 8.0 GA1 (8.0.44) >= 367.48, 8.0 GA2 (8.0.61) >= 375.26;
    # min_cuda 8.0 means the first 8.0, so GA2's driver would refuse hosts the GPU runs on
    p100 = kb.gpus["p100"]
    assert (p100.min_cuda, p100.min_driver) == ("8.0", "367.48")
    assert "min_driver" not in p100.prov.unverified_fields
