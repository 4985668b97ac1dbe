"""What a mock's configuration holds besides e2e.yaml's own keys: its recorded routes (`recorded`),
read from the route files beside e2e.yaml, and the files their bodies live in."""
