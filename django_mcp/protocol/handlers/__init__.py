"""One module per feature area; each handler takes (the dispatcher as a :class:`~.host.HandlerHost`, validated params, context)."""
