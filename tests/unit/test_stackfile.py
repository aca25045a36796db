"""stack.json's one typed definition (mlcc.stackfile.document) and its JSON Schema agree:
the same keys and required keys at every level; every committed stack.json reads back to
the same bytes; generated documents round-trip and validate; bad documents are clear errors."""

from __future__ import annotations

import ast
import json
import typing
from pathlib import Path
from typing import Any, Dict, Optional

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlcc.errors import DriftError, UsageError
from mlcc.render.manifest import dumps
from mlcc.stackfile import document as doc
from mlcc.stackfile.document import SCHEMA_FILE, StackManifest, problem_of

REPO = Path(__file__).resolve().parents[2]
COMMITTED = sorted((REPO / "dockerfiles").glob("*/*/stack.json"))
SCHEMA = json.loads(SCHEMA_FILE.read_text())


def _object_schema(schema: Dict[str, Any]) -> Dict[str, Any]:
    """The object branch of ``schema`` (following $ref and ``oneOf [null, object]``)."""
    if "$ref" in schema:
        schema = SCHEMA["$defs"][schema["$ref"].rsplit("/", 1)[1]]
    for branch in schema.get("oneOf", ()):
        if branch.get("type") == "object":
            return branch
    return schema


def _type_namespace() -> Dict[str, Any]:
    """The document module's names as a type checker sees them: its own, plus what its
    ``if TYPE_CHECKING:`` blocks import and define (typing names, the aliases)."""
    namespace = dict(vars(doc))
    tree = ast.parse(Path(doc.__file__).read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            exec(compile(ast.Module(body=node.body, type_ignores=[]), doc.__file__, "exec"), namespace)
    return namespace


TYPES = _type_namespace()


def _is_record(candidate: Any) -> bool:
    return isinstance(candidate, type) and candidate in set(doc.records())


def _record_of(hint: Any) -> Optional[type]:
    """The document class a field holds (directly, Optional, or as a tuple of them)."""
    for candidate in (hint, *typing.get_args(hint)):
        if _is_record(candidate):
            return candidate  # type: ignore[no-any-return]
        for inner in typing.get_args(candidate):
            if _is_record(inner):
                return inner  # type: ignore[no-any-return]
    return None


def _pairs(cls: type, schema: Dict[str, Any], where: str):  # type: ignore[no-untyped-def]
    """(class, its schema, where) for the class and every record below it."""
    yield cls, schema, where
    hints = typing.get_type_hints(cls, TYPES)
    for field in cls._fields:  # type: ignore[attr-defined]
        record = _record_of(hints[field])
        if record is None:
            continue
        sub = schema["properties"][field]
        if sub.get("type") == "array":
            sub = sub["items"]
        yield from _pairs(record, _object_schema(sub), f"{where}/{field}")


def test_every_class_field_is_in_the_schema_and_every_schema_key_is_a_field() -> None:
    seen = set()
    for cls, schema, where in _pairs(StackManifest, SCHEMA, "(top)"):
        seen.add(cls)
        fields = set(cls._fields)  # type: ignore[attr-defined]
        assert fields == set(schema["properties"]), where
        defaulted = set(cls._field_defaults)  # type: ignore[attr-defined]
        assert fields - defaulted == set(schema["required"]), where
        assert schema.get("additionalProperties") is False, where
    assert seen == set(doc.records())  # no class outside the document, none left unchecked


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
def test_every_committed_stack_json_reads_back_to_the_same_bytes(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    manifest = StackManifest.from_json(json.loads(text), str(path))
    assert dumps(manifest.to_json()) == text
    assert manifest.variant == path.parent.name


def test_the_published_set_is_there_to_check() -> None:
    assert len(COMMITTED) >= 20


# ----------------------------------------------------------------------------- generated

_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
_version = st.text("0123456789.", min_size=1, max_size=8)
_strings = st.lists(_text, max_size=3).map(tuple)
_pairs_of = st.dictionaries(_text, _text, max_size=3).map(lambda d: tuple(sorted(d.items())))
_library = st.builds(
    doc.LibraryRecord,
    version=_version,
    method=st.sampled_from(["rpm", "deb", "tarball", "bundled"]),
    packages=_strings,
    url=st.none() | _text,
    for_cuda=_text,
)
_components = st.builds(
    doc.Components,
    cuda=st.none() | st.builds(doc.CudaRecord, version=_version, packages=_strings, min_driver=_version),
    cudnn=st.none() | _library,
    nccl=st.none() | _library,
    python=st.none() | st.builds(doc.PythonRecord, version=_version, packages=_strings, executable=_text),
    gcc=st.builds(doc.GccRecord, version=_version, toolset=st.none() | _text),
    framework=st.none()
    | st.builds(
        doc.FrameworkRecord,
        name=_text,
        module=_text,
        version=_version,
        variant=_text,
        install=st.sampled_from(["pip", "conda", "source"]),
        cuda=_strings,
        packages=_strings,
        loads=_pairs_of,
    ),
)
_sha256 = st.none() | st.text("0123456789abcdef", min_size=64, max_size=64)
_reason = st.none() | st.text(min_size=1, max_size=12)
_fetches = st.builds(
    doc.Fetches,
    downloads=st.lists(
        st.builds(
            doc.DownloadRecord,
            name=_text,
            url=_text,
            sha256=_sha256,
            sha256_unavailable=_reason,
            checksum_url=st.none() | _text,
        ),
        max_size=2,
    ).map(tuple),
    git=st.lists(
        st.builds(
            doc.GitRecord,
            name=_text,
            repository=_text,
            commit=st.text("0123456789abcdef", min_size=7, max_size=40),
            commit_unresolved=_reason,
        ),
        max_size=2,
    ).map(tuple),
    pip=st.lists(
        st.builds(
            doc.PipRecord,
            lock=st.text("0123456789abcdef", min_size=16, max_size=16),
            lock_file=_text,
            environment=st.sampled_from(["venv", "conda"]),
            requirements=_strings,
            packages=st.lists(
                st.builds(
                    doc.PipPackageRecord, name=_text, version=_version, file=st.none() | _text, sha256=_sha256
                ),
                max_size=2,
            ).map(tuple),
            unlocked=_reason,
        ),
        max_size=2,
    ).map(tuple),
    conda=st.lists(
        st.builds(
            doc.CondaRecord,
            channels=_strings,
            packages=_strings,
            unbuilt=_strings,
            builds_unavailable=_reason,
        ),
        max_size=1,
    ).map(tuple),
)
_manifests = st.builds(
    StackManifest,
    format=st.just(1),
    generator=st.builds(doc.Generator, name=st.just("mlcc"), version=_version),
    benchmark=st.builds(
        doc.BenchmarkRecord,
        name=_text,
        title=_text,
        suite=_text,
        source=st.none()
        | st.builds(
            doc.SourceRecord,
            repository=_text,
            commit=st.text("0123456789abcdef", min_size=40, max_size=40),
            path=st.none() | _text,
        ),
        extends_env=st.lists(
            st.builds(doc.ExtendedEnvRecord, name=_text, prepend=_strings, append=_strings), max_size=2
        ).map(tuple),
    ),
    variant=st.text("abcXYZ019._-", min_size=1, max_size=20),
    arch=_text,
    accelerator=st.sampled_from(["cuda", "cpu"]),
    base=st.builds(
        doc.BaseRecord,
        name=_text,
        image=_text,
        default_image=_text,
        digest=st.none() | st.text("0123456789abcdef", min_size=64, max_size=64).map("sha256:".__add__),
    ),
    mirror=_text,
    components=_components,
    pins=_pairs_of,
    reference=st.booleans(),
    verified=st.booleans(),
    choices=st.lists(
        st.builds(
            doc.ChoiceRecord,
            component=_text,
            version=st.none() | _text,
            reason=_text,
            origin=_text,
            sources=_strings,
            verified=st.booleans(),
            unverified_fields=_strings,
        ),
        max_size=3,
    ).map(tuple),
    fetches=st.none(),
)
# format 2: the same document with its fetches (format 1 never has them)
_manifests = _manifests | st.tuples(_manifests, _fetches).map(
    lambda pair: pair[0]._replace(format=doc.MANIFEST_FORMAT, fetches=pair[1])
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_manifests)
def test_generated_documents_validate_and_round_trip(manifest: StackManifest) -> None:
    document = json.loads(dumps(manifest.to_json()))
    assert problem_of(document) is None
    assert StackManifest.from_json(document) == manifest


# ----------------------------------------------------------------------------- bad input


def _committed() -> Dict[str, Any]:
    return json.loads(COMMITTED[0].read_text())


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda d: d.pop("components"), "(top)"),
        (lambda d: d["components"]["gcc"].update(version=7), "components/gcc/version"),
        (lambda d: d.update(variant="x86_64\n"), "variant"),  # ECMA-262 `$`: no final newline
        (lambda d: d["base"].update(extra="x"), "base"),
        (lambda d: d["choices"].append("why"), "choices/"),
    ],
)
def test_a_document_mlcc_did_not_write_is_a_clear_error(change: Any, where: str) -> None:
    document = _committed()
    change(document)
    with pytest.raises(DriftError) as caught:
        StackManifest.from_json(document, "img:/etc/mlcc/stack.json")
    message = str(caught.value)
    assert message.startswith("img:/etc/mlcc/stack.json is not a stack manifest mlcc wrote: " + where)
    with pytest.raises(UsageError):
        StackManifest.from_json(document, "--stack f", UsageError)


@pytest.mark.parametrize("data", [None, [], "stack", 1])
def test_not_an_object(data: Any) -> None:
    assert problem_of(data) == "not a JSON object"


# ----------------------------------------------------------------------------- formats


def test_mlcc_writes_the_newest_format_and_reads_every_one() -> None:
    assert max(doc.READABLE_FORMATS) == doc.MANIFEST_FORMAT
    assert SCHEMA["properties"]["format"] == {"enum": list(doc.READABLE_FORMATS)}
    assert {json.loads(p.read_text())["format"] for p in COMMITTED} == {doc.MANIFEST_FORMAT}


def _format_1(document: Dict[str, Any]) -> Dict[str, Any]:
    """A committed document as mlcc wrote it before format 2 (an image in a registry)."""
    old = {k: v for k, v in document.items() if k != "fetches"}
    old["format"] = 1
    return old


def test_an_old_format_document_still_reads_and_round_trips() -> None:
    old = _format_1(_committed())
    manifest = StackManifest.from_json(old)
    assert manifest.format == 1 and manifest.fetches is None
    assert manifest.to_json() == old


@pytest.mark.parametrize(
    ("document", "where"),
    [
        (lambda d: d.pop("fetches"), "(top): 'fetches' is a required property"),  # format 2 without
        (lambda d: d.update(format=1), "(top)"),  # format 1 with fetches
        (lambda d: d.update(format=3), "format"),
        (lambda d: d["fetches"]["git"].append({**d["fetches"]["git"][0], "commit": "main"}), "fetches/git/"),
        (
            lambda d: d["fetches"]["pip"][0]["packages"][0].update(sha256="sha256:x"),
            "fetches/pip/0/packages/0/sha256",
        ),
    ],
)
def test_fetches_belong_to_format_2_only(document: Any, where: str) -> None:
    data = _committed()
    document(data)
    problem = problem_of(data)
    assert problem is not None and problem.startswith(where), problem
