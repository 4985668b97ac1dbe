"""`preflight`: the command line, generated from the operation registry."""
