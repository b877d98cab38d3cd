"""Runs as first-class: run ops, series summaries, the run query language, listing, crash watch and retention."""
