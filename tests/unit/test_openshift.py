"""OpenShift objects and run manifests: validated against the real API schemas (OpenShift's
and the MPIJob's under mlcc/lint/schemas, Kubernetes' from kubernetes-validate), and checked for
what the cluster needs."""

from __future__ import annotations

import io
import shlex
from pathlib import Path
from typing import Any, Dict, List

import pytest
import yaml
from dockerfile_parse import DockerfileParser

from mlcc.api import Pins, request_for
from mlcc.errors import UsageError
from mlcc.lint.kube import SchemaStore
from mlcc.render import render
from mlcc.render.openshift import (
    BUILD_FILE,
    ClusterOptions,
    benchmark_list,
    check_cluster_options,
    object_list,
    render_openshift,
)
from mlcc.render.openshift.yamlout import dumps
from tests.conftest import REPO
from tests.kube_schemas import SCHEMAS, object_errors, schema_store

Obj = Dict[str, Any]


@pytest.fixture(scope="module")
def store() -> SchemaStore:
    return schema_store()


def _rendered(kb, resolver, benchmark: str, **pins: Any):  # type: ignore[no-untyped-def]
    request = request_for(kb, benchmark, Pins(**pins))
    return render(resolver.resolve(request), request=request)


def _objects(files) -> List[Obj]:  # type: ignore[no-untyped-def]
    found: List[Obj] = []
    for _, content in files.files:
        document = yaml.safe_load(content)
        found += document["items"] if document["kind"] == "List" else [document]
    return found


def _by_kind(objects: List[Obj], kind: str) -> List[Obj]:
    return [o for o in objects if o["kind"] == kind]


def _errors(obj: Obj, store: SchemaStore, openshift: str = "4") -> List[str]:
    return object_errors(obj, store, openshift)


VARIATIONS: Dict[str, Dict[str, Any]] = {
    "default": {},
    "openshift-3.11": {"openshift": "3.11", "namespace": "mlperf"},
    "chain": {"chain": True, "namespace": "mlperf"},
    "push": {"push_to": "quay.io/acme/bench", "push_secret": "quay-push"},
    "git": {"git_uri": "https://github.com/acme/benchmarks.git", "git_ref": "v1"},
    "hostpath-4gpus": {"data_hostpath": "/mnt/datasets", "gpus": 4},
    "multi-node-rdma": {
        "gpus": 4,
        "nodes": 3,
        "rdma_resource": "rdma/rdma_shared_device_a",
        "sriov_network": "sriov-ib0",
        "host_network": True,
        "nccl_env": (("NCCL_SOCKET_IFNAME", "ib0"),),
        "gpu_product": "Tesla-V100-SXM2-16GB",
    },
}


@pytest.mark.parametrize("variation", sorted(VARIATIONS))
@pytest.mark.parametrize(
    ("benchmark", "pins"),
    [
        ("maskrcnn", {"cuda": "10.1"}),
        ("ssd", {"arch": "ppc64le"}),
        ("nccl-tests", {"base": "ubuntu2204"}),
        ("minigo", {}),
    ],
)
def test_generated_objects_validate_against_the_real_schemas(
    kb, resolver, store: SchemaStore, variation: str, benchmark: str, pins: Dict[str, Any]
) -> None:  # type: ignore[no-untyped-def]
    options = check_cluster_options(ClusterOptions(**VARIATIONS[variation]))
    rendered = _rendered(kb, resolver, benchmark, **pins)
    if options.nodes and benchmark == "minigo":  # no multi-node launch known: refused
        with pytest.raises(UsageError, match="--nodes 3"):
            render_openshift(rendered, options)
        return
    objects = _objects(render_openshift(rendered, options))
    kinds = {o["kind"] for o in objects}
    assert {"ImageStream", "BuildConfig"} <= kinds
    assert ({"MPIJob"} if options.nodes else {"Pod", "Job"}) <= kinds
    assert options.nodes is None or not kinds & {"Pod", "Job"}  # --nodes N > 1: the MPIJob only
    for obj in objects:
        assert _errors(obj, store, options.openshift) == [], (obj["kind"], obj["metadata"]["name"])


def test_every_committed_object_validates(store: SchemaStore) -> None:
    files = sorted((REPO / "buildconfigs").rglob("*.yaml"))
    assert len(files) > 50
    checked = 0
    for path in files:
        document = yaml.safe_load(path.read_text())
        for obj in document["items"] if document["kind"] == "List" else [document]:
            assert _errors(obj, store) == [], (path, obj["metadata"]["name"])
            checked += 1
    assert checked > 200


def test_the_schemas_really_reject_a_broken_object(kb, resolver, store: SchemaStore) -> None:
    objects = _objects(render_openshift(_rendered(kb, resolver, "ssd")))
    config = _by_kind(objects, "BuildConfig")[0]
    config["spec"]["runPolcy"] = "Serial"  # a typo the strict schema catches
    assert any("runPolcy" in e for e in _errors(config, store))
    del config["spec"]["runPolcy"]
    del config["spec"]["strategy"]
    assert any("strategy" in e for e in _errors(config, store))
    config_311 = _by_kind(_objects(render_openshift(_rendered(kb, resolver, "ssd"))), "BuildConfig")[0]
    # written for 4: the 3.11 schema wants status
    assert any("status" in e for e in _errors(config_311, store, "3.11"))
    pod = _by_kind(objects, "Pod")[0]
    pod["spec"]["containers"][0]["imagePullPolicyy"] = "Always"  # Kubernetes' strict schema
    assert any("imagePullPolicyy" in e for e in _errors(pod, store))


def test_ppc64le_builds_select_ppc64le_nodes_and_keep_every_arch_of_the_base(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    objects = _objects(render_openshift(_rendered(kb, resolver, "ssd", arch="ppc64le")))
    [config] = _by_kind(objects, "BuildConfig")
    assert config["spec"]["nodeSelector"] == {"kubernetes.io/arch": "ppc64le"}
    base = next(o for o in _by_kind(objects, "ImageStream") if o["metadata"]["name"].startswith("mlcc-base"))
    policy = base["spec"]["tags"][0]["importPolicy"]
    assert policy == {"scheduled": True, "importMode": "PreserveOriginal"}
    for kind in ("Pod", "Job"):
        [run] = _by_kind(objects, kind)
        spec = run["spec"] if kind == "Pod" else run["spec"]["template"]["spec"]
        assert spec["nodeSelector"] == {"kubernetes.io/arch": "ppc64le"}
    old = _objects(
        render_openshift(_rendered(kb, resolver, "ssd", arch="ppc64le"), ClusterOptions(openshift="3.11"))
    )
    base_311 = next(o for o in _by_kind(old, "ImageStream") if o["metadata"]["name"].startswith("mlcc-base"))
    assert "importMode" not in base_311["spec"]["tags"][0]["importPolicy"]
    assert _by_kind(old, "BuildConfig")[0]["status"] == {"lastVersion": 0}


def test_build_config_builds_the_committed_dockerfile_from_the_base_stream(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    rendered = _rendered(kb, resolver, "maskrcnn", cuda="10.1")
    objects = _objects(render_openshift(rendered))
    [config] = _by_kind(objects, "BuildConfig")
    spec = config["spec"]
    assert spec["runPolicy"] == "Serial"
    assert spec["successfulBuildsHistoryLimit"] == 5 and spec["failedBuildsHistoryLimit"] == 5
    # no ConfigChange: applying the objects must not start a build beside `oc start-build`
    assert [t["type"] for t in spec["triggers"]] == ["ImageChange", "Generic"]
    assert spec["triggers"][1]["generic"] == {"secretReference": {"name": "mlcc-webhook"}}
    docker = spec["strategy"]["dockerStrategy"]
    assert spec["strategy"]["type"] == "Docker"
    assert docker["from"] == {"kind": "ImageStreamTag", "name": "mlcc-base-ubi8:8.10"}
    assert spec["output"]["to"] == {"kind": "ImageStreamTag", "name": "maskrcnn:cuda10.1-cudnn7-ubi8-x86_64"}
    committed = REPO / "dockerfiles" / "maskrcnn" / "cuda10.1-cudnn7-ubi8-x86_64"
    assert spec["source"]["dockerfile"] == (committed / "Dockerfile").read_text()
    [context] = [m for m in _by_kind(objects, "ConfigMap") if "stack.json" in m["data"]]
    assert context["data"]["stack.json"] == (committed / "stack.json").read_text()
    assert context["data"]["mlcc-record"] == (committed / "mlcc-record").read_text()
    assert spec["source"]["configMaps"][0] == {"configMap": {"name": context["metadata"]["name"]}}
    # the output labels are the Dockerfile's LABELs, digest included
    labels = DockerfileParser(fileobj=io.BytesIO(spec["source"]["dockerfile"].encode())).labels
    assert {item["name"]: item["value"] for item in spec["output"]["imageLabels"]} == labels
    assert labels["io.mlcc.digest"] == rendered.digest
    for obj in objects:
        assert obj["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "mlcc"
        assert obj["metadata"]["labels"]["app.kubernetes.io/part-of"] == "mlcc"


def test_script_steps_travel_in_their_own_configmap(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    objects = _objects(render_openshift(_rendered(kb, resolver, "minigo")))
    maps = {m["metadata"]["name"].rsplit("-", 2)[-2:][-1]: m for m in _by_kind(objects, "ConfigMap")}
    [config] = _by_kind(objects, "BuildConfig")
    mounts = config["spec"]["source"]["configMaps"]
    assert {"destinationDir": "scripts"}.items() <= mounts[1].items()
    assert any("build-minigo-cc.sh" in m["data"] for m in maps.values())


def test_git_source_and_push_to_an_external_registry(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    options = ClusterOptions(
        git_uri="https://github.com/acme/benchmarks.git",
        git_ref="v1",
        push_to="quay.io/acme/ssd",
        push_secret="quay",
    )
    objects = _objects(render_openshift(_rendered(kb, resolver, "ssd"), options))
    [config] = _by_kind(objects, "BuildConfig")
    source = config["spec"]["source"]
    assert source == {
        "type": "Git",
        "git": {"uri": "https://github.com/acme/benchmarks.git", "ref": "v1"},
        "contextDir": "dockerfiles/ssd/cuda10.1-cudnn7-ubi8-x86_64",
    }
    # no build context ConfigMap: only the run's launch configurations
    components = {
        m["metadata"]["labels"]["app.kubernetes.io/component"] for m in _by_kind(objects, "ConfigMap")
    }
    assert components == {"benchmark-config"}
    assert [t["type"] for t in config["spec"]["triggers"]] == [
        "ImageChange",
        "GitHub",
        "Generic",
    ]
    assert config["spec"]["output"]["to"] == {
        "kind": "DockerImage",
        "name": "quay.io/acme/ssd:cuda10.1-cudnn7-ubi8-x86_64",
    }
    assert config["spec"]["output"]["pushSecret"] == {"name": "quay"}
    [pod] = _by_kind(objects, "Pod")
    assert pod["spec"]["containers"][0]["image"] == "quay.io/acme/ssd:cuda10.1-cudnn7-ubi8-x86_64"
    assert "quay" not in yaml.safe_dump(objects).replace("quay.io", "").replace("name: quay\n", "")


def test_chain_wires_stack_framework_benchmark_by_image_change(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    rendered = _rendered(kb, resolver, "maskrcnn", cuda="10.1", flavour="devel")
    objects = _objects(render_openshift(rendered, ClusterOptions(chain=True)))
    configs = _by_kind(objects, "BuildConfig")
    assert [c["metadata"]["name"].split("-")[0] for c in configs[:2]] == ["stack", "framework"]
    parents = [c["spec"]["strategy"]["dockerStrategy"]["from"]["name"] for c in configs]
    outputs = [c["spec"]["output"]["to"]["name"] for c in configs]
    assert parents[0] == "mlcc-base-ubi8:8.10"
    assert parents[1:] == outputs[:-1]  # each stage builds FROM the one before
    for config in configs:
        assert {"type": "ImageChange", "imageChange": {}} in config["spec"]["triggers"]
    # the stages split the flat Dockerfile's steps, in order, and nothing else
    flat = [
        i for i in DockerfileParser(fileobj=io.BytesIO(rendered.content("Dockerfile").encode())).structure
    ]
    staged: List[Any] = []
    for config in configs:
        parsed = DockerfileParser(
            fileobj=io.BytesIO(config["spec"]["source"]["dockerfile"].encode())
        ).structure
        staged += [(i["instruction"], i["value"]) for i in parsed if i["instruction"] in ("RUN", "COPY")]
    assert staged == [(i["instruction"], i["value"]) for i in flat if i["instruction"] in ("RUN", "COPY")]
    # the stack stage is shared: another benchmark on the same stack (gnmt: same CUDA, cuDNN, NCCL) names it
    other = _objects(
        render_openshift(_rendered(kb, resolver, "gnmt", flavour="devel"), ClusterOptions(chain=True))
    )
    assert configs[0]["metadata"]["name"] in {c["metadata"]["name"] for c in _by_kind(other, "BuildConfig")}


def test_maskrcnn_pod_carries_what_the_hand_written_pod_did(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    options = ClusterOptions(gpus=4, data_claim="coco")
    objects = _objects(render_openshift(_rendered(kb, resolver, "maskrcnn", cuda="10.1"), options))
    [pod] = _by_kind(objects, "Pod")
    [container] = pod["spec"]["containers"]
    assert container["resources"]["limits"] == {"nvidia.com/gpu": 4}
    # half a DGX-1 (recipes/systems.yaml: 40 cores, 503 GiB): 20 cores, and half of 4/8 of the
    # memory as /dev/shm (NVIDIA's --ipc=host: the host's tmpfs, half the RAM) and as request
    assert container["resources"]["requests"] == {"cpu": "20", "memory": "128768Mi"}
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env["DGXNGPU"] == "4" and env["DATADIR"] == "/data" and env["LOGDIR"] == "/results"
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
    assert volumes[mounts["/dev/shm"]]["emptyDir"] == {"medium": "Memory", "sizeLimit": "128768Mi"}
    assert volumes[mounts["/data"]]["persistentVolumeClaim"] == {"claimName": "coco"}
    assert (
        container["command"] == ["./run_and_time.sh"]
        and container["workingDir"] == "/workspace/object_detection"
    )
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in pod["spec"][
        "tolerations"
    ]
    assert container["securityContext"]["runAsNonRoot"] is True
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert "NVIDIA_VISIBLE_DEVICES" not in env  # the device plugin sets it for the GPUs it gives
    [job] = _by_kind(objects, "Job")
    assert job["spec"]["backoffLimit"] == 0
    assert job["spec"]["template"]["spec"] == pod["spec"]


def test_nccl_tests_mpijob(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    options = ClusterOptions(
        gpus=4, nodes=3, nccl_env=(("NCCL_P2P_LEVEL", "NVL"),), rdma_resource="rdma/rdma_shared_device_a"
    )
    objects = _objects(render_openshift(_rendered(kb, resolver, "nccl-tests"), options))
    [mpi] = _by_kind(objects, "MPIJob")
    spec = mpi["spec"]
    assert spec["slotsPerWorker"] == 4
    assert spec["runPolicy"]["cleanPodPolicy"] == "Running"
    replicas = spec["mpiReplicaSpecs"]
    assert set(replicas) == {"Launcher", "Worker"}
    assert replicas["Launcher"]["replicas"] == 1 and replicas["Worker"]["replicas"] == 3
    [launcher] = replicas["Launcher"]["template"]["spec"]["containers"]
    [worker] = replicas["Worker"]["template"]["spec"]["containers"]
    assert launcher["command"][:2] == ["/bin/bash", "-c"]
    command = shlex.split(launcher["command"][2].splitlines()[-1])
    assert command[command.index("-np") + 1] == "12"
    assert command[-2:] == ["-g", "1"]
    assert launcher["resources"] == {"requests": {"cpu": "1", "memory": "1Gi"}}  # no GPU
    # InfiniBand asked of NCCL comes with the RDMA device and the memlock capability it needs
    assert worker["resources"]["limits"] == {"nvidia.com/gpu": 4, "rdma/rdma_shared_device_a": 1}
    assert worker["securityContext"]["capabilities"] == {"add": ["IPC_LOCK"]}
    # host keys made as the pod starts, then sshd in the foreground as the container's process
    assert worker["command"] == ["/bin/sh", "-c", "ssh-keygen -A && exec /usr/sbin/sshd -De"]
    env = {e["name"]: e["value"] for e in worker["env"]}
    assert env["NCCL_DEBUG"] == "INFO" and env["NCCL_IB_DISABLE"] == "0" and env["NCCL_P2P_LEVEL"] == "NVL"
    for item in ("NCCL_DEBUG=INFO", "NCCL_IB_DISABLE=0", "NCCL_P2P_LEVEL=NVL"):
        assert command[command.index(item) - 1] == "-x"
    mounts = {m["mountPath"] for m in worker["volumeMounts"]}
    assert "/dev/shm" in mounts
    assert _by_kind(objects, "Pod") == []  # --nodes 3: the MPIJob only
    # single-pod runs drive every GPU of the pod
    one = _objects(render_openshift(_rendered(kb, resolver, "nccl-tests"), ClusterOptions(gpus=4, nodes=1)))
    assert _by_kind(one, "MPIJob") == []
    [pod] = _by_kind(one, "Pod")
    assert pod["spec"]["containers"][0]["args"][-2:] == ["-g", "4"]
    # benchmarks whose recipe gives no MPI launch get no MPIJob
    assert _by_kind(_objects(render_openshift(_rendered(kb, resolver, "ncf"))), "MPIJob") == []


def test_cpu_stacks_request_no_gpus(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    objects = _objects(render_openshift(_rendered(kb, resolver, "tf_cnn_benchmarks", cpu=True, base="ubi8")))
    [pod] = _by_kind(objects, "Pod")
    # no GPU, but never BestEffort: one core and the recipe's shm as memory
    assert pod["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "1", "memory": "2Gi"}}
    assert "tolerations" not in pod["spec"]
    from mlcc.errors import UsageError

    with pytest.raises(UsageError, match="CPU-only"):
        render_openshift(
            _rendered(kb, resolver, "tf_cnn_benchmarks", cpu=True, base="ubi8"), ClusterOptions(gpus=2)
        )


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"namespace": "ML_Perf"}, "--namespace"),
        ({"gpus": 0}, "--gpus"),
        ({"nodes": 0}, "--nodes"),
        ({"openshift": "3.10"}, "--openshift"),
        ({"push_to": "quay.io/acme/x"}, "--push-secret"),
        ({"push_to": "quay.io/acme/x:latest", "push_secret": "s"}, "--push-to"),
        ({"push_secret": "s"}, "--push-to"),
        ({"webhook_secret": "Bad Name"}, "--webhook-secret"),
        ({"data_hostpath": "relative/path"}, "--data-hostpath"),
        ({"data_hostpath": "/mnt", "data_claim": "x"}, "--data-claim"),
        ({"git_uri": "file:///etc"}, "--git-uri"),
        ({"build_memory": "lots"}, "--build-memory"),
        ({"nccl_env": (("LD_PRELOAD", "x"),)}, "--nccl-env"),
    ],
)
def test_bad_cluster_options_are_refused(options: Dict[str, Any], fragment: str) -> None:
    from mlcc.errors import UsageError

    with pytest.raises(UsageError, match=fragment.replace("-", r"\-")):
        check_cluster_options(ClusterOptions(**options))


def test_cli_refuses_bad_options_before_writing(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "bc"
    for args, code, fragment in (
        (["--namespace", "Bad_NS"], 2, "not a valid Kubernetes name"),
        (["--gpus", "0"], 2, "--gpus"),
        (["--gpus", "two"], 2, "two"),
        (["--openshift", "5"], 2, "5"),
        (["--push-to", "quay.io/acme/x"], 2, "--push-secret"),
    ):
        result = cli("gen", "maskrcnn", "--openshift-output", str(out), "-o", str(tmp_path / "df"), *args)
        assert result.code == code, (args, result.err)
        assert fragment in result.err
        assert "Traceback" not in result.err
    assert not out.exists() and not (tmp_path / "df").exists()


def test_benchmark_file_applies_every_variant_once(kb, resolver, cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "bc"
    for pins in (["--newest"], ["--arch", "ppc64le"], ["--cuda", "10.1"]):
        assert cli("gen", "ssd", *pins, "--only", "openshift", "--openshift-output", str(out)).code == 0
    listing = yaml.safe_load((out / "ssd" / "ssd.yaml").read_text())
    names = [(o["kind"], o["metadata"]["name"]) for o in listing["items"]]
    assert len(names) == len(set(names))
    configs = [n for k, n in names if k == "BuildConfig"]
    assert len(configs) == 3
    assert [k for k, _ in names] == sorted(
        (k for k, _ in names), key=["ImageStream", "ConfigMap", "BuildConfig"].index
    )
    # no run manifest in the folders `oc apply -f` reads without -R
    top = [p.name for p in (out / "ssd").iterdir() if p.is_file()]
    assert top == ["ssd.yaml"]
    for variant in (out / "ssd").iterdir():
        if variant.is_dir():
            assert sorted(p.name for p in variant.iterdir() if p.is_file()) == ["build.yaml"]


def test_yaml_output_round_trips_and_keeps_dockerfiles_readable(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    files = render_openshift(_rendered(kb, resolver, "gnmt"))
    for name, content in files.files:
        document = yaml.safe_load(content)
        assert dumps(document) == content, name
    build = dict(files.files)[f"{files.folder}/build.yaml"]
    assert "dockerfile: |" in build  # a literal block, not one escaped line


def test_lint_cli_validates_yaml_with_a_schema_dir(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert (
        cli("gen", "nccl-tests", "--only", "openshift", "--openshift-output", str(tmp_path / "bc")).code == 0
    )
    ok = cli("lint", "--schema-dir", str(SCHEMAS), str(tmp_path / "bc"))
    assert ok.code == 0, ok.out
    mpijob = next((tmp_path / "bc").rglob("mpijob.yaml"))
    mpijob.write_text(mpijob.read_text().replace("slotsPerWorker: 8", "slotsPerWorker: '8'"))
    bad = cli("lint", "--schema-dir", str(SCHEMAS), str(mpijob))
    assert bad.code == 8
    assert f"{mpijob}:" in bad.out and "KS001" in bad.out
    missing = cli("lint", "--schema-dir", str(tmp_path / "nope"), str(mpijob))
    assert missing.code == 2 and "--schema-dir" in missing.err


def test_a_chained_runtime_image_is_built_from_its_runtime_stage_and_triggered_by_the_framework(
    kb,
    resolver,  # type: ignore[no-untyped-def]
) -> None:
    rendered = _rendered(kb, resolver, "maskrcnn", cuda="10.1")
    assert rendered.stack.runtime
    objects = _objects(render_openshift(rendered, ClusterOptions(chain=True, namespace="mlperf")))
    stack, framework, runtime, final = _by_kind(objects, "BuildConfig")
    outputs = {c["metadata"]["name"]: c["spec"]["output"]["to"]["name"] for c in (stack, framework, runtime)}
    strategy = final["spec"]["strategy"]["dockerStrategy"]
    assert runtime["spec"]["strategy"]["dockerStrategy"]["from"]["name"] == "mlcc-base-ubi8:8.10"
    assert strategy["from"]["name"] == outputs[runtime["metadata"]["name"]]  # the last FROM
    args = {a["name"]: a["value"] for a in strategy["buildArgs"]}
    framework_tag = outputs[framework["metadata"]["name"]]
    assert args["BASE_IMAGE"] == f"image-registry.openshift-image-registry.svc:5000/mlperf/{framework_tag}"
    assert final["spec"]["triggers"][0] == {
        "type": "ImageChange",
        "imageChange": {"from": {"kind": "ImageStreamTag", "name": framework_tag}},
    }
    with pytest.raises(UsageError) as error:
        render_openshift(rendered, ClusterOptions(chain=True))
    assert "--namespace" in (error.value.hint or "")


def test_a_benchmark_list_of_one_variant_is_its_build_file_and_of_two_is_dumped_anew(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    """`mlcc gen` reuses a variant's build.yaml text for the benchmark's List when the List
    holds exactly that variant's objects (not dumping the same document twice); the text is
    what a fresh dump would write, and a List that merges two variants is dumped anew."""
    first = render_openshift(_rendered(kb, resolver, "maskrcnn", cuda="10.1"))
    second = render_openshift(_rendered(kb, resolver, "maskrcnn", cuda="10.2"))
    texts = {f.folder.split("/")[1]: dict(f.files)[f"{f.folder}/{BUILD_FILE}"] for f in (first, second)}
    one = [(first.folder.split("/")[1], first.build_objects)]
    fresh = benchmark_list("maskrcnn", one)
    assert benchmark_list("maskrcnn", one, texts) == fresh
    assert fresh[1] == texts[one[0][0]] == dumps(object_list(first.build_objects))
    two = [*one, (second.folder.split("/")[1], second.build_objects)]
    merged = benchmark_list("maskrcnn", two, texts)
    assert merged == benchmark_list("maskrcnn", two)
    assert merged[1] not in texts.values()
