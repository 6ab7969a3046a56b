from __future__ import annotations

from django.contrib.auth import get_user_model
from rest_framework import serializers

from core.strict import StrictCharField, StrictInput, StrictIntegerField, StrictRegexField

MAX_TOKEN_SECONDS = 10 * 365 * 24 * 3600


class SignupInput(StrictInput):
    username = StrictRegexField(
        r"^[\w.@+-]+\Z", max_length=150, help_text="Letters, digits and @/./+/-/_ only."
    )
    password = StrictCharField(write_only=True, style={"input_type": "password"})


class UserOut(serializers.ModelSerializer):
    class Meta:
        model = get_user_model()
        fields = ("id", "username", "date_joined")


class TokenCreateInput(StrictInput):
    username = StrictCharField(
        required=False, help_text="With `password`, instead of HTTP Basic auth."
    )
    password = StrictCharField(required=False, write_only=True)
    expires_in = StrictIntegerField(
        min_value=60, max_value=MAX_TOKEN_SECONDS, required=False, allow_null=True,
        help_text="Lifetime in seconds; omit for a token that lives until revoked.",
    )


class TokenOut(serializers.Serializer):
    id = serializers.CharField(source="token_key", help_text="Public prefix naming the token.")
    created = serializers.DateTimeField()
    expiry = serializers.DateTimeField(allow_null=True)


class TokenCreatedOut(TokenOut):
    key = serializers.CharField(help_text="The secret; shown only once.")
