"""Visdom compatibility: its HTTP routes, its socket, wire translation and env import."""
