"""Side-by-side throughput and memory benchmarks for django_mcp; run ``python benchmarks/run.py``."""
