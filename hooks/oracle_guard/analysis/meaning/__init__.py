"""What a check means, not how it is spelled: whether it can fail, what values and globs it reads."""
