# The database cache's table (settings.CACHES without REDIS_URL): failed sign-ins and throttles count there,
# shared by every worker. `createcachetable` skips caches of other backends and tables that exist.

from django.core.management import call_command
from django.db import migrations


def create_cache_table(apps, schema_editor):
    call_command("createcachetable", database=schema_editor.connection.alias, verbosity=0)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0005_assignment_campaign_required"),
    ]

    operations = [
        migrations.RunPython(create_cache_table, migrations.RunPython.noop, elidable=False),
    ]
