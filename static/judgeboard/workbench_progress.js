// The workbench's progress bar: done of all this annotator can get, per task kind. Fetched beside the task
// (at most every 30 s) and counted forward locally after each answer, so a label's round trip carries no
// counts over the campaign.
(() => {
  "use strict";
  const NAMES = { relevance: gettext("Grades"), side_by_side: gettext("Side by side") };
  const FRESH_MS = 30000;
  let kinds = null;
  let fetchedAt = 0;
  let fetching = false;

  const render = () => {
    const bar = document.querySelector("[data-progress-url]");
    if (!bar || !kinds) return;
    const items = kinds
      .filter((kind) => kind.done + kind.remaining > 0)
      .map((kind) => {
        const total = kind.done + kind.remaining;
        const item = document.createElement("label");
        item.className = "wb-progress-kind";
        item.title = interpolate(gettext("%(done)s done, %(left)s left"), { done: kind.done, left: kind.remaining }, true);
        const meter = document.createElement("progress");
        Object.assign(meter, { value: kind.done, max: total });
        item.append(`${NAMES[kind.name] || kind.name} ${kind.done}/${total} `, meter);
        return item;
      });
    bar.replaceChildren(...items);
    bar.hidden = items.length === 0;
  };

  const refresh = async () => {
    const bar = document.querySelector("[data-progress-url]");
    if (!bar) return;
    if (fetching || (kinds && Date.now() - fetchedAt < FRESH_MS)) {
      render();
      return;
    }
    fetching = true;
    try {
      const response = await fetch(bar.dataset.progressUrl, { credentials: "same-origin" });
      if (response.ok) {
        kinds = (await response.json()).kinds;
        fetchedAt = Date.now();
      }
    } catch {
      // The bar is a convenience: without it the workbench works the same.
    } finally {
      fetching = false;
    }
    render();
  };

  document.addEventListener("workbench:answered", (event) => {
    if (!kinds || event.detail.status !== "leased") return; // changing an earlier answer adds nothing
    const kind = kinds.find((candidate) => candidate.name === event.detail.kind);
    if (kind && kind.remaining > 0) {
      kind.done += 1;
      kind.remaining -= 1;
    }
  });
  document.addEventListener("workbench:shown", refresh);
})();
