from django.db import migrations

from plumbing import statement_keys

# A relevance task's query and document in its campaign (migration 0027's two composite keys), checked once a
# statement instead of once a row: a foreign key's per-row check at COMMIT was most of an import's COMMIT.
KEYS = [
    statement_keys.Key(
        "relevance_task_query_in_campaign",
        "annotation_relevancetask",
        ["campaign_id", "query_id"],
        "annotation_query",
        ["campaign_id", "id"],
    ),
    statement_keys.Key(
        "relevance_task_document_in_campaign",
        "annotation_relevancetask",
        ["campaign_id", "document_id"],
        "annotation_document",
        ["campaign_id", "id"],
    ),
]


def keys_to_triggers(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for key in KEYS:
        schema_editor.execute(f"ALTER TABLE {key.child} DROP CONSTRAINT {key.name}")
        for statement in statement_keys.triggers_create(key):
            schema_editor.execute(statement)


def triggers_to_keys(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for key in KEYS:
        for statement in statement_keys.triggers_drop(key):
            schema_editor.execute(statement)
        schema_editor.execute(statement_keys.foreign_key_add(key))


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0027_task_keys_in_campaign"),
    ]

    operations = [migrations.RunPython(keys_to_triggers, triggers_to_keys)]
