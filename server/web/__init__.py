"""HTTP blueprints and websocket endpoints: parse, call the domain, serialize; no SQL here."""
