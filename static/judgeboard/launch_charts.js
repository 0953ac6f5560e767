// Launch comparison charts (Plotly from static): nDCG per model with intervals, GSB, per-query Δ histogram.
(() => {
  "use strict";
  const plotting = window.judgeboardPlotting;
  const data = plotting && plotting.readJson("launch-charts");
  if (!data || !window.Plotly) return;
  const { palette, plain } = plotting;
  const font = { family: plotting.fontFamily, size: 13, color: palette.ink };
  const config = { displayModeBar: false, responsive: true };
  const layout = (extra) => ({
    margin: { l: 50, r: 16, t: 10, b: 40 }, font, height: 300,
    paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)",
    ...extra,
  });

  const means = document.getElementById("chart-means");
  if (means) {
    const traces = data.models.map((model, index) => ({
      type: "bar", name: plain(model.name), x: data.measures, y: model.means,
      marker: { color: palette.models[index % palette.models.length] },
      error_y: {
        type: "data", symmetric: false, color: palette.whisker, thickness: 1.2, width: 4,
        array: model.high.map((high, i) => (high === null ? 0 : high - model.means[i])),
        arrayminus: model.low.map((low, i) => (low === null ? 0 : model.means[i] - low)),
      },
      hovertemplate: `%{x}: %{y:.4f}<extra>${plain(model.name)}</extra>`,
    }));
    const lowest = Math.min(...data.models.map((model) =>
      Math.min(...model.low.concat(model.means).filter((v) => v !== null).concat([1]))));
    Plotly.newPlot(means, traces, layout({
      barmode: "group", bargap: 0.25,
      yaxis: { range: [Math.max(0, Math.floor(lowest * 10) / 10 - 0.1), 1], gridcolor: palette.grid },
      legend: { orientation: "h", y: -0.18 },
    }), config);
  }

  const gsbChart = document.getElementById("chart-gsb");
  if (gsbChart && data.gsb) {
    const gsb = data.gsb;
    const total = gsb.good + gsb.same + gsb.bad;
    const parts = [
      [gettext("Good"), gsb.good, palette.good],
      [gettext("Same"), gsb.same, palette.same],
      [gettext("Bad"), gsb.bad, palette.bad],
    ];
    const bars = parts.map(([name, count, color]) => ({
      type: "bar", orientation: "h", name, y: [gettext("Verdicts")], x: [total ? count / total : 0], marker: { color },
      text: [count ? `${name} ${count}` : ""], textposition: "inside", insidetextanchor: "middle",
      textfont: { color: "#fff" }, hovertemplate: `${name}: ${count} (%{x:.0%})<extra></extra>`,
      xaxis: "x", yaxis: "y",
    }));
    const score = gsb.score === null ? [] : [{
      type: "scatter", mode: "markers", name: "GSB", y: ["GSB"], x: [gsb.score], showlegend: false,
      marker: { color: palette.score, size: 13, line: { color: "#fff", width: 2 } },
      error_x: gsb.ci95[0] === null ? undefined : {
        type: "data", symmetric: false, color: palette.score, thickness: 3, width: 6,
        array: [gsb.ci95[1] - gsb.score], arrayminus: [gsb.score - gsb.ci95[0]],
      },
      hovertemplate: "GSB %{x:.3f}<extra></extra>", xaxis: "x2", yaxis: "y2",
    }];
    Plotly.newPlot(gsbChart, bars.concat(score), layout({
      barmode: "stack", showlegend: false, margin: { l: 70, r: 16, t: 10, b: 36 },
      grid: { rows: 2, columns: 1, roworder: "top to bottom" },
      xaxis: { range: [0, 1], tickformat: ".0%", domain: [0, 1], anchor: "y" },
      yaxis: { domain: [0.6, 1] },
      xaxis2: { range: [-1, 1], zeroline: true, zerolinecolor: palette.zero, gridcolor: palette.grid, anchor: "y2", dtick: 0.25 },
      yaxis2: { domain: [0, 0.32] },
      annotations: gsb.score === null ? [] : [{
        xref: "x2", yref: "y2", x: gsb.score, y: "GSB", yshift: 18, showarrow: false,
        text: `<b>${gsb.score >= 0 ? "+" : ""}${gsb.score.toFixed(3)}</b>` +
          (gsb.ci95[0] === null ? "" : `  [${gsb.ci95[0].toFixed(3)}, ${gsb.ci95[1].toFixed(3)}]`),
      }],
    }), config);
  }

  const deltas = document.getElementById("chart-deltas");
  if (deltas) {
    const reach = Math.max(...data.deltas.map(Math.abs), 0.05);
    Plotly.newPlot(deltas, [{
      type: "histogram", x: data.deltas, marker: { color: palette.score, line: { color: "#fff", width: 1 } },
      xbins: { start: -reach * 1.05, end: reach * 1.05, size: reach * 2.1 / 21 },
      hovertemplate: `Δ %{x}: %{y} ${plain(gettext("queries"))}<extra></extra>`,
    }], layout({
      height: 240, bargap: 0.05,
      xaxis: {
        title: {
          text: interpolate(gettext("Δ %(measure)s (experimental − online)"), { measure: plain(data.primary_measure) }, true),
        },
        zeroline: true, zerolinecolor: palette.whisker, zerolinewidth: 2,
      },
      yaxis: { title: { text: gettext("queries") }, gridcolor: palette.grid },
      margin: { l: 56, r: 16, t: 10, b: 50 },
    }), config);
  }
})();
