// Label quality: one stacked horizontal bar per annotator, the share of each grade (Plotly from static).
(() => {
  "use strict";
  const plotting = window.judgeboardPlotting;
  const data = plotting && plotting.readJson("grade-distribution-data");
  const chart = document.getElementById("grade-distribution");
  if (!data || !chart || !window.Plotly) return;
  const { palette, plain } = plotting;
  const annotators = data.annotators.map(plain);
  const traces = data.grades.map((grade, index) => ({
    type: "bar", orientation: "h", name: plain(grade), y: annotators,
    x: data.shares.map((shares) => shares[index]),
    marker: { color: palette.grades[index % palette.grades.length] },
    hovertemplate: `%{y}: %{x:.0%} ${plain(grade)}<extra></extra>`,
  }));
  Plotly.newPlot(chart, traces, {
    barmode: "stack", height: 90 + 32 * annotators.length,
    margin: { l: 110, r: 20, t: 10, b: 40 }, xaxis: { tickformat: ".0%", range: [0, 1] },
    yaxis: { autorange: "reversed" }, legend: { orientation: "h", y: -0.25, traceorder: "normal" },
    paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)",
    font: { family: plotting.fontFamily, size: 13 },
  }, { displayModeBar: false, responsive: true });
})();
