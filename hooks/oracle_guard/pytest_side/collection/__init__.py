"""What pytest collects: the exporter run in the project's pytest, partial collection, the base's."""
