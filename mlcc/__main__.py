"""``python -m mlcc``."""

from mlcc.cli import main

main()
