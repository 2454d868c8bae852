"""
Where legacy-session state lives between requests, so any worker can serve any request:
:mod:`.sessions` (the session rows) and :mod:`.events` (stream events for ``Last-Event-ID``).
Stores only store; telling other workers about a change is the caller's job.
"""
