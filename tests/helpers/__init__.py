"""Plain helpers shared by test modules (fixtures live in conftest.py; test modules never import each other)."""
