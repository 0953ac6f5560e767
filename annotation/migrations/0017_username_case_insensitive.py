"""Usernames are unique whatever their case: `MANAGER` beside `manager` is refused by the database too, by a
unique index on the lower-cased username of Django's user table (issue 25). Usernames that already differ
only in case are named and the migration stops: rename one of each pair (in the admin) and migrate again."""

from django.conf import settings
from django.db import migrations
from django.db.models import Count
from django.db.models.functions import Lower

INDEX = "annotation_username_lower_unique"


def _table_and_column(apps, schema_editor) -> tuple[str, str]:
    User = apps.get_model(settings.AUTH_USER_MODEL)
    column = User._meta.get_field("username").column
    return schema_editor.quote_name(User._meta.db_table), schema_editor.quote_name(column)


def index_create(apps, schema_editor):
    User = apps.get_model(settings.AUTH_USER_MODEL)
    folded = (
        User.objects.annotate(folded=Lower("username")).values("folded").annotate(n=Count("pk")).filter(n__gt=1)
    )
    clashes = [row["folded"] for row in folded[:10]]
    if clashes:
        raise RuntimeError(
            "Usernames must be unique whatever their case, and these are not: "
            f"{', '.join(map(repr, clashes))}. Rename one of each in the admin, then migrate again."
        )
    table, column = _table_and_column(apps, schema_editor)
    schema_editor.execute(f"CREATE UNIQUE INDEX {INDEX} ON {table} (LOWER({column}))")


def index_drop(apps, schema_editor):
    schema_editor.execute(f"DROP INDEX {INDEX}")


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0016_password_link"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [migrations.RunPython(index_create, index_drop)]
