// Sortable tables: a click (or Enter) on a header of a table.sortable sorts by that column; cells may give
// data-sort. Blank cells go last either way; text sorts as the page's language does (Chinese by pinyin).
(() => {
  "use strict";
  const collator = new Intl.Collator(document.documentElement.lang || undefined, { numeric: true });
  const cellKey = (row, column) => {
    const cell = row.cells[column];
    const raw = cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent.trim();
    const number = parseFloat(raw);
    return raw !== "" && !isNaN(number) ? number : raw;
  };
  document.querySelectorAll("table.sortable").forEach((table) => {
    const headers = table.querySelectorAll("thead th");
    headers.forEach((header, column) => {
      header.tabIndex = 0;
      header.classList.add("sort-header");
      const sort = () => {
        const ascending = header.getAttribute("aria-sort") !== "ascending";
        headers.forEach((other) => other.removeAttribute("aria-sort"));
        header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        const body = table.tBodies[0];
        const rows = [...body.rows].filter((row) => row.cells.length > column);
        rows.sort((a, b) => {
          const x = cellKey(a, column);
          const y = cellKey(b, column);
          if (x === "" || y === "") return x === y ? 0 : (x === "" ? 1 : -1);
          const order = typeof x === "string" || typeof y === "string"
            ? collator.compare(String(x), String(y))
            : x - y;
          return ascending ? order : -order;
        });
        rows.forEach((row) => body.appendChild(row));
      };
      header.addEventListener("click", sort);
      header.addEventListener("keydown", (event) => {
        if (event.key === "Enter") sort();
      });
    });
  });
})();
