from django.db import migrations

from plumbing.statement_keys import Key, foreign_key_to_triggers, triggers_to_foreign_key

# The keys an import's rows name (documents, queries, lists and side-by-side tasks: every key but the
# relevance tasks', migration 0028), checked once a statement by triggers instead of once a row at COMMIT.
# PostgreSQL only: Django's state and SQLite keep the foreign keys.
KEYS = [
    Key("document_campaign", "annotation_document", ["campaign_id"], "annotation_campaign", ["id"]),
    Key("query_campaign", "annotation_query", ["campaign_id"], "annotation_campaign", ["id"]),
    Key("ranking_model", "annotation_ranking", ["model_id"], "annotation_rankingmodel", ["id"]),
    Key("ranking_query", "annotation_ranking", ["query_id"], "annotation_query", ["id"]),
    Key(
        "side_by_side_task_campaign",
        "annotation_sidebysidetask",
        ["campaign_id"],
        "annotation_campaign",
        ["id"],
    ),
    Key("side_by_side_task_query", "annotation_sidebysidetask", ["query_id"], "annotation_query", ["id"]),
    Key(
        "side_by_side_task_model",
        "annotation_sidebysidetask",
        ["experimental_model_id"],
        "annotation_rankingmodel",
        ["id"],
    ),
]


def keys_to_triggers(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for key in KEYS:
            foreign_key_to_triggers(schema_editor, key)


def triggers_to_keys(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for key in KEYS:
            triggers_to_foreign_key(schema_editor, key)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0028_task_keys_per_statement"),
    ]

    operations = [migrations.RunPython(keys_to_triggers, triggers_to_keys)]
