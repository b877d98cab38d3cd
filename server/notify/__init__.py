"""Notifications: run events and alert rules POSTed to the webhooks `dash-server --notify URL` names."""
