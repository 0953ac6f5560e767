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
      input.setAttribute("aria-label", input.getAttribute("aria-label").replace(/\d+$/, `${rows.length + 1}`));
    });
    add.before(row);
  });
})();
