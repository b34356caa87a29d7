"""Reading test code: parsing, check sites, what a check means, same-test pairing, Hypothesis models."""
