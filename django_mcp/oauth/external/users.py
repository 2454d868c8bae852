"""
The Django user an outside issuer's token stands for, by the issuer's ``user_claim``:

- ``sub`` (the default): the stored link :class:`~django_mcp.oauth.models.ExternalIdentity` of
  (``iss``, ``sub``), the one claim an issuer promises never to reassign (OpenID Connect Core 5.7);
- ``email``: the user with that email, only when the token says ``email_verified``: an address the
  issuer did not verify would let anyone who types it there act as its owner here;
- ``preferred_username`` (or an introspection answer's ``username``): the user with that username.

With ``create_users`` a subject not known yet gets a new user (no usable password: it signs in
through its issuer) and, by ``sub``, its link. An inactive user is refused.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone

from .access_tokens import ExternalAccessToken, TokenRefused
from .issuers import Issuer

#: A link's ``last_seen`` is written at most this often, not on every request.
LAST_SEEN_RESOLUTION = timedelta(minutes=1)


def user_for(issuer: Issuer, token: ExternalAccessToken) -> tuple[Any, bool]:
    """``(user, created)`` for ``token``, or :class:`TokenRefused`. Blocking: call it on a worker thread."""
    if issuer.user_claim == "sub":
        user, created = _by_subject(issuer, token)
    else:
        user, created = _by_claim(issuer, token)
    if not user.is_active:
        raise TokenRefused("the token's user is inactive")
    return user, created


def _by_subject(issuer: Issuer, token: ExternalAccessToken) -> tuple[Any, bool]:
    from ..models import ExternalIdentity

    if not token.subject:
        raise TokenRefused("the token names no subject")
    link = (ExternalIdentity.objects.select_related("user")
            .filter(issuer=issuer.issuer, subject=token.subject).first())
    now = timezone.now()
    if link is not None:
        if link.last_seen is None or now - link.last_seen >= LAST_SEEN_RESOLUTION:
            ExternalIdentity.objects.filter(pk=link.pk).update(last_seen=now)
        return link.user, False
    if not issuer.create_users:
        raise TokenRefused("no user of this server is linked to the token's subject")
    try:
        with transaction.atomic():
            user = _new_user(_username_for(issuer, token), token)
            ExternalIdentity.objects.create(issuer=issuer.issuer, subject=token.subject, user=user, last_seen=now)
    except IntegrityError:
        # Two first requests of one subject at once: the other one made the link.
        link = ExternalIdentity.objects.select_related("user").get(issuer=issuer.issuer, subject=token.subject)
        return link.user, False
    return user, True


def _by_claim(issuer: Issuer, token: ExternalAccessToken) -> tuple[Any, bool]:
    User = get_user_model()
    claim = issuer.user_claim
    value = token.claims.get(claim)
    if not isinstance(value, str) or not value:
        raise TokenRefused(f"the token has no {claim}")
    if claim == "email":
        if token.claims.get("email_verified") is not True:
            raise TokenRefused("the token's email is not verified")
        field = User.get_email_field_name()
        lookup = {f"{field}__iexact": value}
    else:
        lookup = {User.USERNAME_FIELD: value}
    user = User._default_manager.filter(**lookup).first()
    if user is not None:
        return user, False
    if not issuer.create_users:
        raise TokenRefused(f"no user of this server has the token's {claim}")
    try:
        with transaction.atomic():
            return _new_user(value, token), True
    except IntegrityError:
        return User._default_manager.get(**lookup), False


def _username_for(issuer: Issuer, token: ExternalAccessToken) -> str:
    """A new user's username: ``subject@issuer-host``, which no other issuer's subject can take."""
    host = urlsplit(issuer.issuer).hostname or "issuer"
    max_length = get_user_model()._meta.get_field(get_user_model().USERNAME_FIELD).max_length or 150
    return f"{token.subject}@{host}"[:max_length]


def _new_user(username: str, token: ExternalAccessToken) -> Any:
    User = get_user_model()
    fields: dict[str, Any] = {User.USERNAME_FIELD: username}
    email = token.claims.get("email")
    if isinstance(email, str) and token.claims.get("email_verified") is True and User.get_email_field_name():
        fields[User.get_email_field_name()] = email
    user = User(**fields)
    user.set_unusable_password()
    user.save()
    return user


__all__ = ["LAST_SEEN_RESOLUTION", "user_for"]
