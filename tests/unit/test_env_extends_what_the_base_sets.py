"""A recipe's ``env: {NAME: {prepend: [...], append: [...]}}`` extends what the base image
sets (NVIDIA's ``ENV PATH=/usr/local/hugectr/bin:$PATH``) instead of replacing it: the
schema takes absolute folders only, each output format keeps the base's value, stack.json
records the extension, and the run manifests leave the variable to the image."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Dict, Tuple

import pytest
import yaml

from mlcc.kb.model import EnvExtension
from mlcc.lint.dockerfile import lint_dockerfile
from mlcc.lint.hadolint import run_hadolint
from mlcc.render.plan.commands import extended_value
from tests.recipe_edits import edit, line_of, load_error

DLRM = "benchmarks/v5.1/dlrm_dcnv2.yaml"
PATH_LINE = "    PATH: {prepend: [/usr/local/hugectr/bin]}\n"
# What an NGC image's environment holds before the benchmark's ENV (the CUDA compat and
# driver folders on LD_LIBRARY_PATH, the stubs on LIBRARY_PATH); CPATH and PYTHONPATH unset
BASE_ENV = {
    "PATH": "/usr/local/cuda/bin:/usr/bin:/bin",
    "LD_LIBRARY_PATH": "/usr/local/cuda/compat/lib:/usr/local/nvidia/lib64",
    "LIBRARY_PATH": "/usr/local/cuda/lib64/stubs",
}
EXTENDED = ("CPATH", "PATH", "LIBRARY_PATH", "LD_LIBRARY_PATH", "PYTHONPATH")


@pytest.mark.parametrize(
    ("written", "message"),
    [
        ("{prepend: [usr/local/bin]}", "build.env.PATH.prepend[0]: 'usr/local/bin' is not allowed here"),
        ('{prepend: ["/opt/a:/opt/b"]}', "build.env.PATH.prepend[0]: '/opt/a:/opt/b' is not allowed here"),
        ('{append: ["/opt/$HOME"]}', "build.env.PATH.append[0]: '/opt/$HOME' is not allowed here"),
        # control characters are refused in any recipe text, before the schema
        ('{prepend: ["/opt/a\\nb"]}', "build.env.PATH.prepend.0: character U+000A is not allowed"),
        ("{prepend: [/opt/a, /opt/a]}", "build.env.PATH.prepend: lists the same item twice"),
        ("{prepend: []}", "build.env.PATH.prepend: must not be empty"),
        ("{}", "build.env.PATH: must not be empty"),
        ("{prefix: [/opt/a]}", "build.env.PATH: unknown key 'prefix' (allowed: append, prepend)"),
        ("/opt/a${PATH}", "build.env.PATH: '/opt/a${PATH}' is not allowed here"),
    ],
)
def test_a_bad_extension_is_refused_at_its_line(recipes_copy: Path, written: str, message: str) -> None:
    recipe = recipes_copy / DLRM
    edit(recipe, PATH_LINE, f"    PATH: {written}\n")
    error = load_error(recipes_copy)
    assert f"recipes/{DLRM}:{line_of(recipe, '    PATH: ')}:" in str(error)
    assert message in str(error), str(error)
    assert error.exit_code == 2


def test_the_value_keeps_what_the_variable_held_and_adds_no_empty_entry() -> None:
    """Each form evaluated by a real bash, with the variable set and unset: an empty entry
    (``/x:`` where the base sets nothing) would put the working directory on the path."""
    forms = {
        "before": EnvExtension("V", ("/a", "/b")),
        "after": EnvExtension("V", (), ("/z",)),
        "both": EnvExtension("V", ("/a",), ("/z",)),
    }
    script = "".join(
        f'V=/old; echo "{extended_value(e)}"; unset V; echo "{extended_value(e)}"\n' for e in forms.values()
    )
    lines = subprocess.run(
        ["bash", "-euc", script], capture_output=True, text=True, check=True
    ).stdout.split()
    assert lines == ["/a:/b:/old", "/a:/b", "/old:/z", "/z", "/a:/old:/z", "/a:/z"]


def _gen(cli, tmp_path: Path, *args: str) -> Path:  # type: ignore[no-untyped-def]
    """The variant folder mlcc gen writes dlrm_dcnv2 v5.1 (x86_64) to."""
    out = tmp_path / "gen"
    result = cli("gen", "dlrm_dcnv2", "--round", "v5.1", "--arch", "x86_64", "-o", str(out), *args)
    assert result.code == 0, result.err
    return next((out / "dlrm_dcnv2-v5.1").iterdir())


def test_the_dockerfile_env_extends_nvidias_variables(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    dockerfile = (_gen(cli, tmp_path, "--only", "dockerfile") / "Dockerfile").read_text()
    assert '    PATH="/usr/local/hugectr/bin${PATH:+:${PATH}}"' in dockerfile
    assert '    LD_LIBRARY_PATH="/usr/local/hugectr/lib${LD_LIBRARY_PATH:+:${LD_LIBRARY_PATH}}"' in dockerfile
    assert '    CPATH="/usr/local/include${CPATH:+:${CPATH}}"' in dockerfile
    # none of them is set outright anywhere
    for name in EXTENDED:
        assert (
            f'{name}="/usr/local/hugectr/lib" ' not in dockerfile
            and f'{name}="/usr/local/include" ' not in dockerfile
        )


def _sourced(env_file: str, base: Dict[str, str]) -> Dict[str, str]:
    """What a bash that starts with ``base`` holds after sourcing ``env_file``."""
    printed = "".join(f'printf "%s=%s\\n" {name} "${{{name}-}}"\n' for name in EXTENDED)
    done = subprocess.run(
        ["/bin/bash", "-euc", f"{env_file}\n{printed}"], env=base, capture_output=True, text=True, check=True
    )
    return dict(line.split("=", 1) for line in done.stdout.splitlines())


def test_install_sh_extends_the_hosts_values_rather_than_replacing_them(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The environment file install.sh writes for the benchmark's shells, sourced by a real
    bash whose PATH and library paths are an NGC image's."""
    script = (_gen(cli, tmp_path, "--format", "script") / "install.sh").read_text()
    env_file = script.split("/etc/mlcc/env.sh <<'MLCC_FILE_EOF'\n", 1)[1].split("MLCC_FILE_EOF\n", 1)[0]
    assert _sourced(env_file, BASE_ENV) == {
        "CPATH": "/usr/local/include",
        "PATH": "/usr/local/hugectr/bin:/opt/mlcc/venv/bin:/usr/local/cuda/bin:/usr/bin:/bin",
        "LIBRARY_PATH": "/usr/local/hugectr/lib:/usr/local/cuda/lib64/stubs",
        "LD_LIBRARY_PATH": "/usr/local/hugectr/lib:/usr/local/cuda/compat/lib:/usr/local/nvidia/lib64",
        "PYTHONPATH": "/usr/local/hugectr/lib",
    }


def test_the_singularity_environment_extends_the_images(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """%environment runs after the base image's environment: it must extend it too."""
    definition = (_gen(cli, tmp_path, "--format", "singularity") / "Singularity.def").read_text()
    environment = definition.split("\n%environment\n", 1)[1].split("\n%labels\n", 1)[0]
    assert _sourced(environment, BASE_ENV)["LD_LIBRARY_PATH"] == (
        "/usr/local/hugectr/lib:/usr/local/cuda/compat/lib:/usr/local/nvidia/lib64"
    )


def test_stack_json_records_each_extension_as_one(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    stack = json.loads((_gen(cli, tmp_path, "--only", "dockerfile") / "stack.json").read_text())
    records = {item["name"]: item for item in stack["benchmark"]["extends_env"]}
    assert list(records) == list(EXTENDED)
    assert records["PATH"] == {"name": "PATH", "prepend": ["/usr/local/hugectr/bin"], "append": []}


def test_the_pods_leave_extended_variables_to_the_image_and_mpirun_passes_them_on(
    cli, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """A pod's env value is not expanded against the image's: written there, PATH would
    replace the image's. The MPIJob's remote ranks start from sshd, so mpirun hands them
    the launcher's (the image's) values by name."""
    out = tmp_path / "gen"
    result = cli(
        "gen", "dlrm_dcnv2", "--round", "v5.1", "--arch", "x86_64", "--only", "openshift", "-o", str(out)
    )
    assert result.code == 0, result.err
    run = next((out / "openshift" / "dlrm_dcnv2-v5.1").glob("*/run"))
    for name in ("pod.yaml", "job.yaml", "mpijob.yaml"):
        for document in yaml.safe_load_all((run / name).read_text()):
            for container in _containers(document):
                names = {item["name"] for item in container.get("env", ())}
                assert names and not names & set(EXTENDED), (name, names)
    launcher = (run / "mpijob.yaml").read_text()
    for variable in EXTENDED:
        assert f" -x {variable} " in launcher


def _containers(node: object) -> list:  # type: ignore[type-arg]
    """Every container spec anywhere in a Kubernetes object."""
    if isinstance(node, dict):
        found = list(node.get("containers", ()))
        for value in node.values():
            found += _containers(value)
        return found
    if isinstance(node, list):
        return [c for item in node for c in _containers(item)]
    return []


# NVIDIA's ENV lines that extend a variable the NGC base sets, in their Dockerfile's order
# (github:mlcommons/training_results_v5.1 @441d65f4445c and training_results_v5.0
# @0fdc28f01325, each recipe's implementation folder). Left out, as the recipes say: dlrm's
# PATH=/usr/local/bin:$PATH (it would come before the virtual environment's python) and
# flux1's PYTHONPATH "${PYTHONPATH}:/opt/Megatron-LM" (a folder its image does not have).
LLAMA31 = (
    'PYTHONPATH="${PYTHONPATH}:/workspace/Megatron-LM"',
    'PYTHONPATH="/workspace/llm:/workspace/NeMo:${PYTHONPATH}"',
)
NVIDIA_ENV = {
    "dlrm_dcnv2-v5.1": (
        "CPATH=/usr/local/include:$CPATH",
        "PATH=/usr/local/hugectr/bin:$PATH",
        "LIBRARY_PATH=/usr/local/hugectr/lib:$LIBRARY_PATH",
        "LD_LIBRARY_PATH=/usr/local/hugectr/lib:$LD_LIBRARY_PATH",
        "PYTHONPATH=/usr/local/hugectr/lib:$PYTHONPATH",
    ),
    "llama31_405b-v5.1": LLAMA31,
    "llama31_405b-v5.0": LLAMA31,
    "llama31_8b-v5.1": LLAMA31,
    "llama2_70b_lora-v5.1": ('PYTHONPATH="${PYTHONPATH}:/workspace/ft-llm/Megatron-LM"',),
    "llama2_70b_lora-v5.0": ('PYTHONPATH="${PYTHONPATH}:/workspace/ft-llm/Megatron-LM"',),
    "flux1-v5.1": (),
    "retinanet-v5.1": (),
    "rgat-v5.1": (),
}


def _evaluated(assignments: Tuple[str, ...], names: Tuple[str, ...]) -> Dict[str, str]:
    """The variables after ``assignments``, run by a real bash where each held /base/NAME."""
    start = "".join(f"{name}=/base/{name}\n" for name in names)
    printed = "".join(f'printf "%s=%s\\n" {name} "${name}"\n' for name in names)
    script = start + "\n".join(assignments) + "\n" + printed
    done = subprocess.run(["/bin/bash", "-euc", script], env={}, capture_output=True, text=True, check=True)
    return dict(line.split("=", 1) for line in done.stdout.splitlines())


def test_every_v5_recipe_extends_what_nvidias_env_lines_extend(kb) -> None:  # type: ignore[no-untyped-def]
    """Over a base that sets each variable, the image's values are NVIDIA's; no v5.x recipe
    sets outright a variable NVIDIA extends."""
    assert sorted(NVIDIA_ENV) == sorted(name for name in kb.benchmarks if name.endswith(("-v5.0", "-v5.1")))
    for benchmark, lines in NVIDIA_ENV.items():
        build = kb.benchmarks[benchmark].build
        names = tuple(dict.fromkeys(line.split("=", 1)[0] for line in lines))
        assert tuple(ext.name for ext in build.env_extensions) == names, benchmark
        ours = tuple(f'{ext.name}="{extended_value(ext)}"' for ext in build.env_extensions)
        assert _evaluated(ours, names) == _evaluated(lines, names), benchmark
        assert not set(names) & set(dict(build.env)), benchmark


def test_a_runtime_image_extends_in_each_stage_once(cli, recipes_copy: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The final stage is FROM the base again, not from the build stage: the extension is
    written in each, so each keeps its own base's value, once."""
    recipe = recipes_copy / "benchmarks" / "nccl-tests.yaml"
    edit(recipe, "    LOGDIR: /results\n", "    LOGDIR: /results\n    PATH: {prepend: [/opt/tool/bin]}\n")
    out = tmp_path / "gen"
    args = ["--recipes", str(recipes_copy), "gen", "nccl-tests", "--arch", "x86_64", "--flavour", "runtime"]
    result = cli(*args, "--only", "dockerfile", "-o", str(out))
    assert result.code == 0, result.err
    [dockerfile] = out.rglob("Dockerfile")
    stages = dockerfile.read_text().split("\nFROM ")[1:]
    assert len(stages) == 2 and stages[0].startswith("${BASE_IMAGE} AS build")
    for stage in stages:
        assert stage.count('PATH="/opt/tool/bin${PATH:+:${PATH}}"') == 1


def test_the_extended_env_passes_hadolint_and_mlccs_own_rules(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """hadolint and mlcc's Dockerfile rules read the ENV with ${NAME:+...} as the key=value
    pairs it is: what they find is only the unlocked pip installs the recipe's note names."""
    dockerfile = _gen(cli, tmp_path, "--only", "dockerfile") / "Dockerfile"
    findings = [*lint_dockerfile(dockerfile), *run_hadolint([dockerfile])]
    assert {finding.rule for finding in findings} <= {"DF011"}, findings
