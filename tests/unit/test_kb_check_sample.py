"""The cross-product sample of `mlcc kb check --sample` and `mlcc kb lock --sample` stays put
as the recipes grow: each cell's place depends on the cell alone, so adding a benchmark
changes at most as many sampled cells as it brings, and the installs `kb lock` locks with
them."""

from __future__ import annotations

from pathlib import Path

from mlcc.kb import load
from mlcc.kbtools.check import cell_rank, sampled_cells, sampled_stacks, stack_label


def test_adding_a_benchmark_changes_at_most_as_many_sampled_cells_as_it_brings(recipes_copy: Path) -> None:
    before = set(sampled_cells(load(str(recipes_copy)), 60))
    ncf = (recipes_copy / "benchmarks" / "ncf.yaml").read_text(encoding="utf-8")
    assert "\nname: ncf\n" in ncf
    (recipes_copy / "benchmarks" / "ncf2.yaml").write_text(
        ncf.replace("\nname: ncf\n", "\nname: ncf2\n"), encoding="utf-8"
    )
    after = set(sampled_cells(load(str(recipes_copy)), 60))
    brought = {cell for cell in after if cell[0] == "ncf2"}
    assert len(before) == len(after) == 60
    assert brought, "the copy of ncf brings no sampled cell: the test shows nothing"
    assert after - brought <= before  # no old cell enters: nothing shifts
    assert len(before - after) == len(brought)  # each new cell pushes out one old cell, no more


def test_the_sample_is_the_cells_of_smallest_rank_and_grows_by_adding_cells(kb) -> None:  # type: ignore[no-untyped-def]
    small, large = sampled_cells(kb, 10), sampled_cells(kb, 20)
    assert set(small) < set(large)
    assert max(map(cell_rank, small)) < min(cell_rank(c) for c in set(large) - set(small))
    assert sampled_cells(kb, 0) == []


def test_kb_lock_and_kb_check_sample_the_same_resolved_stacks(kb) -> None:  # type: ignore[no-untyped-def]
    """Both commands call sampled_stacks: each stack is one sampled cell that resolved."""
    cells = sampled_cells(kb, 60)
    stacks = sampled_stacks(kb, 60)
    assert stacks and len(stacks) <= len(cells)
    sampled = {(cell[0], cell[1]) for cell in cells}
    assert {(s.benchmark.name, s.arch.name) for s in stacks} <= sampled
    assert len({stack_label(s) for s in stacks}) == len(stacks)
