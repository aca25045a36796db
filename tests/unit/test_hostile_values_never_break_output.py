"""Hostile values generated into flags, recipe text and untrusted files.

Invariants for every example: the exit code is one of docs/exit-codes.md's table; no traceback and no
"internal error"; whatever was written parses (dockerfile-parse, ``bash -n``, YAML 1.1 and
1.2 readers) with Go-compatible typing, and holds the exact values given; nothing outside
the output folder changes. In-process CLI calls keep the run short; the profile is
derandomized and database-less, so CI sees the same examples every run.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from mlcc.kb.model import HOST_MIRRORS
from mlcc.render.mirror import PIP_SETTINGS
from mlcc.render.openshift.options import KUBERNETES_MAX_NODES
from tests.conftest import RECIPES
from tests.oci_layout import layer, oci_layout
from tests.unit.test_yaml_strings_read_back_as_strings import go_reads_as_non_string

settings.register_profile(
    "mlcc-ci",
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=15,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
CI = settings.get_profile("mlcc-ci")

DOCUMENTED_EXITS = {0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 130}
SEED = "maskrcnn/cuda10.1-cudnn7-ubi8-x86_64"

# Values that broke mlcc before, mixed with generated text of every kind.
KNOWN_BAD = [
    "1e3",
    "1234e56",
    "0o17",
    "0x1F",
    "y",
    "N",
    "off",
    "~",
    "",
    " ",
    "-",
    "--privileged",
    "$(id)",
    "`id`",
    "a\nRUN id",
    "x\u2028y",
    "\ufeff",
    "\x1b[2J",
    "../..",
    "/etc/passwd",
    "a" * 300,
    "9" * 5000,
    "~=10",
    "ns'quote",
    'dq"',
    "a b",
    "#c",
    "a: b",
    "*alias",
    "&anchor",
    "!!python/object",
    "%",
    "@",
    "{x}",
    "[1]",
]
hostile = st.one_of(
    st.sampled_from(KNOWN_BAD),
    st.text(max_size=40),
    st.from_regex(r"[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?", fullmatch=True),  # valid-looking names
    st.from_regex(r"[0-9][0-9a-fA-FeEoOxX._+-]{0,12}", fullmatch=True),  # number-like strings
)


def _run(argv: List[str]) -> Tuple[int, str, str]:
    from mlcc.cli import run

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run(argv)
    return code, out.getvalue(), err.getvalue()


@contextlib.contextmanager
def _sandbox() -> Iterator[Path]:
    """A fresh working folder; nothing but its out/ may change (checked by the caller)."""
    with tempfile.TemporaryDirectory(prefix="mlcc-prop-") as scratch:
        root = Path(scratch)
        (root / "cwd").mkdir()
        (root / "outside").mkdir()
        (root / "outside" / "keep.txt").write_text("keep")
        old = os.getcwd()
        os.chdir(root / "cwd")
        try:
            yield root
        finally:
            os.chdir(old)


def _assert_clean(code: int, err: str) -> None:
    assert code in DOCUMENTED_EXITS, (code, err)
    assert "Traceback" not in err and "internal error" not in err, err


def _untouched(root: Path) -> None:
    assert sorted(p.name for p in root.iterdir()) == ["cwd", "outside"]
    assert [p.name for p in (root / "outside").iterdir()] == ["keep.txt"]
    assert (root / "outside" / "keep.txt").read_text() == "keep"
    assert sorted(p.name for p in (root / "cwd").iterdir()) in ([], ["out"], ["bc"], ["bc", "out"])


def _yaml_values(text: str) -> List[Any]:
    """Every document, read by PyYAML (1.1) and ruamel (1.2), which must agree."""
    documents = list(yaml.safe_load_all(text))
    assert documents == list(YAML(typ="safe", pure=True).load_all(io.StringIO(text)))
    return documents


def _plain_scalars_are_go_strings(text: str) -> None:
    """Go's reader (kubectl) must not read a plain scalar written for a string as a number/bool."""
    for node in _scalar_nodes(yaml.compose_all(text)):
        if node.style is None and node.tag == "tag:yaml.org,2002:str":
            assert not go_reads_as_non_string(node.value), node.value


def _scalar_nodes(documents: Any) -> Iterator[yaml.ScalarNode]:
    stack = list(documents)
    while stack:
        node = stack.pop()
        if isinstance(node, yaml.ScalarNode):
            yield node
        elif isinstance(node, yaml.MappingNode):
            stack += [n for pair in node.value for n in pair]
        elif isinstance(node, yaml.SequenceNode):
            stack += node.value


def _check_written(folder: Path) -> None:
    from dockerfile_parse import DockerfileParser

    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        text = path.read_text(encoding="utf-8")
        if path.name == "Dockerfile":
            structure = DockerfileParser(fileobj=io.BytesIO(text.encode())).structure
            assert structure and structure[0]["instruction"] in ("ARG", "FROM", "COMMENT")
        elif path.suffix in (".yaml", ".yml"):
            _yaml_values(text)
            _plain_scalars_are_go_strings(text)
        elif path.suffix == ".json":
            json.loads(text)
        elif path.suffix == ".sh" or path.name == "mlcc-record":
            assert subprocess.run(["bash", "-n", str(path)], capture_output=True).returncode == 0, path


# ----------------------------------------------------------------------------- flags

OPENSHIFT_TEXT_FLAGS = [
    "--namespace",
    "--git-ref",
    "--git-uri",
    "--push-to",
    "--push-secret",
    "--webhook-secret",
    "--data-claim",
    "--data-hostpath",
    "--results-claim",
    "--build-cpu",
    "--build-memory",
    "--git-context",
]
STACK_FLAGS = [
    "--cuda",
    "--cudnn",
    "--nccl",
    "--python",
    "--framework-version",
    "--driver",
    "--base",
    "--arch",
]


MIRROR_FLAGS = [m.flag for m in HOST_MIRRORS] + [p.flag for p in PIP_SETTINGS]


@CI
@given(flag=st.sampled_from([*OPENSHIFT_TEXT_FLAGS, *MIRROR_FLAGS]), value=hostile)
def test_openshift_flags_take_any_value_safely(flag: str, value: str) -> None:
    with _sandbox() as root:
        extra = (
            ["--git-uri", "https://github.com/acme/b.git"] if flag in ("--git-ref", "--git-context") else []
        )
        extra += ["--push-to", "quay.io/acme/m"] if flag == "--push-secret" else []
        extra += ["--push-secret", "s"] if flag == "--push-to" else []
        code, _, err = _run(
            [
                "gen",
                "maskrcnn",
                "--cuda",
                "10.1",
                "--only",
                "openshift",
                "--openshift-output",
                "bc",
                *extra,
                flag,
                value,
            ]
        )
        _assert_clean(code, err)
        if code == 0:
            _check_written(root / "cwd" / "bc")
            if flag == "--namespace":  # round trip: the exact value, typed as a string
                objects = _yaml_values((root / "cwd" / "bc" / SEED / "build.yaml").read_text())
                namespaces = {o["metadata"]["namespace"] for d in objects for o in d.get("items", [d])}
                assert namespaces == {value}
        else:
            assert not (root / "cwd" / "bc").exists()
        _untouched(root)


@CI
@given(flag=st.sampled_from([*STACK_FLAGS, "--base-image", "--mirror", *MIRROR_FLAGS, "-o"]), value=hostile)
def test_stack_and_output_flags_take_any_value_safely(flag: str, value: str) -> None:
    with _sandbox() as root:
        args = ["gen", "maskrcnn", "--only", "dockerfile", flag, value]
        if flag != "-o":
            args += ["-o", "out"]
        code, _, err = _run(args)
        _assert_clean(code, err)
        if code == 0 and flag != "-o":
            _check_written(root / "cwd" / "out")
        if flag == "-o" and code == 0:
            shutil.rmtree(root / "cwd" / value.split("/")[0], ignore_errors=True)
            if (root / "cwd").exists():
                for extra in (root / "cwd").iterdir():
                    shutil.rmtree(extra) if extra.is_dir() else extra.unlink()
        _untouched(root)


@CI
@given(
    flag=st.sampled_from(["--limit", "--nodes", "--gpus"]),
    value=st.integers(min_value=-(2**70), max_value=2**70),
)
def test_integer_flags_in_and_out_of_range(flag: str, value: int) -> None:
    with _sandbox() as root:
        if flag == "--limit":
            argv = ["history", "--history", str(root / "cwd" / "h.sqlite"), "--limit", str(value)]
        else:
            argv = [
                "gen",
                "maskrcnn",
                "--cuda",
                "10.1",
                "--only",
                "openshift",
                "--openshift-output",
                "bc",
                flag,
                str(value),
            ]
        code, _, err = _run(argv)
        _assert_clean(code, err)
        highest = KUBERNETES_MAX_NODES if flag == "--nodes" else 2**31 - 1
        assert (code == 0) == (1 <= value <= highest) or flag == "--gpus"


# ----------------------------------------------------------------------------- recipe text


@pytest.fixture(scope="module")
def recipe_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("prop") / "recipes"
    shutil.copytree(RECIPES, target)
    return target


TITLE = "title: Mask R-CNN (object detection, heavy weight)"


@CI
@given(title=hostile, fmt=st.sampled_from(["dockerfile", "script", "singularity"]))
def test_any_benchmark_title_is_refused_or_kept_exactly(recipe_copy: Path, title: str, fmt: str) -> None:
    path = recipe_copy / "benchmarks" / "maskrcnn.yaml"
    original = (RECIPES / "benchmarks" / "maskrcnn.yaml").read_text()
    path.write_text(original.replace(TITLE, "title: " + json.dumps(title)))
    with _sandbox() as root:
        code, _, err = _run(
            [
                "--recipes",
                str(recipe_copy),
                "gen",
                "maskrcnn",
                "--cuda",
                "10.1",
                "--format",
                fmt,
                "-o",
                "out",
                "--only",
                "dockerfile",
            ]
        )
        _assert_clean(code, err)
        if code == 0:
            folder = root / "cwd" / "out" / SEED
            _check_written(folder)
            stack = json.loads((folder / "stack.json").read_text())
            assert stack["benchmark"]["title"] == title
            baseline = (Path(__file__).resolve().parents[2] / "dockerfiles" / SEED / "Dockerfile").read_text()
            if fmt == "dockerfile":  # no injected instruction: same instructions as the published file
                from dockerfile_parse import DockerfileParser

                def instructions(text: str) -> List[str]:
                    parsed = DockerfileParser(fileobj=io.BytesIO(text.encode())).structure
                    return [i["instruction"] for i in parsed]

                assert instructions((folder / "Dockerfile").read_text()) == instructions(baseline)
        else:
            assert "recipes/benchmarks/maskrcnn.yaml" in err
        _untouched(root)


# ----------------------------------------------------------------------------- untrusted files

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=8,
)


@CI
@given(
    index=st.one_of(json_values, st.fixed_dictionaries({"manifests": json_values})),
    stack=json_values,
    labels=st.dictionaries(hostile, hostile, max_size=3),
)
def test_any_oci_layout_and_stack_json_gives_a_clean_answer(
    index: Any, stack: Any, labels: Dict[str, str]
) -> None:
    with tempfile.TemporaryDirectory(prefix="mlcc-oci-") as scratch:
        good = oci_layout(
            Path(scratch) / "good",
            [layer({"etc/mlcc/stack.json": json.dumps(stack).encode(), "etc/mlcc/installed.json": b"{}"})],
            {k: v for k, v in labels.items() if k},
            architecture="ppc64le",
        )
        bad = Path(scratch) / "bad"
        shutil.copytree(good, bad)
        (bad / "index.json").write_text(json.dumps(index))
        for folder in (good, bad):
            for command in ("inspect", "verify"):
                code, out, err = _run([command, f"oci:{folder}"])
                _assert_clean(code, err)
                assert "\x1b" not in out and "\x1b" not in err


@CI
@given(
    text=st.one_of(
        st.text(max_size=200),
        st.sampled_from(["a: &a [*a]", "- " * 80 + "x", "{" * 90]),
        st.binary(max_size=60),
    )
)
def test_any_lint_input_gives_findings_or_clean_errors(text: Any) -> None:
    with tempfile.TemporaryDirectory(prefix="mlcc-lint-") as scratch:
        for name in ("x.yaml", "Dockerfile"):
            path = Path(scratch) / name
            path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
            code, _, err = _run(["lint", str(path)])
            _assert_clean(code, err)
            assert code in (0, 8)


@CI
@given(body=st.one_of(json_values.map(json.dumps), st.text(max_size=50)))
def test_any_registry_error_body_is_redacted_and_printable(body: str) -> None:
    from mlcc.secrets import redact
    from mlcc.ui.safe_text import printable

    secret = "s3cret-Passw0rd"
    shown = printable(redact(f"{body} Authorization: Basic {secret} {secret}", [secret]))
    assert secret not in shown
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", shown)
