"""Helpers shared by the test modules (one copy each)."""
