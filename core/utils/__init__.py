"""Utilities: ``ember.utils.data`` (datasets, samplers, DataLoader)."""

from __future__ import annotations

from . import data

__all__ = ["data"]
