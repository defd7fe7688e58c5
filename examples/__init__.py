"""Example bots for the client kit."""
