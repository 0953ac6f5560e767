from importlib import import_module

from django.db import migrations

from plumbing.statement_keys import functions_replace

# The triggers of migrations 0028 and 0029 check the rows a statement wrote in one pass (their distinct
# keys against the parents they lock), not a second pass looking for a row without its parent.
KEYS = [
    *import_module("annotation.migrations.0028_task_keys_per_statement").KEYS,
    *import_module("annotation.migrations.0029_keys_per_statement").KEYS,
]


def functions_now(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for key in KEYS:
            for statement in functions_replace(key):
                schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0029_keys_per_statement"),
    ]

    # Going back keeps this body: the one before checked the same.
    operations = [migrations.RunPython(functions_now, migrations.RunPython.noop)]
