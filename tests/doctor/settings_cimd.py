"""
The test settings of a server that fetches client ID metadata documents from 127.0.0.1 over the
throwaway certificate of tests/doctor/cimd_documents.py (``MCP_DOCTOR_CIMD_CA``), with
tests/doctor/cimd_fetcher.py as DOT's ``CIMD_METADATA_FETCHER``; the rest as tests.settings.
"""

from tests.settings import *  # noqa: F403
from tests.settings import OAUTH2_PROVIDER


OAUTH2_PROVIDER = {**OAUTH2_PROVIDER, "CIMD_METADATA_FETCHER": "tests.doctor.cimd_fetcher.LoopbackMetadataFetcher"}
