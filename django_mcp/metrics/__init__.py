"""
Prometheus metrics for operators: the feature app ``django_mcp.metrics`` (``pip install
"django-mcpkit[metrics]"``, which brings ``prometheus-client``). Each worker serves its own figures at
``/metrics`` (``DJANGO_MCP["METRICS_PATH"]``) beside ``/healthz``: scrape every worker, as Prometheus
scrapes every pod or process, and let its ``instance`` label tell them apart.

What it counts (every name starts with ``mcp_``): requests by method, era, transport and outcome
with their durations; tool calls by tool and outcome with their durations; open streams by kind and
the sessions a worker holds; sessions started and ended; requests refused before the dispatcher by
HTTP status; authentication failures; channel-layer failures. It listens to the core's signals
(:mod:`django_mcp.signals`) and reads its stream counts when scraped, so a request pays a counter
and a histogram update, and a stream nothing.
"""
