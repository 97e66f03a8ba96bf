"""Lineages: an expert kernel walked backward through gate-validated simplifications (walker.py), recorded as
pydantic models (record.py) that skill cards cite as evidence."""
