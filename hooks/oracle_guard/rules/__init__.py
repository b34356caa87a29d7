"""Rule engines shared by the hook ids: per-file diff rules, skip marks, static approvals, hook arguments."""
