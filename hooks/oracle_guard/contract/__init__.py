"""The contract and the trust root: loading, signatures, approvals, fixture digests, the snapshot format."""
