"""live_project/ is a suite of its own, run by test_live_fixture.py in a pytest with a file test database."""

collect_ignore = ["live_project"]
