"""
django-oauth-toolkit's CIMD fetcher for a test server whose client documents live on 127.0.0.1
behind a throwaway certificate (tests/doctor/cimd_documents.py): the same fetch, with that
certificate trusted and the loopback address let through. Set it as ``CIMD_METADATA_FETCHER``
(tests/doctor/settings_cimd.py); ``MCP_DOCTOR_CIMD_CA`` names the certificate file.
"""

from __future__ import annotations

import ipaddress
import os
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from oauth2_provider import cimd


class LoopbackMetadataFetcher(cimd.SafeMetadataFetcher):
    """
    :class:`~oauth2_provider.cimd.SafeMetadataFetcher` unchanged but for two things, for the time of
    one fetch: its TLS context also trusts ``MCP_DOCTOR_CIMD_CA``, and its public-address check
    lets loopback addresses through (every other refusal stands). Tests only: in a server that
    serves requests in several threads at once, the swap would reach their fetches too.
    """

    def fetch(self, client_id: str) -> tuple[dict[str, Any], int]:
        with trusting(os.environ["MCP_DOCTOR_CIMD_CA"]), allowing_loopback():
            return super().fetch(client_id)


@contextmanager
def trusting(ca_file: str) -> Iterator[None]:
    """``ssl.create_default_context`` as seen by the fetcher: the system's roots plus ``ca_file``."""
    original = ssl.create_default_context

    def create_default_context(*args: Any, **kwargs: Any) -> ssl.SSLContext:
        context = original(*args, **kwargs)
        context.load_verify_locations(cafile=ca_file)
        return context

    cimd.ssl = _Namespace(ssl, create_default_context=create_default_context)  # type: ignore[attr-defined]
    try:
        yield
    finally:
        cimd.ssl = ssl  # type: ignore[attr-defined]


@contextmanager
def allowing_loopback() -> Iterator[None]:
    """DOT's public-address check, with loopback addresses counted as public."""
    original = cimd._ip_is_public
    cimd._ip_is_public = lambda ip: ipaddress.ip_address(ip).is_loopback or original(ip)  # type: ignore[assignment]
    try:
        yield
    finally:
        cimd._ip_is_public = original  # type: ignore[assignment]


class _Namespace:
    """A module seen through, with some names replaced."""

    def __init__(self, module: Any, **replaced: Any) -> None:
        self._module, self._replaced = module, replaced

    def __getattr__(self, name: str) -> Any:
        return self._replaced[name] if name in self._replaced else getattr(self._module, name)
