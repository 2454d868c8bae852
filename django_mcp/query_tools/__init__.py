"""Read-only query tools staff define in the admin without code (docs/query_tools.md)."""
