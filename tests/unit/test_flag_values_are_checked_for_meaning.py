"""Flag values checked for meaning: ASCII counts, finite durations, non-empty paths, driver
versions without epochs, TCP ports, Kubernetes quantities Kubernetes can hold."""

from __future__ import annotations

from typing import Iterator, Tuple

import click
import pytest

from mlcc.cli import COMMANDS, cli
from mlcc.cli.values import PATH_METAVARS, FiniteNumber, NonEmpty, WholeNumber


def _commands() -> Iterator[Tuple[str, click.Command]]:
    yield "mlcc", cli
    ctx = click.Context(cli)
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        assert command is not None
        if isinstance(command, click.Group):
            for sub in command.list_commands(ctx):
                found = command.get_command(ctx, sub)
                assert found is not None
                yield f"{name} {sub}", found
        else:
            yield name, command


def _options() -> Iterator[Tuple[str, click.Option]]:
    for name, command in _commands():
        for param in command.params:
            if isinstance(param, click.Option):
                yield name, param


def test_no_option_parses_numbers_with_int_or_float() -> None:
    """int() reads Unicode digits and float() reads nan: no option may use click's INT or FLOAT."""
    plain = [
        f"{name} {option.opts[0]}"
        for name, option in _options()
        if isinstance(option.type, (click.types.IntParamType, click.types.FloatParamType))
    ]
    assert plain == []


def test_every_file_or_folder_option_refuses_an_empty_value() -> None:
    paths = [(name, option) for name, option in _options() if option.metavar in PATH_METAVARS]
    assert len(paths) >= 15  # --recipes, --log, --matrix-file, --schema-dir, --html, -o ...
    lax = [f"{name} {option.opts[0]}" for name, option in paths if not isinstance(option.type, NonEmpty)]
    assert lax == []


@pytest.mark.parametrize(
    "args, flag",
    [
        (("gen", "maskrcnn", "--gpus", "\u0664"), "--gpus"),
        (("gen", "maskrcnn", "--nodes", "\u00b2"), "--nodes"),
        (("history", "--limit", "\u0661\u0660"), "--limit"),
        (("build", "maskrcnn", "--dry-run", "-j", "1_0"), "--jobs"),
        (("results", "add", "x.log", "--gpus", "-1"), "--gpus"),
        (("kb", "check", "--ttl", "nan"), "--ttl"),
        (("kb", "check", "--ttl", "inf"), "--ttl"),
        (("kb", "check", "--sample", "\u0663"), "--sample"),
        (("--recipes", "", "list", "benchmarks"), "--recipes"),
        (("matrix", "--matrix-file", ""), "--matrix-file"),
        (("build", "maskrcnn", "--dry-run", "--log", ""), "--log"),
        (("lint", "--schema-dir", "", "x"), "--schema-dir"),
        (("results", "compare", "--html", ""), "--html"),
        (("report", "--html", ""), "--html"),
        (("gen", "maskrcnn", "-o", ""), "--output"),
    ],
)
def test_meaningless_values_are_refused_naming_the_flag(cli, args, flag) -> None:  # type: ignore[no-untyped-def]
    result = cli(*args)
    assert result.code == 2, result.err
    assert flag in result.err, result.err


def test_whole_numbers_are_ascii_digits_only() -> None:
    count = WholeNumber(0)
    assert count.convert("12", None, None) == 12
    for text in ("\u0664", "1_000", "+3", "-1", "4.0", " ", "1e3", "0x10"):
        with pytest.raises(click.BadParameter):
            count.convert(text, None, None)
    with pytest.raises(click.BadParameter, match="at least 1"):
        WholeNumber(1).convert("0", None, None)


def test_durations_are_finite() -> None:
    hours = FiniteNumber()
    assert hours.convert("0.5", None, None) == 0.5
    for text in ("nan", "inf", "-1", "1e999", "\u0664", "9" * 400):
        with pytest.raises(click.BadParameter):
            hours.convert(text, None, None)


@pytest.mark.parametrize(
    "driver", ["1!1", "1!418.67", "418.67+local", "418.67rc1", "\u0664\u0661\u0668.67", "v418"]
)
def test_a_driver_is_dotted_ascii_numbers(cli, driver: str) -> None:  # type: ignore[no-untyped-def]
    result = cli("resolve", "maskrcnn", "--driver", driver)
    assert result.code == 2 and "--driver" in result.err and "not a driver version" in result.err


def test_a_real_driver_still_resolves(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("resolve", "maskrcnn", "--driver", "418.67").code == 0


@pytest.mark.parametrize("registry", ["host.example:99999", "host.example:0", "127.0.0.1:65536/ns"])
def test_a_registry_port_is_a_tcp_port(cli, registry: str) -> None:  # type: ignore[no-untyped-def]
    result = cli("build", "maskrcnn", "--dry-run", "--registry", registry)
    assert result.code == 2 and "--registry" in result.err and "not a TCP port" in result.err
    assert "/x'" not in result.err  # the value as given, not mlcc's stand-in path


def test_a_registry_with_a_real_port_is_taken(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("build", "maskrcnn", "--dry-run", "--registry", "127.0.0.1:65535/ns").code == 0


@pytest.mark.parametrize("flag", ["--build-memory", "--build-cpu"])
def test_a_quantity_beyond_an_int64_is_refused(cli, flag: str) -> None:  # type: ignore[no-untyped-def]
    result = cli("gen", "maskrcnn", flag, "9" * 30 + "Ei", "-o", "out")
    assert result.code == 2 and flag in result.err and "larger than" in result.err


def test_data_size_beyond_an_int64_is_refused(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("gen", "maskrcnn", "--storage-class", "fast", "--data-size", "9Ei", "-o", "out")
    assert result.code == 2 and "--data-size" in result.err and "larger than" in result.err


@pytest.mark.parametrize("benchmark", ["maskrcnn", "ssd", "nccl-tests"])
def test_more_nodes_than_a_cluster_runs_are_refused(cli, benchmark: str) -> None:  # type: ignore[no-untyped-def]
    result = cli("gen", benchmark, "--nodes", "1000000", "-o", "out")
    assert result.code == 2 and "--nodes" in result.err and "5,000" in result.err
    assert cli("gen", benchmark, "--nodes", "2", "-o", "out").code == 0


@pytest.mark.parametrize("args", [("results", "score", ""), ("results", "add", ""), ("lint", "")])
def test_an_empty_path_argument_is_refused_not_read_as_the_current_folder(cli, args) -> None:  # type: ignore[no-untyped-def]
    """`results score ''` walked the whole working folder (pathlib reads '' as '.')."""
    result = cli(*args)
    assert result.code == 2 and "empty value" in result.err, result.err
