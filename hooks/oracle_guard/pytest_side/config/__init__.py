"""pytest's configuration at two revisions, compared: settings that hide tests, collected doctests."""
