// Shared by the chart scripts: the palette the server hands over in #chart-palette (the SVG charts of the
// HTML report use the same one, metrics/reports/palette.py), JSON data read from the page, and escaping.
(() => {
  "use strict";
  const readJson = (id) => {
    const source = document.getElementById(id);
    return source ? JSON.parse(source.textContent) : null;
  };
  // Plotly reads a little HTML in labels: show names as typed.
  const plain = (text) => String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  window.judgeboardPlotting = Object.freeze({ palette: readJson("chart-palette"), readJson, plain });
})();
