"""`python -m preflight_sdk …`: the `preflight` command line."""

from __future__ import annotations

from preflight_sdk.faces.cli.app import main

if __name__ == "__main__":
    main()
