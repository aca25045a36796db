"""What an NGC-based image's installed.json says (the probe mlcc bakes in reports it), for the
tests of verify and the SBOM on NGC bases: one place instead of a copy per test file."""

from __future__ import annotations

from typing import Any, Dict

TORCH = "2.9.0a0+50eac811a6"  # NGC 25.09's PyTorch build


def ngc_report(arch: str, torch: Dict[str, str], **extra: Any) -> Dict[str, Any]:
    """An installed.json of an image on NGC PyTorch 25.09 (Ubuntu 24.04, CUDA 13.0, GCC 13.3,
    Python 3.12), on ``arch``; ``torch`` is what torch reports loading besides its version
    (cuda, cudnn, nccl), ``extra`` adds or replaces top-level keys."""
    report: Dict[str, Any] = {
        "format": 1,
        "arch": arch,
        "os": {"id": "ubuntu", "version_id": "24.04"},
        "packages": {},
        "headers": {},
        "nvcc": "13.0.88",
        "gcc": "13.3.0",
        "python": "3.12.3",
        "modules": {"torch": {"version": TORCH, **torch}},
    }
    report.update(extra)
    return report
