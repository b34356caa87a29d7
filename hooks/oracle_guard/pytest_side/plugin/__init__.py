"""The pytest plugin: its entry point, the run-time gate, the watch beside it, reruns and options."""
