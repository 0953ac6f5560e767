// Shared by the chart scripts: the palette the server hands over in #chart-palette (the SVG charts of the
// HTML report use the same one, metrics/reports/palette.py), JSON data read from the page, escaping, and the
// page's font stack.
(() => {
  "use strict";
  const readJson = (id) => {
    const source = document.getElementById(id);
    return source ? JSON.parse(source.textContent) : null;
  };
  // Plotly reads a little HTML in labels: show names as typed.
  const plain = (text) => String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  // The page's fonts, Chinese ones included, so that labels in Chinese are drawn, not boxes.
  const fontFamily = getComputedStyle(document.documentElement).fontFamily || "sans-serif";
  window.judgeboardPlotting = Object.freeze({ palette: readJson("chart-palette"), readJson, plain, fontFamily });
})();
