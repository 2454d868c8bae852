"""
An app that writes to stdout every way it can — at import, in ``ready()``, through a logging
handler on stdout, and from a tool — for the stdio hygiene tests (tests/transports/test_stdio_noise.py).
Installed only by ``tests.stdio_noisy_settings``.
"""
