"""``python -m mlcc``."""

from mlcc._entry import main

main()
