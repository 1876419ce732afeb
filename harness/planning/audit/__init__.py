"""Audits: an imported fabric compared with its design, or with the regular shape it should have."""
