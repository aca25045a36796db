"""Engine plugins for the tests: a real installed distribution (a module and its dist-info
folder on sys.path) declaring engines in the ``mlcc.engines`` entry-point group, as a
plugin's package would."""

from __future__ import annotations

import contextlib
import sys
import textwrap
from pathlib import Path
from typing import Dict, Iterator


@contextlib.contextmanager
def installed_engine_plugin(
    folder: Path, module: str, source: str, engines: Dict[str, str]
) -> Iterator[Path]:
    """Install ``source`` as module ``module`` declaring ``engines`` (name -> class name) for
    the duration of the block; the module and the folder leave sys.path after it."""
    (folder / f"{module}.py").write_text(textwrap.dedent(source))
    distribution = module.replace("_", "-")
    info = folder / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 1.0\n")
    declared = "".join(f"{name} = {module}:{cls}\n" for name, cls in engines.items())
    (info / "entry_points.txt").write_text("[mlcc.engines]\n" + declared)
    sys.path.insert(0, str(folder))
    try:
        yield folder
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop(module, None)
