"""Reading the files users hand the engine: YAML without surprises."""
