from importlib import import_module

from django.db import migrations

# The rows a statement writes no longer lock the parents this transaction wrote itself (an import's documents
# and queries, written just before its tasks): no other transaction can delete those before COMMIT. 0030's
# step writes the functions as plumbing/statement_keys.py says now, for the same keys.
functions_now = import_module("annotation.migrations.0030_keys_per_statement_one_pass").functions_now


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0031_task_keys_without_unique_pairs"),
    ]

    # Going back keeps this body: the one before checked the same rule.
    operations = [migrations.RunPython(functions_now, migrations.RunPython.noop)]
