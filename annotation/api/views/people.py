"""API for managers: people (list, add, change a role, deactivate and reactivate, a set-password link) and
a campaign's members, through the services the People and Members pages call, under the same rules
(`roles.may_manage`: a manager manages annotators and reviewers, only a superuser managers)."""

from django.contrib.auth import get_user_model
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api.exceptions import BodyLimitMixin
from annotation.api.parsers import BoundedJSONParser
from annotation.api.permissions import IsManager
from annotation.api.serializers.people import (
    MembersSerializer,
    PasswordLinkSerializer,
    PersonChangeSerializer,
    PersonCreatedSerializer,
    PersonCreateSerializer,
    PersonSerializer,
)
from annotation.api.views.campaigns import campaign_or_404
from annotation.roles import Role
from annotation.selectors.people import campaign_member_ids, people_list
from annotation.services import people as services

MANAGER = [IsAuthenticated, IsManager]


def _members(campaign) -> dict:
    return {"open_to_all": campaign.open_to_all, "members": sorted(campaign_member_ids(campaign=campaign))}


def _person(user_id: int):
    return get_object_or_404(get_user_model(), pk=user_id)


class PeopleView(BodyLimitMixin, APIView):
    permission_classes = MANAGER
    parser_classes = [BoundedJSONParser]

    @extend_schema(
        tags=["people"],
        responses={200: PersonSerializer(many=True)},
        description="Everyone, by username: roles, whether active, last sign-in and label, and whether you "
        "may act on them.",
    )
    def get(self, request):
        return Response(PersonSerializer(people_list(viewer=request.user), many=True).data)

    @extend_schema(
        tags=["people"],
        request=PersonCreateSerializer,
        responses={201: PersonCreatedSerializer},
        description="Add a person in one role, without a password: hand them `password_link` (shown only "
        "here) to set it. Usernames are unique whatever their case.",
    )
    def post(self, request):
        data = PersonCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user, path = services.person_create(
            by=request.user,
            username=data.validated_data["username"],
            name=data.validated_data["name"],
            role=Role(data.validated_data["role"]),
        )
        body = {"id": user.pk, "username": user.username, "password_link": request.build_absolute_uri(path)}
        return Response(PersonCreatedSerializer(body).data, status=status.HTTP_201_CREATED)


class PersonView(BodyLimitMixin, APIView):
    permission_classes = MANAGER
    parser_classes = [BoundedJSONParser]

    @extend_schema(
        tags=["people"],
        request=PersonChangeSerializer,
        responses={204: None},
        description='One change: `{"role": "reviewer"}` (their only role from now on) or `{"is_active": '
        "false}` (signed out of the API and their set-password links end) / `true`. Nobody changes "
        "themselves here; a manager may not act on managers or superusers (403).",
    )
    def patch(self, request, user_id: int):
        change = PersonChangeSerializer(data=request.data)
        change.is_valid(raise_exception=True)
        user, data = _person(user_id), change.validated_data
        if "role" in data:
            services.person_role_set(by=request.user, user=user, role=Role(data["role"]))
        else:
            services.person_active_set(by=request.user, user=user, active=data["is_active"])
        return Response(status=status.HTTP_204_NO_CONTENT)


class PasswordLinkView(APIView):
    permission_classes = MANAGER

    @extend_schema(
        tags=["people"],
        request=None,
        responses={200: PasswordLinkSerializer},
        description="Reset the person's password: the old one and their API tokens stop working; hand them "
        "the new one-time link.",
    )
    def post(self, request, user_id: int):
        path = services.person_password_reset(by=request.user, user=_person(user_id))
        return Response(PasswordLinkSerializer({"password_link": request.build_absolute_uri(path)}).data)


class MembersView(BodyLimitMixin, APIView):
    permission_classes = MANAGER
    parser_classes = [BoundedJSONParser]

    @extend_schema(tags=["campaigns"], responses={200: MembersSerializer})
    def get(self, request, campaign_id: int):
        return Response(_members(campaign_or_404(campaign_id)))

    @extend_schema(
        tags=["campaigns"],
        request=MembersSerializer,
        responses={200: MembersSerializer},
        description="Who may annotate the campaign: every annotator when `open_to_all`, else its `members`.",
    )
    def put(self, request, campaign_id: int):
        campaign = campaign_or_404(campaign_id)
        data = MembersSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.campaign_members_set(campaign=campaign, **data.validated_data)
        return Response(_members(campaign))
