"""Edits: model text -> file changes, the versioned workspace, its diffs and diff units (docs/edits.md)."""
