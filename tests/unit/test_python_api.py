"""mlcc.api takes the pins the CLI builds (one Pins type, every field by keyword too) and
refuses what the CLI refuses, with the same message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

from mlcc import api
from mlcc.app.lint import lint
from mlcc.errors import UsageError
from mlcc.flags import fields_of
from mlcc.resolve.pins import Pins

from ..conftest import RECIPES

REPO = Path(__file__).resolve().parents[2]


def test_resolve_takes_pins_with_round_and_flavour(kb, cli) -> None:  # type: ignore[no-untyped-def]
    stack = api.resolve("maskrcnn", Pins(round="v2.1", flavour="devel"), kb=kb)
    shown = cli("resolve", "maskrcnn", "--round", "v2.1", "--flavour", "devel", "--json")
    assert shown.code == 0, shown.err
    assert stack.benchmark.name == "maskrcnn-v2.1"
    assert stack.to_dict() == {k: v for k, v in json.loads(shown.out).items() if k != "request"}


def test_keyword_pins_are_set_over_the_pins_given(kb) -> None:  # type: ignore[no-untyped-def]
    by_keyword = api.resolve("maskrcnn", kb=kb, round="v2.1", flavour="devel")
    mixed = api.resolve("maskrcnn", Pins(round="v2.1", flavour="runtime"), kb=kb, flavour="devel")
    assert by_keyword == mixed == api.resolve("maskrcnn", Pins(round="v2.1", flavour="devel"), kb=kb)


def test_every_field_of_pins_is_a_keyword_and_nothing_else_is(kb) -> None:  # type: ignore[no-untyped-def]
    for field in fields_of(Pins):
        value = field.fresh_default()
        assert Pins().updated(**{field.name: value}) == Pins()
    with pytest.raises(TypeError, match=r"unknown pin.*cudaa.*the pins are cuda, cudnn"):
        api.resolve("maskrcnn", kb=kb, cudaa="10.1")


@pytest.mark.parametrize(
    "flags, pins",
    [
        (["--flavour", "fat"], {"flavour": "fat"}),
        (["--round", "v9.9"], {"round": "v9.9"}),
        (["--gpu", "k80x"], {"gpu": "k80x"}),
        (["--arch", "sparc"], {"arch": "sparc"}),
        (["--driver", "latest"], {"driver": "latest"}),
        (["--cuda", "ten"], {"cuda": "ten"}),
        (["--with", "tensorflow"], {"with_": ("tensorflow",)}),
        (["--cpu", "--cuda", "10.1"], {"cpu": True, "cuda": "10.1"}),
        (["--cpu", "--gpu", "t4"], {"cpu": True, "gpu": "t4"}),
    ],
)
def test_the_api_refuses_what_the_cli_refuses(kb, cli, flags: List[str], pins: Dict[str, Any]) -> None:  # type: ignore[no-untyped-def]
    shown = cli("resolve", "maskrcnn", *flags)
    assert shown.code == 2, shown.out
    with pytest.raises(UsageError) as refused:
        api.resolve("maskrcnn", Pins(**pins), kb=kb)
    assert str(refused.value).splitlines()[0] in shown.err


@pytest.mark.parametrize(
    "pins, message",
    [
        ({"cuda": 10.1}, "Pins.cuda: a string"),
        ({"cpu": "yes"}, "Pins.cpu: True or False"),
        ({"with_": "tensorflow=1.13"}, r"Pins.with_: a sequence of strings, e.g. \('tensorflow=1.13',\)"),
    ],
)
def test_a_pin_of_the_wrong_type_is_a_type_error(pins: Dict[str, Any], message: str) -> None:
    with pytest.raises(TypeError, match=message):
        Pins(**pins)


def test_a_list_of_with_pins_is_the_tuple_it_means() -> None:
    assert Pins(with_=["pytorch=1.1"]) == Pins(with_=("pytorch=1.1",))  # type: ignore[arg-type]


def test_generate_renders_what_gen_publishes(kb) -> None:  # type: ignore[no-untyped-def]
    generated = api.generate("maskrcnn", kb=kb, cuda="10.1")
    assert generated.folder == "maskrcnn/cuda10.1-cudnn7-ubi8-x86_64"
    for name, content in generated.files():
        if name.endswith("/Dockerfile"):
            assert (REPO / "dockerfiles" / name).read_text(encoding="utf-8") == content
            return
    raise AssertionError("no Dockerfile generated")


def test_build_refuses_several_arches_without_a_push_before_any_engine(kb) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UsageError, match="manifest list"):
        api.build("nccl-tests", kb=kb, arch="x86_64,ppc64le", backend="no-such-engine")


def test_lint_of_a_recipes_folder_needs_the_maintainer_check() -> None:
    with pytest.raises(UsageError, match="recipes folder") as refused:
        lint([str(RECIPES)], schema_dir=None, openshift=None)
    assert "mlcc.kbtools.offline.lint_pins" in (refused.value.hint or "")
