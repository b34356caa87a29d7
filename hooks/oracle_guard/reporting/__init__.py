"""Findings, their codes and hints, and the formats they are printed in (the lowest layer)."""
