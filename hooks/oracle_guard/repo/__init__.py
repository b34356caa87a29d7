"""The repository: git, the change set between a base and the new side, paths, interpreters."""
