/* Launch comparison charts (Plotly from static): nDCG per model with intervals, GSB, per-query Δ histogram. */
(function () {
  "use strict";
  var source = document.getElementById("launch-charts");
  if (!source || !window.Plotly) { return; }
  var data = JSON.parse(source.textContent);
  var colors = ["#6b7280", "#1f5fbf", "#c2410c", "#7c3aed", "#0f766e"];
  var font = { family: "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif", size: 13, color: "#1b1f24" };
  var config = { displayModeBar: false, responsive: true };
  function plain(text) {  // Plotly reads a little HTML in labels: show names as typed
    return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }
  function layout(extra) {
    return Object.assign({
      margin: { l: 50, r: 16, t: 10, b: 40 }, font: font, height: 300,
      paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)"
    }, extra);
  }

  var means = document.getElementById("chart-means");
  if (means) {
    var traces = data.models.map(function (model, index) {
      return {
        type: "bar", name: plain(model.name), x: data.measures, y: model.means,
        marker: { color: colors[index % colors.length] },
        error_y: {
          type: "data", symmetric: false, color: "#111827", thickness: 1.2, width: 4,
          array: model.high.map(function (high, i) { return high === null ? 0 : high - model.means[i]; }),
          arrayminus: model.low.map(function (low, i) { return low === null ? 0 : model.means[i] - low; })
        },
        hovertemplate: "%{x}: %{y:.4f}<extra>" + plain(model.name) + "</extra>"
      };
    });
    var lowest = Math.min.apply(null, data.models.map(function (model) {
      return Math.min.apply(null, model.low.concat(model.means).filter(function (v) { return v !== null; }).concat([1]));
    }));
    Plotly.newPlot(means, traces, layout({
      barmode: "group", bargap: 0.25, yaxis: { range: [Math.max(0, Math.floor(lowest * 10) / 10 - 0.1), 1], gridcolor: "#e5e7eb" },
      legend: { orientation: "h", y: -0.18 }
    }), config);
  }

  var gsbChart = document.getElementById("chart-gsb");
  if (gsbChart && data.gsb) {
    var gsb = data.gsb, total = gsb.good + gsb.same + gsb.bad;
    var parts = [["Good", gsb.good, "#1e7d3a"], ["Same", gsb.same, "#9ca3af"], ["Bad", gsb.bad, "#b42318"]];
    var bars = parts.map(function (part) {
      var share = total ? part[1] / total : 0;
      return {
        type: "bar", orientation: "h", name: part[0], y: ["Verdicts"], x: [share], marker: { color: part[2] },
        text: [part[1] ? part[0] + " " + part[1] : ""], textposition: "inside", insidetextanchor: "middle",
        textfont: { color: "#fff" }, hovertemplate: part[0] + ": " + part[1] + " (%{x:.0%})<extra></extra>",
        xaxis: "x", yaxis: "y"
      };
    });
    var score = gsb.score === null ? [] : [{
      type: "scatter", mode: "markers", name: "GSB", y: ["GSB"], x: [gsb.score], showlegend: false,
      marker: { color: "#1f5fbf", size: 13, line: { color: "#fff", width: 2 } },
      error_x: gsb.ci95[0] === null ? undefined : {
        type: "data", symmetric: false, color: "#1f5fbf", thickness: 3, width: 6,
        array: [gsb.ci95[1] - gsb.score], arrayminus: [gsb.score - gsb.ci95[0]]
      },
      hovertemplate: "GSB %{x:.3f}<extra></extra>", xaxis: "x2", yaxis: "y2"
    }];
    Plotly.newPlot(gsbChart, bars.concat(score), layout({
      barmode: "stack", showlegend: false, margin: { l: 70, r: 16, t: 10, b: 36 },
      grid: { rows: 2, columns: 1, roworder: "top to bottom" },
      xaxis: { range: [0, 1], tickformat: ".0%", domain: [0, 1], anchor: "y" },
      yaxis: { domain: [0.6, 1] },
      xaxis2: { range: [-1, 1], zeroline: true, zerolinecolor: "#6b7280", gridcolor: "#e5e7eb", anchor: "y2", dtick: 0.25 },
      yaxis2: { domain: [0, 0.32] },
      annotations: gsb.score === null ? [] : [{
        xref: "x2", yref: "y2", x: gsb.score, y: "GSB", yshift: 18, showarrow: false,
        text: "<b>" + (gsb.score >= 0 ? "+" : "") + gsb.score.toFixed(3) + "</b>" +
          (gsb.ci95[0] === null ? "" : "  [" + gsb.ci95[0].toFixed(3) + ", " + gsb.ci95[1].toFixed(3) + "]")
      }]
    }), config);
  }

  var deltas = document.getElementById("chart-deltas");
  if (deltas) {
    var reach = Math.max.apply(null, data.deltas.map(Math.abs).concat([0.05]));
    Plotly.newPlot(deltas, [{
      type: "histogram", x: data.deltas, marker: { color: "#1f5fbf", line: { color: "#fff", width: 1 } },
      xbins: { start: -reach * 1.05, end: reach * 1.05, size: reach * 2.1 / 21 },
      hovertemplate: "Δ %{x}: %{y} queries<extra></extra>"
    }], layout({
      height: 240, bargap: 0.05,
      xaxis: { title: { text: "Δ " + plain(data.primary_measure) + " (experimental − online)" }, zeroline: true, zerolinecolor: "#111827", zerolinewidth: 2 },
      yaxis: { title: { text: "queries" }, gridcolor: "#e5e7eb" },
      margin: { l: 56, r: 16, t: 10, b: 50 }
    }), config);
  }
})();
