"""`mlcc lint` on structure-mutated input: findings or a clear error, never a traceback.

The seeds are real objects mlcc publishes (the BuildConfig List under buildconfigs/, the Pod,
Job and MPIJob `mlcc gen` writes next to it, a launch ConfigMap); each example changes their
structure the way a hand edit or a hostile file would: any node replaced by another JSON
type, keys dropped, values wrapped in a list or a mapping, lists emptied. The Dockerfile half
does the same to the instructions of a generated Dockerfile: bare ENV / LABEL / ARG, odd
continuations, instructions without their arguments.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, List, Tuple

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlcc.errors import MlccError
from mlcc.lint import lint_paths
from mlcc.lint.dockerfile import lint_dockerfile
from mlcc.lint.kube import lint_yaml

REPO = Path(__file__).resolve().parents[2]
VARIANT = REPO / "buildconfigs" / "maskrcnn" / "cuda10.1-cudnn7-ubi8-x86_64"
DOCKERFILE = REPO / "dockerfiles" / "maskrcnn" / "cuda10.1-cudnn7-ubi8-x86_64" / "Dockerfile"

FUZZ = settings(
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=400,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

Path_ = Tuple[Any, ...]


def _seeds() -> List[Any]:
    """The published objects, the huge build-script ConfigMaps of the List left out."""
    build = yaml.safe_load((VARIANT / "build.yaml").read_text())
    small = [item for item in build["items"] if item["kind"] != "ConfigMap"]
    seeds: List[Any] = [{**build, "items": small}]
    seeds += [next(item for item in small if item["kind"] == "BuildConfig")]
    for name in ("pod.yaml", "job.yaml", "mpijob.yaml", "launch-1x8.yaml"):
        seeds.append(yaml.safe_load((VARIANT / "run" / name).read_text()))
    return seeds


SEEDS = _seeds()
LIST, BUILDCONFIG, POD, JOB, MPIJOB, CONFIGMAP = range(6)

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


def _paths(value: Any, path: Path_ = ()) -> List[Path_]:
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*path, index))
    return found


def _mutate(doc: Any, path: Path_, operation: str, replacement: Any) -> Any:
    if not path:
        wrapped = {"wrap-list": [doc], "wrap-map": {"x": doc}}
        return wrapped.get(operation, replacement)
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    key = path[-1]
    if operation == "drop":
        del parent[key]
    elif operation == "wrap-list":
        parent[key] = [parent[key]]
    elif operation == "wrap-map":
        parent[key] = {"value": parent[key]}
    elif operation == "empty":
        parent[key] = type(parent[key])() if isinstance(parent[key], (dict, list, str)) else None
    else:
        parent[key] = replacement
    return doc


@st.composite
def mutated(draw: st.DrawFn) -> Any:
    doc = copy.deepcopy(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(doc)
        path = draw(st.sampled_from(paths))
        operation = draw(st.sampled_from(["replace", "replace", "drop", "wrap-list", "wrap-map", "empty"]))
        doc = _mutate(doc, path, operation, draw(JSON))
    return doc


@FUZZ
@given(doc=mutated())
def test_lint_gives_findings_for_any_structure_of_its_objects(tmp_path: Path, doc: Any) -> None:
    path = tmp_path / "object.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    try:
        findings = lint_paths([path])
    except MlccError:
        return  # a clear error is fine; any other exception is a crash
    for finding in findings:
        assert finding.path == str(path) and finding.line >= 1 and finding.message


def _write(tmp_path: Path, doc: Any) -> Path:
    path = tmp_path / "object.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda o: o.update(kind=5), "kind must be a string"),
        (lambda o: o.pop("kind"), "kind is missing"),
        (lambda o: o.update(apiVersion=["v1"]), "apiVersion must be a string"),
        (lambda o: o.update(kind=""), "kind is missing"),
    ],
)
def test_lint_checks_kind_and_api_version(tmp_path: Path, change: Any, expected: str) -> None:
    pod = copy.deepcopy(SEEDS[POD])
    change(pod)
    findings = lint_yaml(_write(tmp_path, pod), None)
    assert any(expected in f.message and f.severity == "error" for f in findings), findings


@pytest.mark.parametrize(
    ("seed", "path", "value", "where"),
    [
        (POD, ("spec", "containers"), {"name": "x"}, "spec/containers"),
        (POD, ("spec", "containers", 0, "resources", "limits"), ["nvidia.com/gpu"], "limits"),
        (JOB, ("spec", "template"), "pod", "spec/template"),
        (MPIJOB, ("spec", "mpiReplicaSpecs", "Worker"), [1], "Worker"),
        (BUILDCONFIG, ("spec", "strategy", "type"), ["Docker"], "spec/strategy/type"),
        (BUILDCONFIG, ("spec", "triggers", 0), "ConfigChange", "spec/triggers/0"),
        (CONFIGMAP, ("data",), ["a"], "data"),
    ],
)
def test_a_node_of_the_wrong_type_is_a_finding_at_its_line(
    tmp_path: Path, seed: int, path: Path_, value: Any, where: str
) -> None:
    doc = _mutate(copy.deepcopy(SEEDS[seed]), path, "replace", value)
    findings = lint_yaml(_write(tmp_path, doc), None)
    shape = [f for f in findings if f.rule == "KS000"]
    assert shape and all(f.severity == "error" for f in shape), findings
    assert any(where in f.message for f in shape), shape


def test_list_items_that_are_not_objects_are_findings(tmp_path: Path) -> None:
    listing = copy.deepcopy(SEEDS[LIST])
    listing["items"].append("not an object")
    findings = lint_yaml(_write(tmp_path, listing), None)
    assert any(f.rule == "KS000" and "items/" in f.message for f in findings), findings
    listing["items"] = {"a": 1}
    findings = lint_yaml(_write(tmp_path, listing), None)
    assert any(f.rule == "KS000" and "items" in f.message for f in findings), findings


# ----------------------------------------------------------------------------- Dockerfiles

GENERATED = DOCKERFILE.read_text()
ODD_LINES = [
    "ENV",
    "LABEL",
    "ARG",
    "ENV \\",
    "LABEL \\\n",
    "ENV A",
    "ENV =",
    "LABEL =x",
    "LABEL a",
    "ARG =",
    "ENV A=\\",
    'LABEL a="unterminated',
    "ENV A B C",
    "RUN \\",
    "USER",
    "FROM",
    "\\",
    "ONBUILD",
    "ONBUILD ENV",
]


def _with_line(index: int, line: str) -> str:
    lines = GENERATED.splitlines(keepends=True)
    spot = 1 + index % (len(lines) - 1)  # after the generated mark, which makes mlcc's rules apply
    return "".join([*lines[:spot], line + "\n", *lines[spot:]])


@pytest.mark.parametrize("line", ODD_LINES)
def test_odd_dockerfile_instructions_are_findings(tmp_path: Path, line: str) -> None:
    findings = lint_dockerfile(tmp_path / "Dockerfile", content=_with_line(3, line))
    assert all(f.line >= 1 and f.rule.startswith("DF") for f in findings)
    if line.split()[0] in ("ENV", "LABEL", "ARG") and line.strip() in ("ENV", "LABEL", "ARG"):
        assert any(f.rule == "DF000" for f in findings), findings


@FUZZ
@given(
    index=st.integers(0, 10_000),
    instruction=st.sampled_from(["ENV", "LABEL", "ARG", "RUN", "USER", "ADD", "FROM", "ONBUILD", ""]),
    rest=st.text(st.sampled_from(list("ab=\"' \\\n$#{}")), max_size=12),
)
def test_lint_survives_any_instruction_shape(tmp_path: Path, index: int, instruction: str, rest: str) -> None:
    text = _with_line(index, f"{instruction} {rest}".strip(" "))
    path = tmp_path / "Dockerfile"
    path.write_text(text)
    findings = lint_dockerfile(path)
    assert all(f.line >= 1 and f.message for f in findings)
