"""How CI files and task runners run pytest: per-file readers and the shell reader they end in."""
