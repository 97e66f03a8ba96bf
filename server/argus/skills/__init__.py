"""Optimization skills: transforms that carry when they are valid. This package holds the interface that
consumers (the language server, the agent) call; the skills themselves arrive with the skills issue."""
