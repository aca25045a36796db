"""One pin list: the same flags on every command, the same meaning in resolve and the matrix."""

from __future__ import annotations

import json

import click
import pytest

from mlcc.app.build import matrix_jobs
from mlcc.app.matrix import MatrixFilters, cell_results
from mlcc.cli import cli
from mlcc.engines.base import BuildPolicy
from mlcc.errors import UsageError
from mlcc.flags import fields_of
from mlcc.render import DEFAULT_OPTIONS
from mlcc.resolve.pins import Pins
from mlcc.versions import parse_version


@pytest.mark.parametrize("command", ["resolve", "gen", "build"])
def test_every_pin_is_a_flag_of_every_stack_command(command: str) -> None:
    ctx = click.Context(cli)
    found = cli.get_command(ctx, command)
    assert found is not None
    options = {name: p for p in found.params for name in p.opts}
    for field in fields_of(Pins):
        spec = field.flag
        assert spec is not None
        assert spec.name in options, f"mlcc {command} lacks {spec.name}"
        assert options[spec.name].help == spec.help  # one text, from the one declaration


@pytest.mark.parametrize("pin", [">=10.1", "10.2", ">=10.1,<10.2", "10.1.243"])
def test_a_cuda_pin_means_the_same_in_resolve_and_in_the_matrix(kb, cli, pin: str) -> None:  # type: ignore[no-untyped-def]
    result = cli("matrix", "--cuda", pin, "--format", "json")
    assert result.code == 0, result.err
    cells = json.loads(result.out)
    assert cells, f"--cuda {pin!r} matches no published cell"
    pins = Pins(cuda=pin)
    request = pins.request(kb, "maskrcnn")
    assert request.cuda is not None
    for cell in cells:
        assert request.cuda.matches(cell["cuda"]), (pin, cell["cuda"])
    # and every published cell that meets the pin is in: nothing silently dropped
    everything = json.loads(cli("matrix", "--format", "json").out)
    meeting = [c for c in everything if c["cuda"] != "cpu" and request.cuda.matches(c["cuda"])]
    assert [c["variant"] for c in cells] == [c["variant"] for c in meeting]


def test_build_matrix_takes_a_specifier_like_resolve(kb) -> None:  # type: ignore[no-untyped-def]
    # `mlcc build --matrix --cuda '>=10.1'` used to match nothing while resolve took it
    filters = MatrixFilters.from_pins(None, Pins(cuda=">=10.1"))
    jobs = matrix_jobs(kb, filters, BuildPolicy(), DEFAULT_OPTIONS)
    assert jobs
    for job in jobs:
        cuda = job.rendered.stack.cuda
        assert cuda is not None and parse_version(cuda.version) >= parse_version("10.1")
        assert Pins(cuda=">=10.1").matches(kb, job.rendered.stack)
    older = matrix_jobs(kb, MatrixFilters.from_pins(None, Pins(cuda="<10.1")), BuildPolicy(), DEFAULT_OPTIONS)
    assert {j.variant for j in older}.isdisjoint({j.variant for j in jobs})


def test_matrix_filters_read_arch_aliases_and_cpu(kb) -> None:  # type: ignore[no-untyped-def]
    results, _ = cell_results(kb, MatrixFilters(arches=("amd64",)))
    assert results and {r.stack.arch.name for r in results if r.stack} == {"x86_64"}
    cpu, _ = cell_results(kb, MatrixFilters(cudas=("cpu",)))
    assert cpu and all(r.stack is None or r.stack.cuda is None for r in cpu)


def test_build_matrix_refuses_pins_that_are_no_matrix_axis() -> None:
    with pytest.raises(UsageError, match="not by --python"):
        MatrixFilters.from_pins(None, Pins(python="3.6"))


def test_a_malformed_cuda_filter_is_a_usage_error(kb) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UsageError, match="--cuda"):
        cell_results(kb, MatrixFilters(cudas=(">=ten",)))
