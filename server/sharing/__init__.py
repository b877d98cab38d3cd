"""Sharing: read-only tokens (all envs or a list), snapshot HTML files and env archives."""
