"""One module per feature area; each handler takes (dispatcher, validated params, context)."""
