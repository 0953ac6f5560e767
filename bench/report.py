"""Time the full JSON launch report of a large campaign against a bare fetch of its judgment rows.

    .venv/bin/python bench/report.py [--queries 10000] [--repeat 3] [--profile] [--database NAME] [--keep]

Builds, in its own database (--database, default judgeboard_bench_report, on BENCH_PG's server; created and
dropped here unless --keep, and reused when --keep left one with the same number of queries), a
campaign of 10,000 queries, 2 models ranking the same 20 pooled documents per query in different orders,
3 annotators grading every pooled pair (600,000 judgments) and judging every side-by-side task (30,000
verdicts), written with COPY. Then, in the same process and alternating, it times:

- the bare fetch: one SQL query returning the campaign's judgment rows (task, annotator, grade), fetchall;
- the report: `launch_report_build` + rendering it as JSON, what `manage.py launch_report --format json` does,
  its figures computed (the shared cache, where they would be kept, is emptied before each).

Both run in production mode (DEBUG=0, a random SECRET_KEY): no query log on either side.

Target: report ≤ 2 × bare fetch (medians of --repeat runs).
"""

import argparse
import os
import secrets
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SERVER = os.environ.get("BENCH_PG", "postgres://postgres@127.0.0.1:5432")
DATABASE = "judgeboard_bench_report"
POOL = 20
ANNOTATORS = 3
GSB_DEPTH = 5


def psql(sql: str, database: str = "postgres") -> str:
    return subprocess.run(
        ["psql", f"{SERVER}/{database}", "-qAt", "-v", "ON_ERROR_STOP=1", "-c", sql],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def copy_rows(cursor, table: str, columns: list[str], rows) -> None:
    with cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def build_campaign(n_queries: int):
    """A campaign with latent true grades; the experimental model ranks closer to the truth than online."""
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction

    from annotation.models import SHUFFLE_KEYS, Campaign, RankingModel

    rng = np.random.default_rng(5)
    now = datetime.now(UTC)
    with transaction.atomic():
        campaign = Campaign.objects.create(
            name="bench report",
            overlap=ANNOTATORS,
            gsb_overlap=ANNOTATORS,
            pool_depth=POOL,
            gsb_depth=GSB_DEPTH,
        )
        online = RankingModel.objects.create(campaign=campaign, name="online", role="online")
        experimental = RankingModel.objects.create(campaign=campaign, name="exp", role="experimental")
        User = get_user_model()
        annotators = [User.objects.create(username=f"bench{a}").pk for a in range(ANNOTATORS)]

        n_pairs = n_queries * POOL
        query = np.repeat(np.arange(n_queries), POOL)
        truth = rng.choice(4, size=n_pairs, p=[0.45, 0.3, 0.15, 0.1]).reshape(n_queries, POOL)
        orders = {
            online.pk: np.argsort(-(truth + rng.normal(0, 1.2, truth.shape)), axis=1),
            experimental.pk: np.argsort(-(truth + rng.normal(0, 1.0, truth.shape)), axis=1),
        }
        raw = connection.connection.cursor()
        # Every task has all its labels (ANNOTATORS slots spent) and a random place in the hand-out order;
        # its own generator leaves the campaign as before.
        shuffle = np.random.default_rng(6).integers(0, SHUFFLE_KEYS, n_pairs)
        segments = np.array(["head", "torso", "tail"])[rng.integers(0, 3, n_queries)]
        copy_rows(
            raw,
            "annotation_query",
            ["id", "campaign_id", "external_id", "text", "description", "segment", "weight"],
            ((q + 1, campaign.pk, f"q{q}", f"query {q}", "", segments[q], 1.0) for q in range(n_queries)),
        )
        copy_rows(
            raw,
            "annotation_document",
            ["id", "campaign_id", "external_id", "title", "url", "body"],
            ((d + 1, campaign.pk, f"d{d}", f"Document {d}", "", "") for d in range(n_pairs)),
        )
        # One list per model and query: document ids as little-endian int64 (annotation.models.Ranking).
        copy_rows(
            raw,
            "annotation_ranking",
            ["model_id", "query_id", "documents"],
            (
                (model_pk, q + 1, (order[q] + q * POOL + 1).astype("<i8").tobytes())
                for model_pk, order in orders.items()
                for q in range(n_queries)
            ),
        )
        copy_rows(
            raw,
            "annotation_relevancetask",
            ["id", "campaign_id", "query_id", "document_id", "slots_spent", "shuffle_key"],
            (
                (t + 1, campaign.pk, int(query[t]) + 1, t + 1, ANNOTATORS, int(shuffle[t]))
                for t in range(n_pairs)
            ),
        )
        flat_truth = truth.ravel()
        grade = np.where(
            rng.random((ANNOTATORS, n_pairs)) < 0.7,
            flat_truth,
            np.clip(flat_truth + rng.choice([-1, 1], size=(ANNOTATORS, n_pairs)), 0, 3),
        )
        copy_rows(
            raw,
            "annotation_judgment",
            ["campaign_id", "task_id", "annotator_id", "grade", "comment", "created_at", "updated_at"],
            (
                (campaign.pk, t + 1, annotators[a], int(grade[a, t]), "", now, now)
                for a in range(ANNOTATORS)
                for t in range(n_pairs)
            ),
        )
        discount = 1 / np.log2(np.arange(2, GSB_DEPTH + 2))
        top = {pk: np.take_along_axis(truth, order[:, :GSB_DEPTH], axis=1) for pk, order in orders.items()}
        gap = ((2.0 ** top[experimental.pk] - 1) @ discount) - ((2.0 ** top[online.pk] - 1) @ discount)
        identical = (orders[online.pk][:, :GSB_DEPTH] == orders[experimental.pk][:, :GSB_DEPTH]).all(axis=1)
        copy_rows(
            raw,
            "annotation_sidebysidetask",
            [
                "id",
                "campaign_id",
                "query_id",
                "experimental_model_id",
                "lists_identical",
                "gold_verdict",
                "slots_spent",
                "shuffle_key",
                "lists_hash",
            ],
            (
                (
                    q + 1,
                    campaign.pk,
                    q + 1,
                    experimental.pk,
                    bool(identical[q]),
                    "",
                    ANNOTATORS,
                    int(shuffle[q]),
                    "",
                )
                for q in range(n_queries)
            ),
        )
        noisy_gap = gap[None, :] + rng.normal(0, 1.5, (ANNOTATORS, n_queries))
        verdict = np.where(noisy_gap > 0.5, "good", np.where(noisy_gap < -0.5, "bad", "same"))
        copy_rows(
            raw,
            "annotation_preference",
            [
                "campaign_id",
                "task_id",
                "annotator_id",
                "experimental_on_left",
                "verdict",
                "comment",
                "created_at",
                "updated_at",
            ],
            (
                (campaign.pk, q + 1, annotators[a], bool(rng.random() < 0.5), verdict[a, q], "", now, now)
                for a in range(ANNOTATORS)
                for q in range(n_queries)
            ),
        )
        raw.close()
    with connection.cursor() as cursor:
        for table in ("query", "document", "relevancetask", "sidebysidetask"):
            cursor.execute(
                f"SELECT setval(pg_get_serial_sequence('annotation_{table}', 'id'), "
                f"(SELECT max(id) FROM annotation_{table}))"
            )
        cursor.execute("ANALYZE")
    return campaign


def bare_fetch(campaign_pk: int) -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT task_id, annotator_id, grade FROM annotation_judgment WHERE campaign_id = %s",
            [campaign_pk],
        )
        return len(cursor.fetchall())


def full_report(campaign, agreement: bool = True) -> int:
    from metrics.reports import report_render
    from metrics.selectors.launch import launch_report_build

    return len(report_render(launch_report_build(campaign=campaign, agreement=agreement), "json"))


def evaluation_fetch(campaign) -> int:
    from metrics.selectors.evaluation_data import campaign_evaluation_data

    return campaign_evaluation_data(campaign=campaign).relevance.judgment_task.size


def quality_page(campaign) -> int:
    """What the quality page reads and computes (agreement with intervals, every annotator's figures)."""
    from metrics.selectors.quality import campaign_quality

    return len(campaign_quality(campaign=campaign).annotators)


def timed(function, *args) -> tuple[float, object]:
    start = time.perf_counter()
    result = function(*args)
    return time.perf_counter() - start, result


def computed(function, *args) -> tuple[float, object]:
    """`timed`, the shared cache emptied first: the report and the quality page keep their figures there,
    and from the second round on would read them instead of computing, which a new label makes them do."""
    from django.core.cache import cache

    cache.clear()
    return timed(function, *args)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--profile", action="store_true", help="print the report's cProfile top 25 once (after a warm-up run)"
    )
    parser.add_argument("--database", default=DATABASE, help="database to build in (its own: it is dropped)")
    parser.add_argument("--keep", action="store_true", help="keep the database, and reuse a kept one")
    args = parser.parse_args()
    database = args.database
    # Production mode, so that neither side pays for DEBUG's query log.
    os.environ.update(
        {"DATABASE_URL": f"{SERVER}/{database}", "DEBUG": "0", "SECRET_KEY": secrets.token_urlsafe(50)}
    )
    kept = args.keep and psql(f"SELECT 1 FROM pg_database WHERE datname = '{database}'").strip() == "1"
    if not kept:
        psql(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
        psql(f"CREATE DATABASE {database}")
    try:
        subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, check=True)
        sys.path.insert(0, str(ROOT))
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        import django

        django.setup()
        from annotation.models import Campaign

        campaign = Campaign.objects.filter(name="bench report").first() if kept else None
        if campaign is None or campaign.queries.count() != args.queries:
            if campaign is not None:
                raise SystemExit(f"{database} holds another campaign size; drop it or use another --database")
            build_seconds, campaign = timed(build_campaign, args.queries)
            print(f"built in {build_seconds:.1f} s: {args.queries:,} queries")
        else:
            print(f"reusing the campaign in {database}: {args.queries:,} queries")
        if args.profile:
            import cProfile
            import pstats

            from django.core.cache import cache

            full_report(campaign)  # imports and first-use costs out of the profile
            cache.clear()  # the profiled report computes its figures
            profiler = cProfile.Profile()
            profiler.runcall(full_report, campaign)
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
        fetch_times, data_times, core_times, report_times, quality_times = [], [], [], [], []
        for _ in range(args.repeat):
            seconds, n_rows = timed(bare_fetch, campaign.pk)
            fetch_times.append(seconds)
            data_times.append(timed(evaluation_fetch, campaign)[0])
            core_times.append(computed(full_report, campaign, False)[0])
            seconds, n_bytes = computed(full_report, campaign)
            report_times.append(seconds)
            quality_times.append(computed(quality_page, campaign)[0])
        from django.db import connection

        connection.close()
    finally:
        if not args.keep:
            psql(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
    fetch, report = statistics.median(fetch_times), statistics.median(report_times)
    data, core = statistics.median(data_times), statistics.median(core_times)
    print(f"judgment rows: {n_rows:,}; JSON report: {n_bytes / 1e6:.1f} MB; medians of {args.repeat}")
    print(f"bare fetch of the judgment rows: {fetch:.2f} s")
    print(f"campaign_evaluation_data (every input of the report): {data:.2f} s ({data / fetch:.2f}x)")
    print(f"JSON report without the agreement section: {core:.2f} s ({core / fetch:.2f}x)")
    print(f"full JSON launch report: {report:.2f} s")
    print(f"ratio (report / bare fetch): {report / fetch:.2f}")
    quality = statistics.median(quality_times)
    print(f"quality page's read and figures: {quality:.2f} s")
    print(f"ratio (quality / bare fetch): {quality / fetch:.2f}")


if __name__ == "__main__":
    main()
