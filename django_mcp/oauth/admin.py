"""Admin for personal access tokens, outside identities, and a revoke action on DOT's registered clients."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.utils import timezone

from .models import TOKEN_PREFIX, ExternalIdentity, PersonalAccessToken


def _scope_choices() -> list[tuple[str, str]]:
    from oauth2_provider.scopes import get_scopes_backend

    return sorted(get_scopes_backend().get_all_scopes().items())


class PersonalAccessTokenForm(forms.ModelForm):
    """Scopes as checkboxes; the token value is made on save and shown once."""

    scopes = forms.MultipleChoiceField(choices=_scope_choices, widget=forms.CheckboxSelectMultiple, required=False)

    class Meta:
        model = PersonalAccessToken
        fields = ["user", "name", "scopes", "expires"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.fields["scopes"].initial = self.instance.scope.split()

    def save(self, commit: bool = True) -> PersonalAccessToken:
        self.instance.scope = " ".join(self.cleaned_data.get("scopes") or [])
        return super().save(commit)


@admin.register(PersonalAccessToken)
class PersonalAccessTokenAdmin(admin.ModelAdmin):
    """Create, list and revoke personal access tokens; values are shown once and stored hashed."""

    form = PersonalAccessTokenForm
    list_display = ["name", "user", "token_hint", "scope", "created", "expires", "last_used", "status"]
    list_filter = ["revoked", "expires"]
    search_fields = ["name", "user__username", "hint"]
    readonly_fields = ["token_hint", "created", "last_used", "revoked"]
    actions = ["revoke_tokens"]

    @admin.display(description="token")
    def token_hint(self, obj: PersonalAccessToken) -> str:
        return f"{TOKEN_PREFIX}{obj.hint}…" if obj.hint else "—"

    @admin.display(description="status")
    def status(self, obj: PersonalAccessToken) -> str:
        if obj.revoked:
            return "revoked"
        if obj.expires and obj.expires <= timezone.now():
            return "expired"
        return "active"

    def save_model(self, request: Any, obj: PersonalAccessToken, form: Any, change: bool) -> None:
        raw = None if change else obj.assign_new_value()
        super().save_model(request, obj, form, change)
        if raw:
            messages.warning(request, f"The new token is {raw} — copy it now: it is stored hashed and will not be "
                                      "shown again.")

    @admin.action(description="Revoke the selected tokens")
    def revoke_tokens(self, request: Any, queryset: Any) -> None:
        count = queryset.filter(revoked__isnull=True).update(revoked=timezone.now())
        self.message_user(request, f"Revoked {count} token(s).")


def _add_client_revocation() -> None:
    """DOT registers its Application admin; give it an action that cuts a client off at once."""
    from oauth2_provider.models import get_access_token_model, get_application_model, get_refresh_token_model

    application_model = get_application_model()
    model_admin = admin.site._registry.get(application_model)
    if model_admin is None:
        return

    @admin.action(description="Revoke every token of the selected clients")
    def revoke_client_tokens(modeladmin: Any, request: Any, queryset: Any) -> None:
        get_refresh_token_model().objects.filter(application__in=queryset, revoked__isnull=True).update(
            revoked=timezone.now())
        deleted, _ = get_access_token_model().objects.filter(application__in=queryset).delete()
        modeladmin.message_user(request, f"Revoked the tokens of {queryset.count()} client(s).")

    model_admin.actions = [*(model_admin.actions or []), revoke_client_tokens]


_add_client_revocation()


@admin.register(ExternalIdentity)
class ExternalIdentityAdmin(admin.ModelAdmin):
    """
    Which user each subject of an outside issuer is: staff link a subject to an existing account
    here (before its first token, where the issuer does not create users), or delete a link to cut
    that subject off.
    """

    list_display = ["subject", "issuer", "user", "created", "last_seen"]
    list_filter = ["issuer"]
    search_fields = ["subject", "user__username", "user__email"]
    autocomplete_fields = ["user"]
    readonly_fields = ["created", "last_seen"]
