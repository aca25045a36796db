"""`mlcc build --backend openshift` against a local API server that records what the
official client sends. No OpenShift cluster exists here: this checks the real HTTP
traffic (paths, methods, bodies, auth), not a cluster's reaction to it."""

from __future__ import annotations

from pathlib import Path
from typing import List

from tests.fakeopenshift import TOKEN, Cluster, Request, cluster

__all__ = ["cluster"]  # the fixture


def _build(cli, kubeconfig: Path, *extra: str):  # type: ignore[no-untyped-def]
    # CUDA 12.6 pinned: the objects' names below spell the stack, whatever the newest CUDA is
    args = (
        "build",
        "nccl-tests",
        "--cuda",
        "12.6",
        "--backend",
        "openshift",
        "--kubeconfig",
        str(kubeconfig),
    )
    return cli(*args, "-q", *extra)


def _writes(state: Cluster) -> List[Request]:
    return [r for r in state.requests if r.method in ("POST", "PATCH")]


def test_build_applies_instantiates_and_follows(cli, cluster) -> None:  # type: ignore[no-untyped-def]
    state, kubeconfig = cluster
    result = _build(cli, kubeconfig)
    assert result.code == 0, result.err
    writes = _writes(state)
    paths = [(r.method, r.path) for r in writes]
    base = "/apis/image.openshift.io/v1/namespaces/bench/imagestreams"
    assert paths[:2] == [("POST", base), ("POST", base)]
    assert ("POST", "/api/v1/namespaces/bench/configmaps") in paths
    assert ("POST", "/apis/build.openshift.io/v1/namespaces/bench/buildconfigs") in paths
    instantiate = writes[-1]
    assert instantiate.path.endswith("/buildconfigs/nccl-tests-cuda12-6-nccl2-23-ubi9-x86-64/instantiate")
    assert instantiate.body["kind"] == "BuildRequest"
    config = next(r.body for r in writes if r.path.endswith("/buildconfigs"))
    assert config["metadata"]["namespace"] == "bench"
    assert config["spec"]["strategy"]["dockerStrategy"]["from"]["kind"] == "ImageStreamTag"
    log = next(r for r in state.requests if r.path.endswith("/log"))
    assert log.query == {"follow": ["true"]}
    assert all(r.headers.get("authorization") == f"Bearer {TOKEN}" for r in state.requests)
    assert TOKEN not in result.out + result.err
    assert "built in" in result.out and "nccl-tests-cuda12-6-nccl2-23-ubi9-x86-64-1" in result.out


def test_one_mlcc_build_starts_exactly_one_cluster_build_and_records_it(cli, cluster, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from mlcc.history import History

    state, kubeconfig = cluster
    history = tmp_path / "history.sqlite"
    assert _build(cli, kubeconfig, "--history", str(history)).code == 0
    # applying starts no build of its own: no ConfigChange trigger beside the one instantiate
    config = next(r.body for r in _writes(state) if r.path.endswith("/buildconfigs"))
    assert "ConfigChange" not in [t["type"] for t in config["spec"]["triggers"]]
    assert len([r for r in state.requests if r.path.endswith("/instantiate")]) == 1
    [row] = History(history).rows()
    assert (row["backend"], row["status"], row["benchmark"]) == ("openshift", "built", "nccl-tests")
    assert row["variant"] == "cuda12.6-nccl2.23-ubi9-x86_64"


def test_existing_objects_are_merge_patched(cli, cluster) -> None:  # type: ignore[no-untyped-def]
    state, kubeconfig = cluster
    path = (
        "/apis/build.openshift.io/v1/namespaces/bench/buildconfigs/nccl-tests-cuda12-6-nccl2-23-ubi9-x86-64"
    )
    state.existing[path] = {"kind": "BuildConfig", "metadata": {"name": "x"}}
    assert _build(cli, kubeconfig).code == 0
    patch = next(r for r in state.requests if r.method == "PATCH")
    assert patch.path == path
    assert patch.headers["content-type"].startswith("application/merge-patch+json")


def test_an_image_with_the_same_digest_is_not_rebuilt(cli, cluster, kb, resolver) -> None:  # type: ignore[no-untyped-def]
    from mlcc.api import Pins, request_for
    from mlcc.render import render

    state, kubeconfig = cluster
    state.digest_label = render(resolver.resolve(request_for(kb, "nccl-tests", Pins(cuda="12.6")))).digest
    result = _build(cli, kubeconfig)
    assert result.code == 0 and "skipped" in result.out
    assert _writes(state) == []
    state.digest_label = "sha256:" + "1" * 64  # another content: build it
    assert "built in" in _build(cli, kubeconfig).out


def test_a_failed_cluster_build_is_a_build_error(cli, cluster) -> None:  # type: ignore[no-untyped-def]
    state, kubeconfig = cluster
    state.build_phase, state.build_message = "Failed", "Generic build failed"
    result = _build(cli, kubeconfig)
    assert result.code == 4
    assert "ended Failed: Generic build failed" in result.err


def test_unauthorized_says_log_in_again(cli, cluster) -> None:  # type: ignore[no-untyped-def]
    state, kubeconfig = cluster
    state.unauthorized = True
    result = _build(cli, kubeconfig)
    assert result.code == 4, result.err
    assert "oc login" in result.err and TOKEN not in result.err


def test_chain_starts_the_runtime_stage_then_the_first_stage_only(cli, cluster) -> None:  # type: ignore[no-untyped-def]
    """The runtime stage is FROM the base, so no stage's ImageChange starts it; the rest of
    the chain follows the stack stage through its triggers."""
    state, kubeconfig = cluster
    result = _build(cli, kubeconfig, "--chain")
    assert result.code == 0, result.err
    started = [r.path for r in state.requests if r.path.endswith("/instantiate")]
    assert (
        len(started) == 2 and "/buildconfigs/runtime-" in started[0] and "/buildconfigs/stack-" in started[1]
    )
    assert "follow through their ImageChange triggers" in result.out


def test_openshift_options_need_the_openshift_backend(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("build", "ssd", "--backend", "buildah", "--namespace", "x")
    assert result.code == 2 and "--backend openshift" in result.err


def test_missing_kubeconfig_is_a_usage_error(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli("build", "ssd", "--backend", "openshift", "--kubeconfig", str(tmp_path / "nope"))
    assert result.code == 2 and "kubeconfig" in result.err


def test_push_to_an_unreachable_registry(cli, cluster) -> None:  # type: ignore[no-untyped-def]
    """Skip-if-built asks the --push-to registry first: unreachable, it is a registry error
    before any cluster build; with --force the build runs, and only the content tag is lost."""
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    state, kubeconfig = cluster
    push = ("--push-to", f"127.0.0.1:{port}/bench/nccl-tests", "--push-secret", "s", "--no-tls-verify")
    refused = _build(cli, kubeconfig, *push)
    assert refused.code == 5 and f"cannot reach registry 127.0.0.1:{port}" in refused.err
    assert [r for r in state.requests if r.path.endswith("/instantiate")] == []
    forced = _build(cli, kubeconfig, *push, "--force")
    assert forced.code == 0, forced.err
    assert "built in" in forced.out
    assert len([r for r in state.requests if r.path.endswith("/instantiate")]) == 1
