"""Rankings become one row per (model, query) holding the list's document keys (issue 17): a million-line run
was a million rows with three foreign keys and six indexes each, now it is ten thousand rows."""

import numpy as np
from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def _check_now(schema_editor):
    # PostgreSQL refuses the ALTER TABLEs that follow while deferred foreign-key checks are pending.
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def rows_to_lists(apps, schema_editor):
    """Each list goes into its top row; the other rows go."""
    _check_now(schema_editor)
    Ranking = apps.get_model("annotation", "Ranking")
    lists: dict[tuple[int, int], list[int]] = {}
    top: dict[tuple[int, int], int] = {}
    rows = Ranking.objects.order_by("model_id", "query_id", "rank").values_list(
        "pk", "model_id", "query_id", "document_id"
    )
    for pk, model_id, query_id, document_id in rows.iterator(chunk_size=10_000):
        top.setdefault((model_id, query_id), pk)
        lists.setdefault((model_id, query_id), []).append(document_id)
    same_list = Ranking.objects.filter(model_id=OuterRef("model_id"), query_id=OuterRef("query_id"))
    Ranking.objects.exclude(pk=Subquery(same_list.order_by("rank").values("pk")[:1])).delete()
    Ranking.objects.bulk_update(
        [
            Ranking(pk=top[key], documents=np.asarray(pks, dtype="<i8").tobytes())
            for key, pks in lists.items()
        ],
        ["documents"],
        batch_size=2000,
    )


def lists_to_rows(apps, schema_editor):
    """Back: each list's top row keeps its first document, the others get a row each."""
    _check_now(schema_editor)
    Ranking = apps.get_model("annotation", "Ranking")
    rows = []
    for ranking in Ranking.objects.iterator(chunk_size=2000):
        first, *rest = np.frombuffer(ranking.documents, dtype="<i8").tolist()
        ranking.rank, ranking.document_id = 1, first
        ranking.save(update_fields=["rank", "document"])
        rows += [
            Ranking(
                model_id=ranking.model_id, query_id=ranking.query_id, document_id=pk, rank=rank, documents=b""
            )
            for rank, pk in enumerate(rest, start=2)
        ]
    Ranking.objects.bulk_create(rows, batch_size=2000)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0013_repeats"),
    ]

    operations = [
        # Nullable first, so that going back can add the columns to rows that have no value for them yet.
        migrations.AlterField(
            model_name="ranking",
            name="document",
            field=models.ForeignKey(
                null=True,
                on_delete=models.deletion.CASCADE,
                related_name="rankings",
                to="annotation.document",
            ),
        ),
        migrations.AlterField(
            model_name="ranking", name="rank", field=models.PositiveIntegerField(null=True)
        ),
        migrations.AddField(
            model_name="ranking",
            name="documents",
            field=models.BinaryField(default=b""),
            preserve_default=False,
        ),
        migrations.RunPython(rows_to_lists, lists_to_rows),
        migrations.RemoveConstraint(model_name="ranking", name="ranking_rank_unique"),
        migrations.RemoveConstraint(model_name="ranking", name="ranking_document_unique"),
        migrations.RemoveConstraint(model_name="ranking", name="ranking_rank_positive"),
        migrations.RemoveField(model_name="ranking", name="document"),
        migrations.RemoveField(model_name="ranking", name="rank"),
        migrations.RemoveField(model_name="ranking", name="score"),
        migrations.AlterModelOptions(name="ranking", options={"ordering": ["model", "query"]}),
        migrations.AlterField(
            model_name="ranking",
            name="model",
            field=models.ForeignKey(
                db_index=False,
                on_delete=models.deletion.CASCADE,
                related_name="rankings",
                to="annotation.rankingmodel",
            ),
        ),
        migrations.AddConstraint(
            model_name="ranking",
            constraint=models.UniqueConstraint(fields=("model", "query"), name="ranking_list_unique"),
        ),
    ]
