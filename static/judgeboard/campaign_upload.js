// The new-campaign form: "Add another run" clones the last (model, file) row with the next index.
(() => {
  "use strict";
  const runs = document.querySelector("[data-runs]");
  const add = runs && runs.querySelector("[data-add-run]");
  if (!add) return;
  add.hidden = false;
  add.addEventListener("click", () => {
    const rows = runs.querySelectorAll("[data-run-row]");
    const row = rows[rows.length - 1].cloneNode(true);
    row.querySelectorAll("input").forEach((input) => {
      input.value = "";
      input.name = input.name.replace(/_\d+$/, `_${rows.length}`);
      // The run's number, wherever the page's language puts it ("run file 2", "第 2 个运行结果文件").
      input.setAttribute("aria-label", input.getAttribute("aria-label").replace(/\d+/, `${rows.length + 1}`));
    });
    add.before(row);
  });
})();
