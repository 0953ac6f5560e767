// A campaign import's page while its files are checked or imported in the background: polls the status
// each second, moves the progress bar, and reloads the page once the status or what it offers changes (a
// worker took the import, or stopped).
(() => {
  "use strict";
  const root = document.getElementById("import-status");
  if (!root || !root.dataset.statusUrl) return;
  const bar = document.getElementById("import-progress");
  const rows = document.getElementById("import-rows");
  const number = (value) => value.toLocaleString(document.documentElement.lang);

  const poll = async () => {
    try {
      const response = await fetch(root.dataset.statusUrl, { credentials: "same-origin" });
      if (response.ok) {
        const { status, actions, progress } = await response.json();
        if (status !== root.dataset.status || actions.join(" ") !== root.dataset.actions) {
          window.location.reload();
          return;
        }
        if (progress) {
          Object.assign(bar, { value: progress.rows, max: Math.max(progress.total, 1) });
          rows.textContent =
            progress.rows < progress.total
              ? interpolate(gettext("%(rows)s of %(total)s ranking rows"), { rows: number(progress.rows), total: number(progress.total) }, true)
              : interpolate(gettext("All %(total)s ranking rows written; pooling the tasks"), { total: number(progress.total) }, true);
        }
      }
    } catch {
      // A missed poll is retried.
    }
    window.setTimeout(poll, 1000);
  };
  window.setTimeout(poll, 1000);
})();
