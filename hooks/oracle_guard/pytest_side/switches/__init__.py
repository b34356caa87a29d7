"""Switches that hide failures (OG860-OG864): options, ini keys, CI commands, code, coverage."""
