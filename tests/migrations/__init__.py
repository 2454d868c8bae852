"""Migration tests: an existing database upgrades with ``migrate`` alone and keeps its rows."""
