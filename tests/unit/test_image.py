"""Image references, credentials, image archives and verify's comparisons, without an
engine (the e2e suite runs them against real images)."""

from __future__ import annotations

import base64
import io
import json
import re
import tarfile
from pathlib import Path
from typing import Any, Dict

import pytest

from mlcc.errors import UsageError
from mlcc.image.auth import AuthFile, Credentials, credentials_for
from mlcc.image.content import INSTALLED_FILE, STACK_FILE, ImageContent, read_archive, split_transport
from mlcc.image.reference import parse_reference, parse_repository
from mlcc.image.stack import summary, verify
from tests.oci_layout import layer, oci_layout


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("quay.io/acme/maskrcnn:v1", ("quay.io", "acme/maskrcnn", "v1", None)),
        ("127.0.0.1:5000/maskrcnn", ("127.0.0.1:5000", "maskrcnn", None, None)),
        (
            "docker://localhost/mlcc/ssd:cuda10.2-cudnn7-ubi8-x86_64",
            ("localhost", "mlcc/ssd", "cuda10.2-cudnn7-ubi8-x86_64", None),
        ),
        ("r.example.com/a/b@sha256:" + "a" * 64, ("r.example.com", "a/b", None, "sha256:" + "a" * 64)),
    ],
)
def test_parse_reference(text: str, expected: tuple) -> None:  # type: ignore[type-arg]
    assert tuple(parse_reference(text)) == expected


@pytest.mark.parametrize(
    "text", ["maskrcnn:v1", "acme/maskrcnn", "quay.io/Acme/x", "quay.io/a:b c", "quay.io/a@sha256:zz"]
)
def test_bad_references_are_usage_errors(text: str) -> None:
    with pytest.raises(UsageError):
        parse_reference(text)


def test_parse_repository() -> None:
    assert parse_repository("quay.io/me") == ("quay.io", "me", None, None)
    assert parse_repository("127.0.0.1:5000") == ("127.0.0.1:5000", "", None, None)
    with pytest.raises(UsageError):
        parse_repository("quay.io/me:tag")


def test_credentials_come_from_env_first_then_auth_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in (
        "REGISTRY_AUTH_FILE",
        "XDG_RUNTIME_DIR",
        "DOCKER_CONFIG",
        "MLCC_REGISTRY_USERNAME",
        "MLCC_REGISTRY_PASSWORD",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert credentials_for("quay.io") is None
    auth = tmp_path / "auth.json"
    auth.write_text(json.dumps({"auths": {"quay.io": {"auth": base64.b64encode(b"me:s3cret").decode()}}}))
    monkeypatch.setenv("REGISTRY_AUTH_FILE", str(auth))
    found = credentials_for("quay.io")
    assert found is not None and (found.username, found.password, found.file) == ("me", "s3cret", str(auth))
    assert "s3cret" not in repr(found) and "s3cret" not in str(found)
    assert credentials_for("other.io") is None
    monkeypatch.setenv("MLCC_REGISTRY_USERNAME", "ci")
    monkeypatch.setenv("MLCC_REGISTRY_PASSWORD", "t0ken")
    from_env = credentials_for("quay.io")
    assert from_env is not None and from_env.username == "ci" and from_env.file is None


def test_auth_file_for_cli_engines_is_private_and_removed(tmp_path: Path) -> None:
    credentials = Credentials("ci", "t0ken", "env")
    with AuthFile("quay.io", credentials) as auth:
        assert auth.path is not None
        path = Path(auth.path)
        assert path.stat().st_mode & 0o777 == 0o600
        entry = json.loads(path.read_text())["auths"]["quay.io"]["auth"]
        assert base64.b64decode(entry) == b"ci:t0ken"
    assert not path.exists()
    with AuthFile("quay.io", None) as none:
        assert none.path is None


def test_split_transport() -> None:
    assert split_transport("oci-archive:/tmp/x.tar") == ("oci-archive", "/tmp/x.tar")
    assert split_transport("local:localhost/mlcc/ssd:v") == ("local", "localhost/mlcc/ssd:v")
    assert split_transport("docker://quay.io/a:b") == ("docker", "quay.io/a:b")
    assert split_transport("quay.io/a:b") == ("docker", "quay.io/a:b")


# ----------------------------------------------------------------------------- archives


def test_read_an_oci_layout_top_layer_first_with_whiteouts(tmp_path: Path) -> None:
    base = layer({"etc/mlcc/stack.json": b'{"old": true}', "etc/mlcc/installed.json": b"{}"})
    top = layer({"./etc/mlcc/stack.json": b'{"new": true}'}, whiteouts=("etc/mlcc/.wh.installed.json",))
    content = read_archive(
        oci_layout(tmp_path / "img", [base, top], architecture="ppc64le", labels={"io.mlcc.variant": "v"})
    )
    assert content.arch == "ppc64le" and content.labels == {"io.mlcc.variant": "v"}
    assert content.json_file(STACK_FILE) == {"new": True}
    assert INSTALLED_FILE not in content.files  # deleted by the top layer


def test_read_an_oci_archive(tmp_path: Path) -> None:
    folder = oci_layout(tmp_path / "img", [layer({"etc/mlcc/stack.json": b"{}"})], labels={})
    archive = tmp_path / "img.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(folder, arcname=".")
    assert read_archive(archive).json_file(STACK_FILE) == {}
    with pytest.raises(UsageError):
        read_archive(tmp_path / "missing.tar")


def test_a_private_key_in_any_layer_is_found_even_when_a_later_layer_deletes_it(tmp_path: Path) -> None:
    # fake keys, their header lines split so that no secret scanner takes the test for a leak
    key = b"-----BEGIN " + b"OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
    pem = b"-----BEGIN " + b"RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n"
    ssh = {"etc/ssh/ssh_host_ed25519_key": key, "etc/ssh/ssh_host_ed25519_key.pub": b"ssh-ed25519 AAAA"}
    base = layer(ssh)
    middle = layer({"opt/app/tls.key": pem, "opt/app/README": b"no -----BEGIN PUBLIC KEY----- here"})
    top = layer({"etc/mlcc/stack.json": b"{}"}, whiteouts=("etc/ssh/.wh.ssh_host_ed25519_key",))
    content = read_archive(oci_layout(tmp_path / "img", [base, middle, top], labels={}))
    # the deleted key's bytes are still in the base layer every pull fetches
    assert sorted(content.private_keys) == ["etc/ssh/ssh_host_ed25519_key", "opt/app/tls.key"]
    found = [m for m in verify(content) if m.component == "private key"]
    assert sorted(m.found for m in found) == ["/etc/ssh/ssh_host_ed25519_key", "/opt/app/tls.key"]
    assert all(m.severity == "drift" for m in found)
    clean = read_archive(oci_layout(tmp_path / "clean", [top], labels={}))
    assert clean.private_keys == ()


# ----------------------------------------------------------------------------- verify


def _image(kb, resolver, flavour: str = "devel", **changes: Any) -> ImageContent:  # type: ignore[no-untyped-def]
    """An image as mlcc would build it for maskrcnn --cuda 10.1, with a perfect record."""
    from mlcc.api import Pins, request_for
    from mlcc.render import render

    rendered = render(resolver.resolve(request_for(kb, "maskrcnn", Pins(cuda="10.1", flavour=flavour))))
    stack = json.loads(rendered.content("stack.json"))
    labels = dict(
        __import__("dockerfile_parse")
        .DockerfileParser(fileobj=io.BytesIO(rendered.content("Dockerfile").encode()))
        .labels
    )
    packages = {}
    for pin in stack["components"]["cuda"]["packages"]:
        name, _, rest = pin.partition("-10.1.243") if "-10.1.243" in pin else pin.partition("-10.2.1.243")
        packages[name] = ("10.1.243" if "10.1.243" in pin else "10.2.1.243") + rest
    installed = {
        "format": 1,
        "arch": "x86_64",
        "os": {"id": "rhel", "version_id": "8.10"},
        "packages": packages,
        "headers": {"cudnn": "7.6.5", "nccl": "2.8.4"},
        "nvcc": "10.1.243" if flavour == "devel" else None,
        "gcc": "8.5.0" if flavour == "devel" else None,
        "compilers": ["/usr/bin/gcc", "/usr/local/cuda/bin/nvcc"] if flavour == "devel" else [],
        "python": "3.6.8",
        "modules": {"torch": {"version": "1.1.0a0+828a6a3", "cuda": "10.1.243"}},
    }
    for key, value in changes.items():
        if key == "labels":
            labels.update(value)
        else:
            installed[key] = value
    files = {STACK_FILE: json.dumps(stack).encode(), INSTALLED_FILE: json.dumps(installed).encode()}
    return ImageContent("test", None, "linux", "amd64", labels, files)


def test_inspect_counts_how_the_fetches_were_pinned(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    rows = {r.component: r.resolved for r in summary(_image(kb, resolver))}
    assert rows["downloads"] == "3: 2 by sourced sha256, 1 without (recipe says why: nvidia-key:cuda)"
    assert rows["git checkouts"] == "5: 4 by full commit, 1 by short hash (framework:pytorch)"
    assert re.match(
        r"^\d+: \d+ hash-locked \(\d+ files\), \d+ not \(stack.json says why\)\Z", rows["pip installs"]
    )
    assert "conda installs" not in rows and "fetches" not in rows


def _format_1(content: ImageContent) -> ImageContent:
    """The image as mlcc built it before stack.json format 2 (no fetches)."""
    stack = json.loads(content.files[STACK_FILE])
    del stack["fetches"]
    stack["format"] = 1
    return content._replace(files={**content.files, STACK_FILE: json.dumps(stack).encode()})


def test_an_image_of_stack_format_1_still_inspects_and_verifies(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    old = _format_1(_image(kb, resolver))
    assert verify(old) == []
    rows = {r.component: r.resolved for r in summary(old)}
    assert rows["fetches"] == "not recorded (stack.json format 1)"
    assert "downloads" not in rows and rows["NCCL"].startswith("2.8.4")
    drifted = _format_1(_image(kb, resolver, python="3.7.3"))
    assert [m.component for m in verify(drifted)] == ["Python"]


def test_verify_notes_a_hash_locked_package_pip_lists_at_another_version(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    same = _image(kb, resolver, pip=[{"name": "PyYAML", "version": "5.1"}, {"name": "six", "version": "1"}])
    assert verify(same) == []
    other = verify(_image(kb, resolver, pip=[{"name": "PyYAML", "version": "5.3"}, "junk", {"name": 1}]))
    assert [(m.component, m.found, m.severity) for m in other] == [("pip pyyaml", "5.3", "note")]
    assert other[0].expected.startswith("5.1 (hash-locked, ")
    assert verify(_format_1(_image(kb, resolver, pip=[{"name": "PyYAML", "version": "5.3"}]))) == []


def test_verify_accepts_an_image_that_holds_its_stack(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    assert verify(_image(kb, resolver)) == []
    rows = {r.component: r for r in summary(_image(kb, resolver))}
    assert rows["NCCL"].resolved.startswith("2.8.4") and rows["NCCL"].installed == "2.8.4"
    assert rows["framework"].installed == "1.1.0a0+828a6a3 (CUDA 10.1.243)"


@pytest.mark.parametrize(
    ("changes", "component"),
    [
        ({"arch": "ppc64le"}, "architecture"),
        ({"headers": {"cudnn": "7.6.4", "nccl": "2.8.4"}}, "cuDNN headers"),
        ({"headers": {"cudnn": "7.6.5", "nccl": "2.4.8"}}, "NCCL headers"),
        ({"nvcc": "10.2.89"}, "CUDA nvcc"),
        ({"python": "3.8.10"}, "Python"),
        ({"gcc": "11.4.1"}, "GCC"),
        ({"modules": {"torch": {"version": "1.5.0", "cuda": "10.1"}}}, "framework pytorch"),
        (
            {"modules": {"torch": {"version": "1.1.0a0+828a6a3", "cuda": "9.0"}}},
            "framework pytorch CUDA build",
        ),
        ({"labels": {"io.mlcc.nccl": "2.4.8"}}, "label io.mlcc.nccl"),
        ({"packages": {}}, "CUDA package"),
    ],
)
def test_verify_names_each_kind_of_drift(kb, resolver, changes: Dict[str, Any], component: str) -> None:  # type: ignore[no-untyped-def]
    found = [m for m in verify(_image(kb, resolver, **changes)) if m.severity == "drift"]
    assert found and all(m.component.startswith(component) for m in found), found


def test_a_patch_level_gcc_change_is_a_note_not_drift(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    [finding] = verify(_image(kb, resolver, gcc="8.5.1"))
    assert finding.severity == "note" and finding.component == "GCC"


def test_verify_without_the_manifest(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    image = _image(kb, resolver)._replace(files={})
    [finding] = verify(image)
    assert finding.component == "stack manifest"


def _framework_reports(**libraries: Any) -> Dict[str, Any]:
    return {"modules": {"torch": {"version": "1.1.0a0+828a6a3", "cuda": "10.1.243", **libraries}}}


def test_verify_compares_the_libraries_the_framework_loads(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    assert verify(_image(kb, resolver, **_framework_reports(cudnn="7.6.5", nccl="2.8.4"))) == []
    # a framework that brings its own cuDNN 7 while the stack names the system cuDNN 8
    drift = verify(_image(kb, resolver, **_framework_reports(cudnn="8.0.5", nccl="2.8.4")))
    assert [(m.component, m.expected, m.found, m.severity) for m in drift] == [
        ("cuDNN the framework loads", "7.6.5.32", "8.0.5", "drift")
    ]
    nccl = verify(_image(kb, resolver, **_framework_reports(cudnn="7.6.5", nccl="2.4.8")))
    assert [m.component for m in nccl] == ["NCCL the framework loads"]
    silent = verify(_image(kb, resolver, **_framework_reports(cudnn=None, nccl="2.8.4")))
    assert [(m.component, m.severity) for m in silent] == [("cuDNN the framework loads", "note")]


def test_recorder_probes_a_real_framework(tmp_path: Path) -> None:
    """mlcc-record, the script images run, against the real torch CPU wheel."""
    import subprocess
    import sys

    from mlcc.render import FILES

    script = FILES / "mlcc-record"
    result = subprocess.run(
        ["sh", str(script), "--python", sys.executable, "--module", "torch", "--module", "no_such_module"],
        capture_output=True,
        text=True,
        check=True,
    )
    record = json.loads(result.stdout)
    import torch

    torch_record = record["modules"]["torch"]
    assert torch_record["version"] == torch.__version__
    # what torch itself reports: a CPU build has no CUDA runtime, cuDNN or NCCL
    assert torch_record["cuda"] == torch.version.cuda
    assert torch_record["cudnn"] is None and torch.backends.cudnn.version() is None
    assert torch_record["nccl"] is None
    assert record["modules"]["no_such_module"]["error"].startswith("ModuleNotFoundError")


def test_verify_wants_no_compiler_in_a_runtime_image(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    assert verify(_image(kb, resolver, "runtime")) == []
    with_gcc = verify(_image(kb, resolver, "runtime", compilers=["/usr/bin/gcc"]))
    assert [(m.component, m.expected, m.found) for m in with_gcc] == [
        ("compilers", "none (a runtime image)", "/usr/bin/gcc")
    ]
    unrecorded = _image(kb, resolver, "runtime")
    record = json.loads(unrecorded.files[INSTALLED_FILE])
    del record["compilers"]
    files = {**unrecorded.files, INSTALLED_FILE: json.dumps(record).encode()}
    assert [m.found for m in verify(unrecorded._replace(files=files))] == ["not recorded"]
    # a devel image is checked for its nvcc and GCC, and may hold compilers
    assert [m.component for m in verify(_image(kb, resolver, nvcc=None))] == ["CUDA nvcc"]
