"""Personal access tokens: bearer tokens a user makes for clients that cannot do OAuth."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone


#: Every personal access token starts with this, so the authentication classes can tell it from
#: an OAuth access token without a database query, and secret scanners can find leaked ones.
TOKEN_PREFIX = "mcp_pat_"


def token_digest(raw: str) -> str:
    """What is stored: the SHA-256 of the token (it has 256 random bits, so no salt is needed)."""
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


class PersonalAccessTokenQuerySet(models.QuerySet):
    """Lookups by raw token value, and the tokens that still work."""

    def usable(self) -> PersonalAccessTokenQuerySet:
        now = timezone.now()
        return self.filter(revoked__isnull=True).filter(models.Q(expires__isnull=True) | models.Q(expires__gt=now))


class PersonalAccessToken(models.Model):
    """
    A scoped, expiring, revocable bearer token for one user, accepted on the MCP endpoints like an
    OAuth access token. Only its SHA-256 is stored: the value is shown once, when it is created
    (:meth:`issue`), and cannot be shown again.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="mcp_personal_access_tokens")
    name = models.CharField(max_length=100, help_text="What the token is for, e.g. “CI agent”.")
    digest = models.CharField(max_length=64, unique=True, editable=False)
    #: The first characters of the token after the prefix, to recognise it in lists and logs.
    hint = models.CharField(max_length=12, editable=False)
    scope = models.TextField(blank=True, help_text="Space-separated OAuth scopes the token grants.")
    created = models.DateTimeField(auto_now_add=True)
    expires = models.DateTimeField(null=True, blank=True, help_text="Empty: never expires.")
    last_used = models.DateTimeField(null=True, blank=True, editable=False)
    revoked = models.DateTimeField(null=True, blank=True)

    objects = PersonalAccessTokenQuerySet.as_manager()

    class Meta:
        verbose_name = "personal access token"
        ordering = ["-created"]

    def __str__(self) -> str:
        # Never the token itself: this shows in the admin and in logs.
        return f"{self.name} ({TOKEN_PREFIX}{self.hint}…)"

    @classmethod
    def issue(cls, user: object, name: str, scope: str = "", lifetime: timedelta | None = timedelta(days=90),
              ) -> tuple[PersonalAccessToken, str]:
        """Create a token; returns the row and the raw value, which exists nowhere else."""
        raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
        token = cls(user=user, name=name, scope=scope, digest=token_digest(raw), hint=raw[len(TOKEN_PREFIX):][:8],
                    expires=timezone.now() + lifetime if lifetime else None)
        token.save()
        return token, raw

    def assign_new_value(self) -> str:
        """Give an unsaved row a fresh value (the admin's add form); returns the raw value."""
        raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
        self.digest, self.hint = token_digest(raw), raw[len(TOKEN_PREFIX):][:8]
        return raw

    @property
    def is_usable(self) -> bool:
        return self.revoked is None and (self.expires is None or self.expires > timezone.now())

    def revoke(self) -> None:
        if self.revoked is None:
            self.revoked = timezone.now()
            self.save(update_fields=["revoked"])


class ExternalIdentity(models.Model):
    """
    The Django user an outside authorization server's subject is (``iss`` and ``sub`` of its
    access tokens, :class:`~django_mcp.oauth.external.ExternalTokenAuthentication`): the stored
    link by which a token maps to a user when the issuer's ``user_claim`` is ``sub``. Made on a
    subject's first token when the issuer allows ``create_users``, or by staff in the admin.
    """

    issuer = models.CharField(max_length=255)
    subject = models.CharField(max_length=255)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="mcp_external_identities")
    created = models.DateTimeField(auto_now_add=True)
    last_seen = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        verbose_name = "external identity"
        verbose_name_plural = "external identities"
        constraints = [models.UniqueConstraint(fields=["issuer", "subject"], name="mcp_external_identity_unique")]

    def __str__(self) -> str:
        return f"{self.subject} at {self.issuer}"
