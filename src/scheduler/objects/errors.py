"""Errors in API objects themselves (what the API server's validation would have refused)."""

from __future__ import annotations


class InvalidObjectError(ValueError):
    """An object the scheduler cannot read; the message names the object and the field."""
