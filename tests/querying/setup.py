"""
Fill a live server's database with the query tool's company (``python -m tests.querying.setup``),
run in a subprocess with the server's environment, as application code would.
"""

import django


def main() -> None:
    django.setup()
    from tests.model_resources.query.company import make_company, make_users

    make_company()
    make_users()


if __name__ == "__main__":
    main()
