"""From decoded events to committed rows: parsing, the writer thread, stall watch, memory trim."""
