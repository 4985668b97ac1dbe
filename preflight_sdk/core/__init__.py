"""The core: errors, result Structs and the envelope, durations, templates, progress, redaction."""
