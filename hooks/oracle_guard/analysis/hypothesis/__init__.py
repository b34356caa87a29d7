"""Hypothesis tests read statically: strategies, settings, the model of a module, its weakenings."""
