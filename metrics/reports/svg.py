"""Small inline SVG charts for the printable HTML report: no script, so they print and archive as they are."""

import math
from html import escape

import numpy as np
from django.utils.translation import gettext as _

from metrics.reports.palette import PALETTE

MODEL_COLORS = PALETTE["models"]
GOOD, SAME, BAD = PALETTE["good"], PALETTE["same"], PALETTE["bad"]
SCORE, WHISKER, AXIS, GRID, MUTED = (PALETTE[name] for name in ("score", "whisker", "axis", "grid", "muted"))
# Chinese labels (the reader's language, the campaign's names) need a CJK font: no tofu in any browser.
FONT_FAMILY = (
    "system-ui, -apple-system, 'Segoe UI', 'PingFang SC', 'Microsoft YaHei', 'Noto Sans CJK SC', "
    "'Source Han Sans SC', 'WenQuanYi Micro Hei', sans-serif"
)
FONT = f'font-family="{FONT_FAMILY}" font-size="12" fill="{PALETTE["ink"]}"'


def _svg(width: int, height: int, body: list[str], label: str, *, grow: bool = True) -> str:
    """An SVG as wide as its container, or (`grow` False) at most its own width: a small chart's text
    would otherwise swell with a wide page."""
    size = 'width="100%"' if grow else f'width="100%" style="max-width: {width}px"'
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" {size} '
        f'role="img" aria-label="{escape(label)}" {FONT}>' + "".join(body) + "</svg>"
    )


def _text(x: float, y: float, text: str, anchor: str = "middle", extra: str = "") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" {extra}>{escape(text)}</text>'


def means_chart(measures: list[str], models: list[tuple[str, list[float], list[tuple[float, float]]]]) -> str:
    """Grouped bars: each model's mean of each measure, with its 95% interval as an error bar (scale 0..1)."""
    width, height, left, bottom, top = 720, 280, 44, 52, 14
    plot_width, plot_height = width - left - 10, height - bottom - top
    group = plot_width / max(len(measures), 1)
    bar = min(28.0, group * 0.8 / max(len(models), 1))
    body = []
    for tick in np.linspace(0, 1, 6):
        y = top + plot_height * (1 - tick)
        body.append(f'<line x1="{left}" x2="{width - 10}" y1="{y:.1f}" y2="{y:.1f}" stroke="{GRID}"/>')
        body.append(_text(left - 6, y + 4, f"{tick:.1f}", "end"))
    for m, measure in enumerate(measures):
        center = left + group * (m + 0.5)
        body.append(_text(center, height - bottom + 18, measure))
        for i, (_name, means, intervals) in enumerate(models):
            x = center + (i - len(models) / 2) * bar
            mean, (low, high) = means[m], intervals[m]
            if math.isnan(mean):
                continue
            color = MODEL_COLORS[i % len(MODEL_COLORS)]
            y = top + plot_height * (1 - mean)
            body.append(
                f'<rect x="{x + 2:.1f}" y="{y:.1f}" width="{bar - 4:.1f}" '
                f'height="{top + plot_height - y:.1f}" '
                f'fill="{color}"><title>{escape(models[i][0])} {escape(measure)}: {mean:.4f}</title></rect>'
            )
            if not (math.isnan(low) or math.isnan(high)):
                xc = x + bar / 2
                y_low, y_high = top + plot_height * (1 - low), top + plot_height * (1 - high)
                body.append(
                    f'<path d="M{xc - 4:.1f} {y_high:.1f}h8M{xc:.1f} {y_high:.1f}V{y_low:.1f}M{xc - 4:.1f} '
                    f'{y_low:.1f}h8" stroke="{WHISKER}" stroke-width="1.2" fill="none"/>'
                )
    x = left
    for i, (name, _means, _intervals) in enumerate(models):
        color = MODEL_COLORS[i % len(MODEL_COLORS)]
        body.append(f'<rect x="{x}" y="{height - 18}" width="12" height="12" fill="{color}"/>')
        body.append(_text(x + 17, height - 8, name, "start"))
        x += 30 + 7.5 * len(name)
    return _svg(width, height, body, _("Mean of each measure per model, with 95%% intervals") % {})


def gsb_chart(good: int, same: int, bad: int, score: float, low: float, high: float) -> str:
    """A stacked Good / Same / Bad bar, and the GSB score with its interval on a −1..1 axis."""
    width, left, right = 720, 10, 10
    plot = width - left - right
    total = good + same + bad
    body = []
    x = float(left)
    for count, color, name in ((good, GOOD, _("Good")), (same, SAME, _("Same")), (bad, BAD, _("Bad"))):
        share = count / total if total else 0.0
        if share:
            body.append(
                f'<rect x="{x:.1f}" y="8" width="{plot * share:.1f}" height="34" fill="{color}">'
                f"<title>{name}: {count}</title></rect>"
            )
            if plot * share > 70:
                body.append(
                    _text(x + plot * share / 2, 30, f"{name} {count} ({share:.0%})", extra='fill="#fff"')
                )
        x += plot * share
    if not total:
        body.append(_text(width / 2, 30, _("No side-by-side verdicts yet"), extra=f'fill="{MUTED}"'))

    def at(value: float) -> float:
        return left + plot * (value + 1) / 2

    axis_y = 82
    body.append(f'<line x1="{left}" x2="{width - right}" y1="{axis_y}" y2="{axis_y}" stroke="{AXIS}"/>')
    for tick in (-1, -0.5, 0, 0.5, 1):
        body.append(
            f'<line x1="{at(tick):.1f}" x2="{at(tick):.1f}" y1="{axis_y - 4}" y2="{axis_y + 4}" '
            f'stroke="{AXIS}"/>'
        )
        anchor = "start" if tick == -1 else "end" if tick == 1 else "middle"
        body.append(_text(at(tick), axis_y + 18, f"{tick:+g}" if tick else "0", anchor))
    if not math.isnan(score):
        if not (math.isnan(low) or math.isnan(high)):
            body.append(
                f'<line x1="{at(low):.1f}" x2="{at(high):.1f}" y1="{axis_y}" y2="{axis_y}" stroke="{SCORE}" '
                f'stroke-width="5" stroke-linecap="round"/>'
            )
        body.append(
            f'<circle cx="{at(score):.1f}" cy="{axis_y}" r="6" fill="{SCORE}" '
            'stroke="#fff" stroke-width="2"/>'
        )
        body.append(_text(at(score), axis_y - 12, f"GSB {score:+.3f}", extra='font-weight="600"'))
    return _svg(width, 112, body, _("Good, Same and Bad verdicts, and GSB with its 95%% interval") % {})


def histogram_chart(deltas: np.ndarray, measure: str, bins: int = 21) -> str:
    """Histogram of per-query differences (experimental − online), bins symmetric around 0."""
    width, height, left, bottom, top = 720, 220, 40, 40, 12
    plot_width, plot_height = width - left - 10, height - bottom - top
    body = []
    if deltas.size == 0:
        return _svg(width, 60, [_text(width / 2, 34, _("No evaluated queries yet"))], _("No data"))
    reach = float(np.abs(deltas).max()) or 0.1
    queries = _("%(count)s queries")
    counts, edges = np.histogram(deltas, bins=bins, range=(-reach, reach))
    tallest = max(int(counts.max()), 1)
    step = plot_width / bins
    for i, count in enumerate(counts):
        bar_height = plot_height * count / tallest
        center = (edges[i] + edges[i + 1]) / 2
        color = GOOD if edges[i] >= 0 else BAD if edges[i + 1] <= 0 else SAME
        body.append(
            f'<rect x="{left + i * step + 1:.1f}" y="{top + plot_height - bar_height:.1f}" '
            f'width="{step - 2:.1f}" '
            f'height="{bar_height:.1f}" fill="{color}">'
            f"<title>{center:+.3f}: {escape(queries % {'count': count})}</title></rect>"
        )
    for tick in np.linspace(-reach, reach, 5):
        x = left + plot_width * (tick + reach) / (2 * reach)
        body.append(_text(x, height - bottom + 16, f"{tick:+.2f}" if abs(tick) > 1e-12 else "0"))
    body.append(_text(left - 6, top + 10, str(tallest), "end"))
    body.append(_text(left - 6, top + plot_height, "0", "end"))
    body.append(
        f'<line x1="{left}" x2="{width - 10}" y1="{top + plot_height}" y2="{top + plot_height}" '
        f'stroke="{AXIS}"/>'
    )
    body.append(
        _text(
            left + plot_width / 2,
            height - 6,
            _("Δ %(measure)s per query (experimental − online)") % {"measure": measure},
        )
    )
    return _svg(
        width, height, body, _("Histogram of per-query %(measure)s differences") % {"measure": measure}
    )


def propensity_chart(data: dict) -> str:
    """θ_k / θ_1 per position: intervention harvesting with its 95% interval, EM beside it (scale 0..1)."""
    width, height, left, bottom, top = 520, 240, 44, 40, 14
    plot_width, plot_height = width - left - 14, height - bottom - top
    positions = data["positions"]
    step = plot_width / max(len(positions), 1)
    body = []
    for tick in np.linspace(0, 1, 6):
        y = top + plot_height * (1 - tick)
        body.append(f'<line x1="{left}" x2="{width - 14}" y1="{y:.1f}" y2="{y:.1f}" stroke="{GRID}"/>')
        body.append(_text(left - 6, y + 4, f"{tick:.1f}", "end"))

    def place(value: float) -> float:
        return top + plot_height * (1 - min(max(value, 0.0), 1.0))

    for i, position in enumerate(positions):
        body.append(_text(left + step * (i + 0.5), height - bottom + 16, str(position)))
    for series, color, offset in (
        ("intervention_harvesting", MODEL_COLORS[0], -3),
        ("position_based_em", MODEL_COLORS[1], 3),
    ):
        curve = data[series]
        points = []
        for i, position in enumerate(positions):
            x = left + step * (i + 0.5) + offset
            value, low, high = curve["propensity"][i], curve["ci95_low"][i], curve["ci95_high"][i]
            if value is None:
                continue
            points.append(f"{x:.1f},{place(value):.1f}")
            if low is not None and high is not None:
                body.append(
                    f'<path d="M{x:.1f} {place(high):.1f}V{place(low):.1f}" stroke="{WHISKER}" fill="none"/>'
                )
            body.append(
                f'<circle cx="{x:.1f}" cy="{place(value):.1f}" r="3.5" fill="{color}">'
                f"<title>{escape(series)} {escape(_('position %(position)s') % {'position': position})}: "
                f"{value:.3f}</title></circle>"
            )
        if points:
            body.append(f'<polyline points="{" ".join(points)}" fill="none" stroke="{color}"/>')
    body.append(_text(left + plot_width / 2, height - 6, _("position"), extra=f'fill="{MUTED}"'))
    return _svg(
        width, height, body, _("Examination propensity per position, relative to position 1"), grow=False
    )


def offline_online_chart(points: list[dict], offline: str, online: str) -> str:
    """Per query, Δ offline (x) against Δ online (y), both experimental − online, on symmetric axes."""
    width, height, margin = 420, 320, 46
    size_x, size_y = width - 2 * margin, height - 2 * margin
    xs = [point["offline_delta"] for point in points if point["offline_delta"] is not None]
    ys = [point["online_delta"] for point in points if point["online_delta"] is not None]
    reach_x = max([abs(value) for value in xs] + [1e-6]) * 1.1
    reach_y = max([abs(value) for value in ys] + [1e-6]) * 1.1
    cx, cy = margin + size_x / 2, margin + size_y / 2
    body = [
        f'<line x1="{margin}" x2="{width - margin}" y1="{cy:.1f}" y2="{cy:.1f}" stroke="{AXIS}"/>',
        f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{margin}" y2="{height - margin}" stroke="{AXIS}"/>',
        _text(width - margin, cy - 6, f"+{reach_x:.2f}", "end", f'fill="{MUTED}"'),
        _text(margin, cy - 6, f"−{reach_x:.2f}", "start", f'fill="{MUTED}"'),
        _text(cx + 4, margin + 10, f"+{reach_y:.3f}", "start", f'fill="{MUTED}"'),
        _text(cx + 4, height - margin - 4, f"−{reach_y:.3f}", "start", f'fill="{MUTED}"'),
        _text(width / 2, height - 12, _("Δ %(measure)s (judges)") % {"measure": offline}),
        _text(
            14,
            height / 2,
            _("Δ %(metric)s (users)") % {"metric": online},
            extra=f'transform="rotate(-90 14 {height / 2:.1f})"',
        ),
    ]
    for point in points:
        if point["offline_delta"] is None or point["online_delta"] is None:
            continue
        x = cx + point["offline_delta"] / reach_x * size_x / 2
        y = cy - point["online_delta"] / reach_y * size_y / 2
        disagree = point["offline_delta"] * point["online_delta"] < 0
        color = MODEL_COLORS[1] if disagree else MODEL_COLORS[0]
        body.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{color}" fill-opacity="0.8">'
            f"<title>{escape(point['query'])}: Δ {escape(offline)} {point['offline_delta']:+.3f}, "
            f"Δ {escape(online)} {point['online_delta']:+.4f}</title></circle>"
        )
    label = _("Per query: Δ %(measure)s against Δ %(metric)s") % {"measure": offline, "metric": online}
    return _svg(width, height, body, label, grow=False)
