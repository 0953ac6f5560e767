import django.db.models.deletion
from django.db import migrations, models

from plumbing.statement_keys import Key, foreign_key_add, foreign_key_to_triggers, triggers_drop

# Each label keeps its task's campaign: a campaign's labels are then found by an index of their own, not by
# joining every label to the tasks (which PostgreSQL, with the labels' statistics older than a new campaign,
# planned as a walk through every task). On PostgreSQL (campaign, task) must name a task of that campaign:
# a composite key checked once a statement, in place of the task's own key.
LABELS = [
    ("judgment", "annotation_judgment", "annotation_relevancetask"),
    ("preference", "annotation_preference", "annotation_sidebysidetask"),
]
# (the key now, the task's own key it replaces)
KEYS = [
    (
        Key(f"{name}_task_in_campaign", table, ["campaign_id", "task_id"], tasks, ["campaign_id", "id"]),
        Key(f"{table}_task_id_fk", table, ["task_id"], tasks, ["id"]),
    )
    for name, table, tasks in LABELS
]


def campaigns_fill(apps, schema_editor):
    for _, table, tasks in LABELS:
        schema_editor.execute(
            f"UPDATE {table} SET campaign_id = (SELECT t.campaign_id FROM {tasks} t WHERE t.id = {table}.task_id)"
        )


def task_keys_to_triggers(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for key, task_key in KEYS:
            foreign_key_to_triggers(schema_editor, key, replaced=task_key.columns)


def triggers_to_task_keys(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for key, task_key in KEYS:
            for statement in triggers_drop(key):
                schema_editor.execute(statement)
            schema_editor.execute(foreign_key_add(task_key))


def campaign_field(**options) -> models.ForeignKey:
    return models.ForeignKey(
        db_constraint=False,
        db_index=False,
        on_delete=django.db.models.deletion.CASCADE,
        related_name="+",
        to="annotation.campaign",
        **options,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0033_document_text_database_defaults"),
    ]

    operations = [
        *(
            migrations.AddField(model_name=name, name="campaign", field=campaign_field(null=True))
            for name, _, _ in LABELS
        ),
        migrations.RunPython(campaigns_fill, migrations.RunPython.noop),
        *(
            migrations.AlterField(model_name=name, name="campaign", field=campaign_field())
            for name, _, _ in LABELS
        ),
        *(
            migrations.AddIndex(
                model_name=name,
                index=models.Index(fields=["campaign", "annotator"], name=f"{name}_campaign_annotator"),
            )
            for name, _, _ in LABELS
        ),
        migrations.RunPython(task_keys_to_triggers, triggers_to_task_keys),
    ]
