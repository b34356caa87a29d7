"""The same test at two revisions: its cases, parameters, checks and spellings paired."""
