"""Optimization skills: transforms that carry when they are valid (docs/skills.md).

transforms/   rewrites as minimal text edits, each with its inverse and named preconditions
facts, preconditions   what preconditions are stated over, and their names (the shared-memory estimate
              is argus.dsl.resources)
context       the facts at each site that decide a skill's effect there (dtypes, layouts, work, bound, waves)
lineage/      the walker from an expert kernel backward, its records, bundles for a GPU
cards, extract, library   skill cards from lineage records, stored as YAML in skills/library/
matcher, apply, library_provider   where a card applies, applying it to a file, the editor's light bulb
provider      the interface consumers (the language server, the agent) call
"""
