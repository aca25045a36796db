"""The start-up path of `mlcc gen` and `mlcc resolve` stays lean (issue 9).

Timings live in perf/ (bench_vs_hpccm.py); this checks the cause instead: which heavy
modules importing the two commands pulls in. A fresh interpreter imports the CLI and the
commands' modules (what the lazy command group imports when they run) and lists them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import List, Set

import pytest

# What each command module must not import at start-up, and why it is not needed there.
HEAVY = {
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


def test_every_record_on_the_fast_paths_is_made_by_mlcc_records() -> None:
    """typing.NamedTuple spends 60-90 us on each class (an eval per class, a check per
    field); about a hundred records are defined before `mlcc gen` does any work.
    ``mlcc.records`` makes them in ~15 us. Ruff bans typing.NamedTuple in mlcc; this
    catches a record made some other way (collections.namedtuple)."""
    code = (
        "import sys, json\n"
        "import mlcc.fastpath.gen, mlcc.fastpath.resolve\n"
        "records = {f'{m.__name__}.{v.__name__}': getattr(v._make, '__func__', v._make).__module__"
        " for m in list(sys.modules.values()) if getattr(m, '__name__', '').startswith('mlcc')"
        " for v in list(vars(m).values())"
        " if isinstance(v, type) and hasattr(v, '_fields') and v.__module__ == m.__name__}\n"
        "print(json.dumps(records))"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    records = json.loads(found.stdout)
    assert len(records) > 80
    assert {name for name, made_in in records.items() if made_in != "mlcc.records"} == set()


# What a warm `mlcc gen BENCHMARK [pins]` and `mlcc resolve ... --json` (the fast paths,
# knowledge base cached) must not import, and why it is not needed there.
FAST_PATH_HEAVY = {
    "click": "plain pins and output folders are parsed by mlcc.fastpath",
    "hashlib": "loads OpenSSL (3-4 ms); mlcc.sha256 gives the same digests without it",
    "pickle": "its pure-Python classes; the cache is read with the C unpickler, _pickle",
    "packaging": "its version pattern costs ~1.5 ms to compile; mlcc.pep440 reads the same versions",
    "pathlib": "with urllib.parse and ipaddress ~17 M instructions; gen uses str paths (mlcc.paths)",
}


@pytest.mark.parametrize(
    "argv",
    [["gen", "maskrcnn", "--cuda", "10.1"], ["resolve", "maskrcnn", "--cuda", "10.1", "--json"]],
    ids=["gen", "resolve"],
)
def test_a_warm_fast_path_leaves_heavy_modules_alone(argv: List[str], tmp_path: Path) -> None:
    code = (
        "import json, sys\n"
        "from mlcc.fastpath import run\n"
        f"assert run({[*argv, *(['-o', str(tmp_path / 'out')] if argv[0] == 'gen' else [])]!r}) == 0\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    env = dict(os.environ, MLCC_CACHE_DIR=str(tmp_path / "cache"))
    for _ in range(2):  # the first run builds the knowledge base's cache
        found = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env, cwd=tmp_path
        )
    imported = {name.split(".")[0] for name in json.loads(found.stdout.splitlines()[-1])}
    assert "mlcc" in imported
    assert imported & FAST_PATH_HEAVY.keys() == set()


@pytest.mark.parametrize("size", [0, 1, 55, 56, 64, 1000, 100_000, 3_000_000])
def test_the_start_up_sha256_is_sha256(size: int) -> None:
    import hashlib

    from mlcc.sha256 import sha256

    data = bytes(range(256)) * (size // 256) + bytes(range(size % 256))
    assert sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
    assert sha256(b"a").hexdigest() != sha256(b"b").hexdigest()


def test_a_process_that_hashes_much_switches_to_openssl() -> None:
    """The built-in SHA-256 until BUILTIN_BYTES are hashed (one gen hashes ~50 KB), then
    OpenSSL's; the digests are the same either side of the switch."""
    code = (
        "import sys, json\n"
        "from mlcc import sha256 as s\n"
        "first = s.sha256(b'abc').hexdigest()\n"
        "before = 'hashlib' in sys.modules\n"
        "s.sha256(bytes(s.BUILTIN_BYTES))\n"
        "last = s.sha256(b'abc').hexdigest()\n"
        "print(json.dumps([first, last, before, 'hashlib' in sys.modules, type(s.sha256(b'')).__module__]))"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    first, last, before, after, kind = json.loads(found.stdout)
    assert first == last == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert (before, after) == (False, True)
    assert kind == "_hashlib"
