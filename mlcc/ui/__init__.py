"""Terminal output helpers kept free of heavy imports."""

from typing import Callable

# What a long use case reports as it goes, for a progress display: (phase, done, total), e.g.
# ("lint: files", 12, 175). The CLI's display is mlcc.ui.progress; the use cases know only this.
Step = Callable[[str, int, int], None]
