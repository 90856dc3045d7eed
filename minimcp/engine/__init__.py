"""minimcp/engine."""
