"""The `oracle-guard` subcommands; the top layer: a command may import any layer."""
