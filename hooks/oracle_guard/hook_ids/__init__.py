"""One module per pre-commit hook id (registry.py lists them); each imports the layers below only."""
