# Its own migration: on PostgreSQL a column cannot become NOT NULL in the transaction that filled it while
# foreign-key checks of those updates are still pending.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0004_lease_counters'),
    ]

    operations = [
        migrations.AlterField(
            model_name='assignment',
            name='campaign',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='assignments', to='annotation.campaign'),
        ),
    ]
