"""``manage.py mcp_token``: create, list and revoke personal access tokens."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from ...models import TOKEN_PREFIX, PersonalAccessToken


class Command(BaseCommand):
    help = "Create, list or revoke personal access tokens for the MCP endpoints."

    def add_arguments(self, parser: Any) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="Create a token and print it (once).")
        create.add_argument("--user", required=True, help="Username the token acts as.")
        create.add_argument("--name", default="command line", help="What the token is for.")
        create.add_argument("--scope", default=None,
                            help="Space-separated scopes (default: OAUTH2_PROVIDER's DEFAULT_SCOPES).")
        create.add_argument("--days", type=int, default=90, help="Lifetime in days; 0 never expires.")
        listing = sub.add_parser("list", help="List tokens (never their values): each one's hint, user, name, "
                                              "scopes, expiry and state.")
        listing.add_argument("--user", default=None, help="Only this user's tokens (a username).")
        revoke_help = ("Revoke one token, named by its hint: the characters after mcp_pat_ that `mcp_token list` "
                       "shows (e.g. mcp_token revoke mcp_pat_Ab12Cd).")
        revoke = sub.add_parser("revoke", help=revoke_help, description=revoke_help)
        revoke.add_argument("hint", help="The token's hint as `list` prints it, with or without mcp_pat_ and the "
                                         "ellipsis; at least its first 6 characters.")

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        getattr(self, f"handle_{action}")(**options)

    def handle_create(self, user: str, name: str, scope: str | None, days: int, **options: Any) -> None:
        account = get_user_model()._default_manager.filter(**{get_user_model().USERNAME_FIELD: user}).first()
        if account is None:
            raise CommandError(f"No user {user!r}.")
        if scope is None:
            from oauth2_provider.settings import oauth2_settings

            scope = " ".join(oauth2_settings._DEFAULT_SCOPES)
        _, raw = PersonalAccessToken.issue(account, name, scope, timedelta(days=days) if days else None)
        self.stdout.write(raw)

    def handle_list(self, user: str | None, **options: Any) -> None:
        tokens = PersonalAccessToken.objects.select_related("user")
        if user:
            tokens = tokens.filter(**{f"user__{get_user_model().USERNAME_FIELD}": user})
        for token in tokens:
            state = "revoked" if token.revoked else ("active" if token.is_usable else "expired")
            self.stdout.write(f"{TOKEN_PREFIX}{token.hint}…  {token.user}  {token.name!r}  [{token.scope}]  "
                              f"expires {token.expires or 'never'}  {state}")

    def handle_revoke(self, hint: str, **options: Any) -> None:
        hint = hint.removeprefix(TOKEN_PREFIX).rstrip("…")
        if len(hint) < 6:
            raise CommandError("Give at least the first 6 characters after mcp_pat_.")
        tokens = list(PersonalAccessToken.objects.filter(hint__startswith=hint[:8], revoked__isnull=True))
        if not tokens:
            raise CommandError(f"No active token with hint {hint!r}.")
        if len(tokens) > 1:
            raise CommandError(f"{len(tokens)} active tokens start with {hint!r}; give more characters.")
        for token in tokens:
            token.revoke()
        self.stdout.write(f"Revoked {len(tokens)} token(s).")
