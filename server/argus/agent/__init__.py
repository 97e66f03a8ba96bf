"""Agent-in-editor refinement: planners propose, the loop parses, verifies and gates. docs/agent.md."""
