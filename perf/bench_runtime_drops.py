"""What the runtime rules drop from cuDNN and NCCL, measured on NVIDIA's real files: the
nvidia-cudnn-cu* and nvidia-nccl-cu* wheels on PyPI hold the same shared libraries and
headers as NVIDIA's tarballs and packages.

    python perf/bench_runtime_drops.py [--json]

For each wheel only its ZIP central directory is read (HTTP range requests through
``zipfile``, a few hundred kB of a 200-800 MB wheel): every member's unpacked size, summed
as shared libraries (``lib/*.so*``, what a runtime image keeps), headers (``include/``)
and static archives (``*.a``), which a runtime image leaves out.

Then, per published runtime cell that installs cuDNN or NCCL itself (a tarball or
packages; a framework that bundles them is left out), an **estimate** of runtime/devel for
those two libraries: the wheel of the same major release nearest to the cell's version
stands in for the cell's own files. It is an estimate: the wheels carry no static
archives, which NVIDIA's tarballs and -devel packages do (libcudnn_static.a alone is
hundreds of MB), so the true ratio is lower; cuDNN 7 has no wheel (the cuDNN 8 wheel
nearest to it stands in, said per row); CUDA's own packages are not counted.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from packaging.version import InvalidVersion, Version

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

PYPI = "https://pypi.org/pypi/{name}/json"
DEADLINE = 60  # seconds per request
MAX_READ = 16 << 20  # bytes read of any one wheel (its central directory is far smaller)
MAX_JSON = 8 << 20
# Which wheels hold which library, by CUDA major (NVIDIA's names on PyPI)
WHEELS = {
    "cudnn": {11: "nvidia-cudnn-cu11", 12: "nvidia-cudnn-cu12"},
    "nccl": {11: "nvidia-nccl-cu11", 12: "nvidia-nccl-cu12"},
}


class RangeFile(io.RawIOBase):
    """A remote file read by HTTP range requests: seekable, so zipfile reads its tail only."""

    def __init__(self, url: str, size: int) -> None:
        self.url, self.size, self.position, self.fetched = url, size, 0, 0

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: self.size}[whence]
        self.position = max(0, min(self.size, base + offset))
        return self.position

    def readinto(self, buffer: Any) -> int:
        wanted = min(len(buffer), self.size - self.position)
        if wanted <= 0:
            return 0
        self.fetched += wanted
        if self.fetched > MAX_READ:
            raise OSError(f"read more than {MAX_READ} bytes of {self.url}")
        request = urllib.request.Request(
            self.url, headers={"Range": f"bytes={self.position}-{self.position + wanted - 1}"}
        )
        with urllib.request.urlopen(request, timeout=DEADLINE) as response:
            data = response.read(wanted + 1)
        if response.status != 206 or len(data) != wanted:
            raise OSError(f"{self.url} answered the range request with {response.status}, {len(data)} bytes")
        buffer[:wanted] = data
        self.position += wanted
        return wanted


class Sizes(NamedTuple):
    wheel: str
    libraries: int
    headers: int
    static: int

    @property
    def devel(self) -> int:
        return self.libraries + self.headers + self.static


def _json(url: str) -> Dict[str, Any]:
    with urllib.request.urlopen(url, timeout=DEADLINE) as response:
        return json.loads(response.read(MAX_JSON))  # type: ignore[no-any-return]


def _x86_wheel(files: List[Dict[str, Any]], index: str) -> Optional[Dict[str, Any]]:
    wheel = next((f for f in files if f["filename"].endswith(".whl") and "x86_64" in f["filename"]), None)
    # an index mirror may answer with URLs relative to the JSON page
    return None if wheel is None else dict(wheel, url=urllib.parse.urljoin(index, wheel["url"]))


def nearest_release(name: str, version: str) -> Tuple[str, Dict[str, Any]]:
    """The release of ``name`` of the same major as ``version`` nearest to it (else the
    oldest release), with its x86_64 wheel."""
    index = PYPI.format(name=name)
    releases = _json(index)["releases"]
    wanted = Version(version)
    candidates = []
    for text, files in releases.items():
        try:
            parsed = Version(text)
        except InvalidVersion:
            continue
        wheel = _x86_wheel(files, index)
        if wheel is not None and not parsed.is_prerelease:
            candidates.append((parsed, text, wheel))
    same = [c for c in candidates if c[0].release[0] == wanted.release[0]] or candidates
    best = min(
        same, key=lambda c: (abs(c[0].release[1] - wanted.release[1]) if len(c[0].release) > 1 else 0, c[0])
    )
    return best[1], best[2]


def wheel_sizes(wheel: Dict[str, Any]) -> Sizes:
    """Unpacked sizes of a wheel's shared libraries, headers and static archives."""
    libraries = headers = static = 0
    with zipfile.ZipFile(io.BufferedReader(RangeFile(wheel["url"], wheel["size"]), 1 << 16)) as archive:
        for info in archive.infolist():
            name = info.filename
            if "/include/" in name:
                headers += info.file_size
            elif name.endswith(".a"):
                static += info.file_size
            elif ".so" in name.rsplit("/", 1)[-1]:
                libraries += info.file_size
    return Sizes(wheel["filename"], libraries, headers, static)


def published_cells() -> List[Tuple[str, str, Dict[str, Any]]]:
    """(benchmark, variant, components) of every published runtime image."""
    cells = []
    for path in sorted((REPO / "dockerfiles").glob("*/*/stack.json")):
        document = json.loads(path.read_text())
        if document.get("flavour") == "runtime":
            cells.append((path.parts[-3], path.parts[-2], document["components"]))
    return cells


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    measured: Dict[Tuple[str, str], Tuple[str, Sizes]] = {}
    rows: List[Dict[str, Any]] = []
    for benchmark, variant, components in published_cells():
        cuda = components.get("cuda") or {}
        if not cuda:
            continue
        runtime = devel = 0
        notes = []
        for library in ("cudnn", "nccl"):
            component = components.get(library) or {}
            if component.get("method") not in ("tarball", "rpm", "deb"):
                continue
            major = 12 if int(cuda["version"].split(".")[0]) >= 12 else 11
            name = WHEELS[library][major]
            key = (name, component["version"])
            if key not in measured:
                release, wheel = nearest_release(name, component["version"])
                measured[key] = (release, wheel_sizes(wheel))
            release, sizes = measured[key]
            runtime += sizes.libraries
            devel += sizes.devel
            notes.append(f"{library} {component['version']} ({component['method']}): {name} {release}")
        if devel:
            rows.append({"cell": f"{benchmark}/{variant}", "runtime": runtime, "devel": devel, "from": notes})
    if args.json:
        print(json.dumps({"estimate": True, "cells": rows}, indent=2))
        return 0
    print("ESTIMATE: cuDNN and NCCL only, from PyPI wheels (no static archives in them)")
    for row in rows:
        print(
            f"{row['cell']:48} runtime {row['runtime'] / 1e6:8.1f} MB  devel {row['devel'] / 1e6:8.1f} MB"
            f"  ratio {row['runtime'] / row['devel']:.3f}   {'; '.join(row['from'])}"
        )
    for (_name, version), (_release, sizes) in sorted(measured.items()):
        mb = {field: getattr(sizes, field) / 1e6 for field in ("libraries", "headers", "static")}
        print(
            f"  {sizes.wheel}: libraries {mb['libraries']:.1f} MB, headers {mb['headers']:.2f} MB,"
            f" static {mb['static']:.1f} MB (for {version})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
