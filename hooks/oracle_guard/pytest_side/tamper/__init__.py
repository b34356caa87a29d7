"""Nothing in the patch may switch the run-time gate off: config, CI text and conftest code (OG870-OG876)."""
