"""pytest plugin (entry point `oracle_guard`): inert unless the contract exists or --oracle-guard is given."""
