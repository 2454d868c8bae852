"""
The servers of the memory measurement: the two applications under test, each with one extra path,
``/__bench__/gc``, that runs ``gc.collect()`` in the server, re-enables the collector and answers
the number of unreachable objects it found; ``/__bench__/gc?pause`` collects, then disables the
collector, so that the next collection counts all the cyclic garbage made in between.

Why: per-request reference cycles (docs/architecture.md, "Performance") sit uncollected until the collector gets round
to them, so RSS read at an arbitrary moment counts a varying amount of garbage. ``memory.py`` has the
server collect every few items and before every reading, so the growth it reports is what idle
streams and sessions *retain*. The pause lets it count the objects a request leaves in reference
cycles (work for the collector, the collector's cost under concurrency, docs/architecture.md). The path check
is the only difference from the throughput servers.

A second path, ``/__bench__/traced``, collects and answers the bytes of Python memory that
``tracemalloc`` traces now (``?start`` starts tracing first). Traced from a moment on, the growth
is what objects allocated since and still alive take, whatever pages the allocator holds: RSS
also keeps the high-water mark of work done in between, which made an idle session read 7-17 KiB
on daphne from run to run against about 1 KiB on uvicorn.

``/__bench__/traced?snapshot`` also keeps a ``tracemalloc`` snapshot (starting tracing first when
needed), and ``/__bench__/traced?compare=filename`` (or ``=lineno``) answers, as JSON, where the
memory traced since that snapshot was allocated: the allocation sites that grew most, grouped by
file or by line, as ``[site, bytes, blocks]``. That says *what* an idle stream keeps (an asyncio
queue of the channel layer, a reader task, the server's connection objects), which a byte count
alone cannot. tracemalloc's own allocations (the stored snapshot among them) are left out.

``benchmarks.memory_asgi:baseline`` and ``benchmarks.memory_asgi:django_mcp``; each is imported only
when asked for, since the two need different Django settings.
"""

import gc
import json
import tracemalloc

GC_PATH = "/__bench__/gc"
TRACED_PATH = "/__bench__/traced"
# Sites answered by ``?compare=``: enough for a top five per stream after the server's own churn.
COMPARE_SITES = 40
# The measuring machinery itself, not what the server keeps.
_NOT_THE_SERVER = (tracemalloc.Filter(False, tracemalloc.__file__),
                   tracemalloc.Filter(False, "<frozen importlib._bootstrap>"),
                   tracemalloc.Filter(False, "<unknown>"))
_snapshot: tracemalloc.Snapshot | None = None


def _traced(query: str) -> bytes:
    """The answer of ``/__bench__/traced``: bytes traced now, or (``compare=``) the sites grown since ``?snapshot``."""
    global _snapshot
    if query in ("start", "snapshot") and not tracemalloc.is_tracing():
        tracemalloc.start()
    gc.collect()
    if query == "snapshot":
        # Kept until the next one: it is in the bytes read from here on, as it is in this reading,
        # so it cancels out of a growth.
        _snapshot = tracemalloc.take_snapshot().filter_traces(_NOT_THE_SERVER)
    elif query.startswith("compare=") and _snapshot is not None:
        group = query.partition("=")[2]
        now = tracemalloc.take_snapshot().filter_traces(_NOT_THE_SERVER)
        grown = sorted(now.compare_to(_snapshot, group), key=lambda stat: stat.size_diff, reverse=True)
        sites = []
        for stat in grown[:COMPARE_SITES]:
            frame = stat.traceback[0]
            sites.append([frame.filename if group == "filename" else f"{frame.filename}:{frame.lineno}",
                          stat.size_diff, stat.count_diff])
        return json.dumps(sites).encode()
    return str(tracemalloc.get_traced_memory()[0]).encode()


def _with_gc(app):
    async def wrapped(scope, receive, send):
        if scope["type"] == "http" and scope["path"] in (GC_PATH, TRACED_PATH):
            if scope["path"] == TRACED_PATH:
                body = _traced(scope.get("query_string", b"").decode("latin-1"))
            else:
                found = gc.collect()
                if scope.get("query_string") == b"pause":
                    gc.disable()
                else:
                    gc.enable()
                body = str(found).encode()
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return None
        return await app(scope, receive, send)

    return wrapped


def __getattr__(name):
    if name == "baseline":
        from benchmarks.baseline_asgi import application
    elif name == "django_mcp":
        from tests.asgi import application
    else:
        raise AttributeError(name)
    return _with_gc(application)
