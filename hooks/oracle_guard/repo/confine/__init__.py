"""Confinement of the change's code: ``jail`` says the ground and starts a process through ``landlock``'s launcher."""
