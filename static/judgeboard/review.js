/* Reviewer pages: sortable tables, the grade chart, and the keyboard on the final-label form. */
(function () {
  "use strict";

  // Sortable tables: a click (or Enter) on a header sorts by that column; cells may give data-sort.
  function cellKey(row, column) {
    var cell = row.cells[column];
    var raw = cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent.trim();
    var number = parseFloat(raw);
    return raw !== "" && !isNaN(number) ? number : raw.toLowerCase();
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("thead th").forEach(function (header, column) {
      header.tabIndex = 0;
      header.classList.add("sort-header");
      function sort() {
        var ascending = header.getAttribute("aria-sort") !== "ascending";
        table.querySelectorAll("thead th").forEach(function (other) { other.removeAttribute("aria-sort"); });
        header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows).filter(function (row) { return row.cells.length > column; });
        rows.sort(function (a, b) {
          var x = cellKey(a, column), y = cellKey(b, column);
          if (x === "" || y === "") { return x === y ? 0 : (x === "" ? 1 : -1); }  // blanks last
          var order = x < y ? -1 : (x > y ? 1 : 0);
          return ascending ? order : -order;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      }
      header.addEventListener("click", sort);
      header.addEventListener("keydown", function (event) { if (event.key === "Enter") { sort(); } });
    });
  });

  // Grade distribution: one stacked horizontal bar per annotator.
  var chartData = document.getElementById("grade-distribution-data");
  var chart = document.getElementById("grade-distribution");
  function plain(text) {  // Plotly reads a little HTML in labels: show names as typed
    return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }
  if (chartData && chart && window.Plotly) {
    var data = JSON.parse(chartData.textContent);
    var annotators = data.annotators.map(plain);
    var colors = ["#b42318", "#e8a33d", "#7fb069", "#1e7d3a", "#1f5fbf", "#6b7280"];
    var traces = data.grades.map(function (grade, index) {
      return {
        type: "bar", orientation: "h", name: plain(grade), y: annotators,
        x: data.shares.map(function (shares) { return shares[index]; }),
        marker: { color: colors[index % colors.length] },
        hovertemplate: "%{y}: %{x:.0%} " + plain(grade) + "<extra></extra>"
      };
    });
    Plotly.newPlot(chart, traces, {
      barmode: "stack", height: 90 + 32 * annotators.length,
      margin: { l: 110, r: 20, t: 10, b: 40 }, xaxis: { tickformat: ".0%", range: [0, 1] },
      yaxis: { autorange: "reversed" }, legend: { orientation: "h", y: -0.25, traceorder: "normal" },
      paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)",
      font: { family: "system-ui, sans-serif", size: 13 }
    }, { displayModeBar: false, responsive: true });
  }

  // Final-label form: a digit picks a label and moves to the reason, Enter saves, Esc leaves the
  // reason, n opens the next task.
  var form = document.getElementById("adjudication-form");
  if (!form) { return; }
  var reason = form.querySelector("textarea[name=reason]");
  function typing(target) {
    return target && (target.tagName === "TEXTAREA" || target.tagName === "INPUT" && target.type === "text");
  }
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    if (typing(event.target)) {
      if (event.target === reason && event.key === "Enter" && !event.shiftKey) {
        event.preventDefault();
        if (reason.value.trim() && form.querySelector("input[name=label]:checked")) { form.requestSubmit(); }
      } else if (event.key === "Escape") {
        event.target.blur();
      }
      return;
    }
    var choice = form.querySelector('input[name=label][data-key="' + event.key + '"]');
    if (choice) {
      event.preventDefault();
      choice.checked = true;
      reason.focus();
    } else if (event.key === "n" && form.dataset.nextUrl) {
      window.location.href = form.dataset.nextUrl;
    }
  });
})();
