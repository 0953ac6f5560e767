"""The chart colours, defined once: the SVG charts of the HTML report use them, and the Plotly charts of the
pages get them through `{% chart_palette %}` (static/judgeboard/plotting.js reads it)."""

PALETTE = {
    "models": ["#6b7280", "#1f5fbf", "#c2410c", "#7c3aed", "#0f766e"],  # one per model, in report order
    "good": "#1e7d3a",
    "same": "#9ca3af",
    "bad": "#b42318",
    "grades": ["#b42318", "#e8a33d", "#7fb069", "#1e7d3a", "#1f5fbf", "#6b7280"],  # lowest grade first
    "score": "#1f5fbf",  # the GSB score and its interval, the Δ histogram
    "whisker": "#111827",  # error bars, the zero line of the Δ histogram
    "zero": "#6b7280",  # the zero line of the GSB axis
    "axis": "#9ca3af",
    "grid": "#e5e7eb",
    "ink": "#1b1f24",
    "muted": "#5b6470",
}
