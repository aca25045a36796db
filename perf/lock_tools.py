"""uv and pip-tools beside `mlcc kb lock`, on the installs recipes/locks/ holds.

For every distinct locked install (its requirements, for its target's Python, arch and
glibc) this runs ``uv pip compile --generate-hashes --no-build`` (and, with --pip-tools,
``pip-compile --generate-hashes``) and compares what they pin with the lock: the same
versions, other versions, or a failure (its first error line). ``--no-build`` (pip-compile:
``--only-binary=:all:``): building an sdist runs its setup.py, which ``mlcc kb lock``
never does (``--build`` allows it, in a throw-away container only, to compare versions).
The compiles start from an empty cache; time them beside a cold ``mlcc kb lock`` run:

    MLCC_CACHE_DIR=$(mktemp -d) /usr/bin/time mlcc kb lock
    python perf/lock_tools.py [--pip-tools] [--limit N]

Tools are found beside this Python (the project's venv: ``pip install uv pip-tools``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)")


def installs() -> List[Tuple[str, Dict[str, Any], Dict[str, Any]]]:
    """(lock file, target, install) for every distinct locked install, in file order."""
    seen = set()
    found = []
    for path in sorted((ROOT / "recipes" / "locks").glob("pip-*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for install in data["installs"].values():
            key = (path.name, tuple(install["requirements"]))
            if "packages" in install and key not in seen:
                seen.add(key)
                found.append((path.name, data["target"], install))
    return found


def pins(text: str) -> Dict[str, Tuple[str, List[str]]]:
    """name -> (version, hashes) from a compiled requirements file."""
    out: Dict[str, Tuple[str, List[str]]] = {}
    name = ""
    for line in text.splitlines():
        match = PIN.match(line)
        if match:
            name = re.sub(r"[-_.]+", "-", match.group(1)).lower()
            out[name] = (match.group(2), [])
        elif "--hash=sha256:" in line and name:
            out[name][1].append(line.split("--hash=sha256:", 1)[1].split()[0])
    return out


def compile_with(
    tool: str, target: Dict[str, Any], install: Dict[str, Any], cache: str, build: bool
) -> Tuple[float, str, str]:
    """(seconds, output, first error line) of one compile."""
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "requirements.in"
        source.write_text("\n".join(install["requirements"]) + "\n", encoding="utf-8")
        no_deps = ["--no-deps"] if install.get("no_deps") else []
        if tool == "uv":
            platform = f"{target['arch']}-manylinux_{str(target['glibc']).replace('.', '_')}"
            command = [
                str(BIN / "uv"), "pip", "compile", "--quiet", "--generate-hashes",
                *([] if build else ["--no-build"]), "--no-header", "--python-platform", platform,
                "--python-version", target["python"],
                "--cache-dir", cache, *no_deps, str(source),
            ]  # fmt: skip
        else:
            command = [
                str(BIN / "pip-compile"), "--quiet", "--generate-hashes", "--no-header",
                "--cache-dir", cache, "--output-file", "-",
                *([] if build else ["--pip-args", "--only-binary=:all:"]), str(source),
            ]  # fmt: skip
        started = time.monotonic()
        done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
        seconds = time.monotonic() - started
    error = ""
    if done.returncode != 0:
        lines = [x.strip() for x in done.stderr.splitlines() if x.strip() and not x.startswith("warning")]
        causes = [x for x in lines if x.startswith(("cause:", "Because"))]
        error = (causes or [x for x in lines if "error" in x.lower()] or lines or [""])[-1]
    return seconds, done.stdout, error[:300]


def compare(lock: Dict[str, Any], compiled: Dict[str, Tuple[str, List[str]]]) -> Tuple[List[str], int]:
    """Differences of versions, and how many locked sha256 the tool's hashes include."""
    differences = []
    hashed = 0
    locked = {
        re.sub(r"[-_.]+", "-", p["name"]).lower(): p for p in lock.get("packages", []) if p.get("sha256")
    }
    satisfied = {re.sub(r"[-_.]+", "-", s["name"]).lower(): s for s in lock.get("satisfied", [])}
    for name, package in sorted(locked.items()):
        other = compiled.get(name)
        if other is None:
            differences.append(f"{name} {package['version']}: not pinned by the tool")
        elif other[0] != package["version"]:
            differences.append(f"{name}: lock {package['version']}, tool {other[0]}")
        elif package["sha256"] in other[1]:
            hashed += 1
    for name, (version, _) in sorted(compiled.items()):
        if name not in locked:
            where = "already installed by an earlier install" if name in satisfied else "not in the lock"
            differences.append(f"{name} {version}: {where}")
    return differences, hashed


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pip-tools", action="store_true", help="also run pip-compile")
    parser.add_argument("--limit", type=int, default=0, help="only the first N installs")
    parser.add_argument(
        "--build",
        action="store_true",
        help="let the tools build sdists (runs their setup.py here, on this Python): comparison only",
    )
    args = parser.parse_args(argv)
    tools = ["uv"] + (["pip-tools"] if args.pip_tools else [])
    chosen = installs()[: args.limit or None]
    for tool in tools:
        totals = {"same": 0, "different": 0, "failed": 0, "seconds": 0.0, "hashed": 0, "locked": 0}
        with tempfile.TemporaryDirectory() as cache:
            for file, target, install in chosen:
                seconds, output, error = compile_with(tool, target, install, cache, args.build)
                totals["seconds"] += seconds
                label = f"{file} {' '.join(install['requirements'])[:90]}"
                if error:
                    totals["failed"] += 1
                    print(f"{tool} FAILED {label}\n    {error}")
                    continue
                differences, hashed = compare(install, pins(output))
                totals["hashed"] += hashed
                totals["locked"] += sum(1 for p in install["packages"] if p.get("sha256"))
                if differences:
                    totals["different"] += 1
                    print(f"{tool} DIFFERS {label}\n    " + "\n    ".join(differences))
                else:
                    totals["same"] += 1
        print(
            f"{tool}: {len(chosen)} installs, {totals['same']} same, {totals['different']} different, "
            f"{totals['failed']} failed; locked sha256 among its hashes "
            f"{totals['hashed']}/{totals['locked']}; "
            f"{totals['seconds']:.1f} s of compiles from an empty cache"
        )
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    sys.exit(main())
