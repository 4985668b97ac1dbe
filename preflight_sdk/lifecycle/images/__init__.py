"""Images: what each service is built from (its inputs, hashed), in which order, and the build itself."""
