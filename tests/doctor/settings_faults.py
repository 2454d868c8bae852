"""
The test settings with one deployment fault, named by ``MCP_DOCTOR_FAULT``, for the doctor to find:

- ``wrong_public_url``: ``PUBLIC_BASE_URL`` names another address than the one clients use;
- ``no_metadata``: the site's URLs lack the well-known metadata routes (``urls_without_metadata``);
- ``no_card``: the site's URLs lack the Server Card (``urls_without_card``), all else as usual.
"""

import os

from tests.settings import *  # noqa: F403
from tests.settings import DJANGO_MCP


FAULT = os.environ.get("MCP_DOCTOR_FAULT", "")

if FAULT == "wrong_public_url":
    DJANGO_MCP["PUBLIC_BASE_URL"] = "https://mcp.example.com"
elif FAULT == "no_metadata":
    ROOT_URLCONF = "tests.doctor.urls_without_metadata"
elif FAULT == "no_card":
    ROOT_URLCONF = "tests.doctor.urls_without_card"
