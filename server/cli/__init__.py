"""The command line: `dash-server` and its subcommands; main.py parses and calls the rest."""
