"""People and campaign administration: accounts, members, archive, exclusions, imported labels."""

from django.utils.translation import gettext as _
from rest_framework import serializers

from annotation.api.serializers.fields import StrictBooleanField, StrictCharField, StrictIntegerField
from annotation.roles import Role
from annotation.selectors.people import campaign_member_candidates

PERSON_ROLES = [role.value for role in Role]


class PersonSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    username = serializers.CharField()
    name = serializers.CharField(allow_blank=True)
    roles = serializers.ListField(child=serializers.CharField(), help_text='Group names, and "superuser".')
    is_active = serializers.BooleanField()
    last_login = serializers.DateTimeField(allow_null=True)
    last_label = serializers.DateTimeField(allow_null=True)
    manageable = serializers.BooleanField(help_text="You may act on them (and they are not you).")


class PersonCreateSerializer(serializers.Serializer):
    username = StrictCharField(max_length=150)
    name = StrictCharField(max_length=150, required=False, allow_blank=True, default="")
    role = serializers.ChoiceField(choices=PERSON_ROLES, help_text="Managers give annotator or reviewer.")


class PasswordLinkSerializer(serializers.Serializer):
    password_link = serializers.CharField(
        help_text="A one-time link to hand over: it sets the person's password; shown only in this answer."
    )


class PersonCreatedSerializer(PasswordLinkSerializer):
    id = serializers.IntegerField()
    username = serializers.CharField()


class PersonChangeSerializer(serializers.Serializer):
    """One change: a role (their only one from now on), or active (false signs them out everywhere)."""

    role = serializers.ChoiceField(choices=PERSON_ROLES, required=False)
    is_active = StrictBooleanField(required=False)

    def validate(self, data):
        if len(data) != 1:
            raise serializers.ValidationError(_("give exactly one of role and is_active."))
        return data


class MembersSerializer(serializers.Serializer):
    open_to_all = StrictBooleanField(help_text="Every annotator may work on it; else only `members`.")
    members = serializers.ListField(
        child=serializers.PrimaryKeyRelatedField(
            queryset=campaign_member_candidates(), pk_field=StrictIntegerField()
        ),
        help_text="Ids of active annotators and reviewers (`GET /api/people/`).",
    )


class ArchiveSerializer(serializers.Serializer):
    archived = StrictBooleanField(help_text="true: read-only and hidden from annotators; false: restore.")


class ExclusionSerializer(serializers.Serializer):
    annotator = serializers.CharField()
    excluded_by = serializers.CharField(allow_blank=True)
    reason = serializers.CharField(allow_blank=True)
    excluded_at = serializers.DateTimeField()
    confirmed = serializers.BooleanField()
    in_force = serializers.BooleanField()
    reinstated_by = serializers.CharField(allow_null=True)
    reinstated_at = serializers.DateTimeField(allow_null=True)


class ExclusionActionSerializer(serializers.Serializer):
    action = serializers.ChoiceField(
        choices=["exclude", "reinstate", "confirm"],
        help_text="exclude: leave the annotator's labels out (with a reason); reinstate: count them again; "
        "confirm: confirm every exclusion in force.",
    )
    annotator = StrictCharField(required=False, max_length=150, help_text="exclude, reinstate: a username.")
    reason = StrictCharField(required=False, allow_blank=True, max_length=5000, default="")


class LabelsImportedSerializer(serializers.Serializer):
    judgments = serializers.IntegerField(help_text="Relevance grades imported.")
    preferences = serializers.IntegerField(help_text="Side-by-side verdicts imported.")
