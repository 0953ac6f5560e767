from django.db import migrations, models


class Migration(migrations.Migration):
    """Campaigns that exist keep the order they were run in (relevance first); new ones interleave."""

    dependencies = [
        ("annotation", "0008_campaign_membership"),
    ]

    operations = [
        migrations.AddField(
            model_name="campaign",
            name="task_order",
            field=models.CharField(
                choices=[
                    ("interleaved", "Interleaved (side-by-side tasks from the start)"),
                    ("relevance_first", "Relevance first"),
                    ("side_by_side_first", "Side by side first"),
                ],
                default="relevance_first",
                max_length=20,
            ),
        ),
        migrations.AlterField(
            model_name="campaign",
            name="task_order",
            field=models.CharField(
                choices=[
                    ("interleaved", "Interleaved (side-by-side tasks from the start)"),
                    ("relevance_first", "Relevance first"),
                    ("side_by_side_first", "Side by side first"),
                ],
                default="interleaved",
                max_length=20,
            ),
        ),
    ]
