"""
Shared start of the scripts tests/packaging runs with the fresh venv's python in the project
directory (copied beside manage.py): the project's settings, Django set up.
"""

import os
import sys


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mysite.settings")

import django  # noqa: E402


django.setup()
