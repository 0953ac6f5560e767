import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

from metrics.compute.aggregation import verdict_counts
from metrics.compute.agreement import (
    MeasurementLevel,
    Undefined,
    fleiss_kappa,
    krippendorff_alpha,
    krippendorff_alphas,
    pairwise_weighted_kappa,
    weighted_kappa,
)
from metrics.compute.labels import VERDICT_SCALE

# A value of the scale nobody uses (1.5) checks that the distances follow the scale, not the data.
SCALE = np.array([-1.0, 0.0, 1.0, 1.5, 2.0, 3.0])
USED_GRADES = np.array([-1.0, 0.0, 1.0, 2.0, 3.0])


def random_reliability_data(seed: int, n_annotators: int = 6, n_tasks: int = 80, missing: float = 0.5):
    """[annotators × tasks] grades with NaN where an annotator did not label a task, and its columns."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(USED_GRADES, n_tasks)
    noise = rng.choice(USED_GRADES, (n_annotators, n_tasks))
    matrix = np.where(rng.random((n_annotators, n_tasks)) < 0.6, truth, noise)
    matrix[rng.random(matrix.shape) < missing] = np.nan
    annotator, task = np.nonzero(~np.isnan(matrix))
    return matrix, task, annotator, matrix[annotator, task]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("level", list(MeasurementLevel))
def test_alpha_matches_the_krippendorff_package(seed, level):
    matrix, task, _, grade = random_reliability_data(seed)
    expected = krippendorff.alpha(matrix, value_domain=SCALE, level_of_measurement=level.value)
    result = krippendorff_alpha(task, grade, n_tasks=matrix.shape[1], scale=SCALE, level=level)
    assert result.value == pytest.approx(expected, abs=1e-9)
    assert result.n_tasks == int(((~np.isnan(matrix)).sum(axis=0) >= 2).sum())


def test_alpha_of_krippendorffs_textbook_example():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability", the 4 coders × 12 units example.
    matrix = np.array(
        [
            [1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan, np.nan, np.nan],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, np.nan, 3],
            [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, np.nan],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, np.nan],
        ]
    )
    annotator, task = np.nonzero(~np.isnan(matrix))
    grade = matrix[annotator, task]
    scale = np.arange(1.0, 6.0)
    nominal = krippendorff_alpha(task, grade, n_tasks=12, scale=scale, level="nominal")
    ordinal = krippendorff_alpha(task, grade, n_tasks=12, scale=scale, level="ordinal")
    interval = krippendorff_alpha(task, grade, n_tasks=12, scale=scale, level="interval")
    assert round(nominal.value, 3) == 0.743
    assert round(ordinal.value, 3) == 0.815
    assert round(interval.value, 3) == 0.849
    assert nominal.n_tasks == 11  # unit 12 has one value


def test_nominal_alpha_on_side_by_side_verdicts():
    rng = np.random.default_rng(4)
    matrix = rng.choice(VERDICT_SCALE, (3, 50), p=[0.2, 0.5, 0.3])
    copied = rng.random(50) < 0.5
    matrix[1, copied] = matrix[0, copied]
    matrix[2, rng.random(50) < 0.3] = np.nan
    annotator, task = np.nonzero(~np.isnan(matrix))
    expected = krippendorff.alpha(matrix, value_domain=VERDICT_SCALE, level_of_measurement="nominal")
    result = krippendorff_alpha(
        task, matrix[annotator, task], n_tasks=50, scale=VERDICT_SCALE, level="nominal"
    )
    assert result.value == pytest.approx(expected, abs=1e-9)


def test_alpha_ignores_tasks_with_a_single_label():
    matrix, task, _, grade = random_reliability_data(5)
    n_tasks = matrix.shape[1]
    with_singletons = krippendorff_alpha(
        np.concatenate([task, [n_tasks, n_tasks + 1]]),
        np.concatenate([grade, [3.0, -1.0]]),
        n_tasks=n_tasks + 2,
        scale=SCALE,
        level="ordinal",
    )
    alone = krippendorff_alpha(task, grade, n_tasks=n_tasks, scale=SCALE, level="ordinal")
    assert with_singletons == alone


def test_alpha_is_one_for_perfect_agreement_and_nan_without_variation():
    task = np.repeat(np.arange(4), 3)
    perfect = krippendorff_alpha(task, np.repeat([0.0, 1.0, 3.0, 3.0], 3), n_tasks=4, scale=SCALE)
    assert perfect.value == 1.0
    assert perfect.ci_low == perfect.ci_high == 1.0
    constant = krippendorff_alpha(task, np.full(12, 2.0), n_tasks=4, scale=SCALE)
    assert np.isnan(constant.value) and np.isnan(constant.ci_low) and constant.n_resamples == 0
    assert constant.undefined is Undefined.NO_VARIATION and perfect.undefined is None
    nothing = krippendorff_alpha([0, 1], [1.0, 2.0], n_tasks=2, scale=SCALE)
    assert np.isnan(nothing.value) and nothing.n_tasks == 0 and nothing.undefined is Undefined.NO_TASKS


@pytest.mark.parametrize("grades", [[2.0, 1.0], [0.0, 3.0, 3.0]])
def test_one_task_gives_no_agreement_figure(grades):
    """On a single task alpha and Fleiss' kappa are 0 or below whatever the labels (alpha 0.000 [0.000,
    0.000] for the grades 2 and 1): undefined, not a measured lack of agreement."""
    task = np.zeros(len(grades), dtype=int)
    alpha = krippendorff_alpha(task, grades, n_tasks=1, scale=SCALE)
    fleiss = fleiss_kappa(np.array([[1, 0, 1]]))
    for figure in (alpha, fleiss):
        assert np.isnan([figure.value, figure.ci_low, figure.ci_high]).all()
        assert (figure.n_tasks, figure.undefined) == (1, Undefined.ONE_TASK)
    assert Undefined.ONE_TASK.reason == "one task only: agreement needs at least two"


def test_alpha_interval_is_the_percentile_interval_over_task_resamples():
    matrix, task, _, grade = random_reliability_data(6, n_tasks=40)
    result = krippendorff_alpha(
        task, grade, n_tasks=40, scale=SCALE, level="interval", n_resamples=200, confidence=0.9, seed=12
    )
    # The documented draw: pairable tasks with the same grade counts are one kind, kinds in the order of
    # their first task; default_rng([seed]) draws how many tasks of each kind, multinomially.
    pairable = matrix[:, (~np.isnan(matrix)).sum(axis=0) >= 2]
    counts = np.stack([(pairable == value).sum(axis=0) for value in SCALE], axis=1)
    _, first, inverse = np.unique(counts, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first)
    shares = [(inverse.ravel() == kind).mean() for kind in order]
    draws = np.random.default_rng([12]).multinomial(pairable.shape[1], shares, size=200)
    # Any task of a kind stands for all of them: alpha depends on a task's grade counts only.
    resampled = [
        krippendorff.alpha(
            pairable[:, np.repeat(first[order], row)], value_domain=SCALE, level_of_measurement="interval"
        )
        for row in draws
    ]
    expected_low, expected_high = np.quantile(resampled, [0.05, 0.95])
    assert result.ci_low == pytest.approx(expected_low, abs=1e-9)
    assert result.ci_high == pytest.approx(expected_high, abs=1e-9)
    assert result.n_resamples == 200


@pytest.mark.parametrize("level", list(MeasurementLevel))
def test_alpha_interval_agrees_with_resampling_tasks_one_by_one(level):
    matrix, task, _, grade = random_reliability_data(7, n_annotators=3, n_tasks=300, missing=0.1)
    result = krippendorff_alpha(task, grade, n_tasks=300, scale=SCALE, level=level, n_resamples=4_000)
    pairable = matrix[:, (~np.isnan(matrix)).sum(axis=0) >= 2]
    draws = np.random.default_rng(1).integers(0, pairable.shape[1], size=(2_000, pairable.shape[1]))
    resampled = [
        krippendorff.alpha(pairable[:, drawn], value_domain=SCALE, level_of_measurement=level.value)
        for drawn in draws
    ]
    spread = np.std(resampled)
    low, high = np.quantile(resampled, [0.025, 0.975])
    assert result.ci_low == pytest.approx(low, abs=0.25 * spread)
    assert result.ci_high == pytest.approx(high, abs=0.25 * spread)


def test_bootstrap_is_seeded():
    _, task, _, grade = random_reliability_data(8)
    first = krippendorff_alpha(task, grade, n_tasks=80, scale=SCALE, n_resamples=300, seed=1)
    again = krippendorff_alpha(task, grade, n_tasks=80, scale=SCALE, n_resamples=300, seed=1)
    other = krippendorff_alpha(task, grade, n_tasks=80, scale=SCALE, n_resamples=300, seed=2)
    assert first == again
    assert (first.ci_low, first.ci_high) != (other.ci_low, other.ci_high)
    assert first.value == other.value
    assert first.ci_low < first.value < first.ci_high


@pytest.mark.parametrize("seed", [3, 8])
def test_alphas_at_several_levels_are_each_levels_alpha(seed):
    """One bootstrap for every level gives each level's own result, its interval included."""
    _, task, _, grade = random_reliability_data(seed)
    levels = [MeasurementLevel.ORDINAL, MeasurementLevel.INTERVAL, MeasurementLevel.NOMINAL]
    together = krippendorff_alphas(task, grade, n_tasks=80, scale=SCALE, levels=levels, n_resamples=300)
    alone = [
        krippendorff_alpha(task, grade, n_tasks=80, scale=SCALE, level=level, n_resamples=300)
        for level in levels
    ]
    assert together == alone
    constant = krippendorff_alphas(
        np.repeat(np.arange(4), 3), np.full(12, 2.0), n_tasks=4, scale=SCALE, levels=levels
    )
    assert [alpha.undefined for alpha in constant] == [Undefined.NO_VARIATION] * 3


def test_interval_narrows_with_more_tasks():
    _, few_task, _, few_grade = random_reliability_data(9, n_tasks=40)
    _, many_task, _, many_grade = random_reliability_data(9, n_tasks=1000)
    few = krippendorff_alpha(few_task, few_grade, n_tasks=40, scale=SCALE)
    many = krippendorff_alpha(many_task, many_grade, n_tasks=1000, scale=SCALE)
    assert many.ci_high - many.ci_low < (few.ci_high - few.ci_low) / 2


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fleiss_matches_statsmodels(seed):
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(5, [0.2, 0.5, 0.3], size=60)
    result = fleiss_kappa(counts)
    assert result.value == pytest.approx(statsmodels_fleiss_kappa(counts, method="fleiss"), abs=1e-9)
    assert result.n_tasks == 60


def test_fleiss_interval_agrees_with_resampling_tasks_one_by_one():
    counts = np.random.default_rng(5).multinomial(3, [0.2, 0.5, 0.3], size=400)
    result = fleiss_kappa(counts, n_resamples=4_000)
    draws = np.random.default_rng(1).integers(0, 400, size=(2_000, 400))
    resampled = [statsmodels_fleiss_kappa(counts[drawn]) for drawn in draws]
    spread = np.std(resampled)
    low, high = np.quantile(resampled, [0.025, 0.975])
    assert result.ci_low == pytest.approx(low, abs=0.25 * spread)
    assert result.ci_high == pytest.approx(high, abs=0.25 * spread)


def test_fleiss_of_the_textbook_example():
    # Fleiss (1971) as on Wikipedia: 10 subjects, 14 raters, 5 categories, kappa 0.210.
    counts = np.array(
        [
            [0, 0, 0, 0, 14],
            [0, 2, 6, 4, 2],
            [0, 0, 3, 5, 6],
            [0, 3, 9, 2, 0],
            [2, 2, 8, 1, 1],
            [7, 7, 0, 0, 0],
            [3, 2, 6, 3, 0],
            [2, 5, 3, 2, 2],
            [6, 5, 2, 1, 0],
            [0, 2, 2, 3, 7],
        ]
    )
    assert round(fleiss_kappa(counts).value, 3) == 0.210


def test_fleiss_keeps_the_tasks_with_the_most_common_number_of_raters():
    rng = np.random.default_rng(3)
    three = rng.multinomial(3, [0.3, 0.4, 0.3], size=30)
    four = rng.multinomial(4, [0.3, 0.4, 0.3], size=10)
    one = np.array([[1, 0, 0], [0, 0, 1]] * 30)
    counts = np.concatenate([three, four, one])
    result = fleiss_kappa(counts)
    assert result.value == pytest.approx(statsmodels_fleiss_kappa(three), abs=1e-9)
    assert result.n_tasks == 30
    # A tie between 3 and 4 raters (10 tasks each) keeps the tasks with 4.
    tied = fleiss_kappa(np.concatenate([three[:10], four]))
    assert tied.value == pytest.approx(statsmodels_fleiss_kappa(four), abs=1e-9)


def test_fleiss_on_verdict_counts():
    task = np.repeat(np.arange(5), 3)
    verdict = [1, 1, 1, 0, 0, 0, -1, -1, -1, 1, 1, 1, 0, 0, 0]
    result = fleiss_kappa(verdict_counts(task, verdict, n_tasks=5))
    assert result.value == 1.0


def test_fleiss_without_pairable_tasks_is_nan():
    result = fleiss_kappa(np.array([[1, 0], [0, 1]]))
    assert np.isnan(result.value) and result.n_tasks == 0


@pytest.mark.parametrize("seed", [0, 1])
def test_pairwise_kappa_matches_scikit_learn(seed):
    matrix, task, annotator, grade = random_reliability_data(seed, missing=0.3)
    pairs = pairwise_weighted_kappa(task, annotator, grade, n_tasks=matrix.shape[1], scale=SCALE)
    assert [(pair.annotator_a, pair.annotator_b) for pair in pairs] == [
        (a, b) for a in range(6) for b in range(a + 1, 6)
    ]
    for pair in pairs:
        first, second = matrix[pair.annotator_a], matrix[pair.annotator_b]
        shared = ~np.isnan(first) & ~np.isnan(second)
        expected = cohen_kappa_score(first[shared], second[shared], labels=SCALE, weights="quadratic")
        assert pair.kappa.value == pytest.approx(expected, abs=1e-9)
        assert pair.kappa.n_tasks == shared.sum()


def test_pairwise_kappa_interval_agrees_with_resampling_tasks_one_by_one():
    matrix, task, annotator, grade = random_reliability_data(2, n_annotators=2, n_tasks=300, missing=0.0)
    (pair,) = pairwise_weighted_kappa(task, annotator, grade, n_tasks=300, scale=SCALE, n_resamples=4_000)
    draws = np.random.default_rng(1).integers(0, 300, size=(4_000, 300))
    draws[0] = np.arange(300)  # the sample itself: the formula below gives the point estimate
    first, second = np.searchsorted(SCALE, matrix[0])[draws], np.searchsorted(SCALE, matrix[1])[draws]
    # Quadratic weights on scale positions: sum(w·E) / n = mean(a²) + mean(b²) - 2 mean(a) mean(b).
    expected = (first**2).mean(1) + (second**2).mean(1) - 2 * first.mean(1) * second.mean(1)
    resampled = 1 - ((first - second) ** 2).mean(1) / expected
    assert resampled[0] == pytest.approx(pair.kappa.value, abs=1e-9)
    spread = np.std(resampled)
    low, high = np.quantile(resampled, [0.025, 0.975])
    assert pair.kappa.ci_low == pytest.approx(low, abs=0.25 * spread)
    assert pair.kappa.ci_high == pytest.approx(high, abs=0.25 * spread)


def test_pairwise_kappa_skips_pairs_without_shared_tasks_and_ignores_other_annotators():
    task = np.array([0, 0, 1, 1, 2, 2, 3, 3, 4])
    annotator = np.array([0, 1, 0, 1, 0, 1, 0, 1, 2])
    grade = np.array([0.0, 0.0, 1.0, 2.0, 3.0, 3.0, -1.0, 0.0, 1.0])
    pairs = pairwise_weighted_kappa(task, annotator, grade, n_tasks=5, scale=SCALE, n_resamples=100)
    assert [(pair.annotator_a, pair.annotator_b) for pair in pairs] == [(0, 1)]
    # Annotator 2 joining tasks 0 and 1 adds pairs but leaves pair (0, 1), interval included, as it was.
    more = pairwise_weighted_kappa(
        np.concatenate([task, [0, 1]]),
        np.concatenate([annotator, [2, 2]]),
        np.concatenate([grade, [3.0, 3.0]]),
        n_tasks=5,
        scale=SCALE,
        n_resamples=100,
    )
    assert [(pair.annotator_a, pair.annotator_b) for pair in more] == [(0, 1), (0, 2), (1, 2)]
    assert more[0] == pairs[0]


@pytest.mark.parametrize("grades", [[2.0, 1.0], [2.0, 2.0]])
def test_pairwise_kappa_of_two_annotators_on_one_task_is_undefined(grades):
    """Two annotators sharing one task showed κ 0.00 [0.00–0.00] on the quality page."""
    (pair,) = pairwise_weighted_kappa([0, 0], [0, 1], grades, n_tasks=1, scale=SCALE)
    assert np.isnan([pair.kappa.value, pair.kappa.ci_low, pair.kappa.ci_high]).all()
    assert (pair.kappa.n_tasks, pair.kappa.undefined) == (1, Undefined.ONE_TASK)


def test_pairwise_kappa_is_undefined_when_an_annotator_gives_one_grade_only():
    # Annotator 0 grades every shared task 3: scikit-learn says 0 however annotator 1 grades.
    first, second = np.full(6, 3.0), np.array([3.0, 3.0, 2.0, 3.0, 0.0, 3.0])
    assert cohen_kappa_score(first, second, labels=SCALE, weights="quadratic") == 0.0
    task = np.tile(np.arange(6), 2)
    annotator = np.repeat([0, 1], 6)
    (pair,) = pairwise_weighted_kappa(
        task, annotator, np.concatenate([first, second]), n_tasks=6, scale=SCALE
    )
    assert np.isnan(pair.kappa.value) and pair.kappa.undefined is Undefined.NO_VARIATION
    # A resample where one annotator happens to give one grade only is left out of the interval too.
    varied = np.array([3.0, 2.0, 2.0, 3.0, 0.0, 3.0])
    (pair,) = pairwise_weighted_kappa(
        task, annotator, np.concatenate([varied, second]), n_tasks=6, scale=SCALE
    )
    assert pair.kappa.undefined is None and pair.kappa.n_resamples < 1000


def test_pairwise_kappa_does_not_depend_on_which_annotator_is_first():
    matrix, task, annotator, grade = random_reliability_data(3, n_annotators=2, missing=0.2)
    swapped = pairwise_weighted_kappa(task, 1 - annotator, grade, n_tasks=80, scale=SCALE)
    pairs = pairwise_weighted_kappa(task, annotator, grade, n_tasks=80, scale=SCALE)
    assert swapped[0].kappa.value == pytest.approx(pairs[0].kappa.value, abs=1e-12)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: krippendorff_alpha([0], [1.0], n_tasks=1, scale=SCALE, level="ratio"),
            "level must be one of",
        ),
        (lambda: krippendorff_alpha([0], [0.5], n_tasks=1, scale=SCALE), "grade holds 0.5"),
        (lambda: krippendorff_alpha([0], [1.0], n_tasks=1, scale=SCALE, n_resamples=0), "n_resamples"),
        (lambda: krippendorff_alpha([0], [1.0], n_tasks=1, scale=SCALE, confidence=1.0), "confidence"),
        (lambda: krippendorff_alpha([0], [1.0], n_tasks=1, scale=SCALE, seed=-1), "seed"),
        (lambda: fleiss_kappa([1, 2, 3]), "counts must be a"),
        (lambda: fleiss_kappa([[1, -1]]), "non-negative integers"),
        (lambda: fleiss_kappa([[1.5, 2]]), "non-negative integers"),
        (
            lambda: pairwise_weighted_kappa([0, 0], [1, 1], [1.0, 2.0], n_tasks=1, scale=SCALE),
            "more than once",
        ),
    ],
)
def test_invalid_input_is_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_weighted_kappa_matches_sklearn():
    rng = np.random.default_rng(5)
    a = rng.choice(USED_GRADES, 200)
    b = np.where(rng.random(200) < 0.6, a, rng.choice(USED_GRADES, 200))
    result = weighted_kappa(a, b, scale=SCALE, n_resamples=200)
    assert result.value == pytest.approx(cohen_kappa_score(a, b, labels=SCALE, weights="quadratic"))
    assert result.n_tasks == 200 and result.ci_low < result.value < result.ci_high


def test_weighted_kappa_draws_a_cluster_whole():
    # Every item in one cluster: each resample is the data itself, so the interval is a point.
    a, b = [0.0, 1.0, 2.0, 3.0, 1.0], [0.0, 1.0, 3.0, 3.0, 2.0]
    single = weighted_kappa(a, b, scale=USED_GRADES, cluster=[0, 0, 1, 1, 1], n_resamples=100)
    assert single.n_tasks == 2
    whole = weighted_kappa(a + a, b + b, scale=USED_GRADES, cluster=[0] * 5 + [1] * 5, n_resamples=100)
    assert whole.ci_low == pytest.approx(whole.value) and whole.ci_high == pytest.approx(whole.value)


def test_weighted_kappa_is_undefined_on_one_cluster():
    result = weighted_kappa([0.0, 1.0], [0.0, 1.0], scale=USED_GRADES, cluster=[3, 3])
    assert result.undefined is Undefined.ONE_TASK
