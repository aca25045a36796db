"""The start-up path of `mlcc gen` and `mlcc resolve` stays lean (issue 9).

Timings live in perf/ (bench_vs_hpccm.py); this checks the cause instead: which heavy
modules importing the two commands pulls in. A fresh interpreter imports the CLI and the
commands' modules (what the lazy command group imports when they run) and lists them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import ForwardRef, Set

import pytest

# What each command module must not import at start-up, and why it is not needed there.
HEAVY = {
    "yaml": "PyYAML: mlcc writes YAML itself; reading YAML happens on a cache miss, --all or lint",
    "jsonschema": "schemas are checked when the knowledge base is built, not when it is read",
    "tempfile": "with shutil and random: the atomic writer opens its own temporary files",
}


def _imported(*modules: str) -> Set[str]:
    code = f"import json, sys\nfor m in {list(modules)!r}: __import__(m)\n"
    code += "print(json.dumps(sorted(sys.modules)))"
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return {name.split(".")[0] for name in json.loads(found.stdout)}


@pytest.mark.parametrize("command", ["mlcc.cli.gen", "mlcc.cli.knowledge"])
def test_command_modules_leave_heavy_libraries_alone(command: str) -> None:
    assert _imported("mlcc.cli", command) & HEAVY.keys() == set()


def test_the_probe_sees_imports() -> None:
    assert "yaml" in _imported("mlcc.kb.yamlsrc", "yaml")


def test_the_atomic_writer_needs_no_tempfile() -> None:
    """tempfile pulls in shutil and random; mlcc.output (every `mlcc gen`) opens its own."""
    assert "tempfile" not in _imported("mlcc.output")


def test_knowledge_base_records_carry_evaluated_annotations() -> None:
    """String annotations (``from __future__ import annotations``) make typing.NamedTuple
    compile a ForwardRef per field at import: ~250 compiles on every start."""
    from mlcc.kb import model

    records = [item for item in vars(model).values() if isinstance(item, type) and hasattr(item, "_fields")]
    assert len(records) > 20
    lazy = [r.__name__ for r in records if any(isinstance(a, ForwardRef) for a in r.__annotations__.values())]
    assert lazy == []


def test_no_record_on_the_fast_paths_compiles_forward_references() -> None:
    """The same for every NamedTuple the fast `gen` and `resolve` import: string annotations
    cost a compile per field (~20 us each; 230 of them were 5 % of a warm `mlcc gen`). A
    forward reference a record really needs is quoted by hand and stays rare."""
    code = (
        "import sys, typing, json\n"
        "import mlcc.fastpath.gen, mlcc.fastpath.resolve\n"
        "lazy = sorted(f'{m.__name__}.{v.__name__}' for m in list(sys.modules.values())"
        " if getattr(m, '__name__', '').startswith('mlcc') for v in list(vars(m).values())"
        " if isinstance(v, type) and hasattr(v, '_fields') and v.__module__ == m.__name__"
        " and sum(isinstance(a, typing.ForwardRef)"
        " for a in getattr(v, '__annotations__', {}).values()) > 1)\n"
        "print(json.dumps(lazy))"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(found.stdout) == []
