"""`python -m paneboard.server`: same as the `dash-server` command."""

from .cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
