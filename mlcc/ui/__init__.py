"""Terminal output helpers kept free of heavy imports."""
