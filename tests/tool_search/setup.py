"""
The users of tool search's live test, in a live server's database (``python -m
tests.tool_search.setup``, run with the server's environment): ``tool_search_boss`` may see the
payroll and audit tools (``auth.view_user``), ``tool_search_clerk`` may not.
"""

import django


def main() -> None:
    django.setup()
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission

    model = get_user_model()
    boss, _ = model.objects.get_or_create(username="tool_search_boss")
    boss.user_permissions.add(Permission.objects.get(codename="view_user", content_type__app_label="auth"))
    model.objects.get_or_create(username="tool_search_clerk")


if __name__ == "__main__":
    main()
