// Results pages refresh themselves while a campaign is still collecting: every 20 s (while the tab is in
// view) they ask the server for the campaign's label stamp, and reload when it changed, unless the reader
// is typing in a form on the page.
(() => {
  "use strict";
  const EVERY_MS = 20000;
  const root = document.querySelector("[data-label-stamp-url]");
  if (!root) return;
  const url = root.dataset.labelStampUrl;
  let stamp = root.dataset.labelStamp;

  const busy = () => {
    const active = document.activeElement;
    return active && active.closest("form") && ["INPUT", "TEXTAREA", "SELECT"].includes(active.tagName);
  };

  const check = async () => {
    if (document.visibilityState !== "visible") return;
    try {
      const response = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
      if (!response.ok) return;
      const fresh = (await response.json()).stamp;
      // While the reader types, the change waits for the next tick.
      if (fresh !== stamp && !busy()) {
        stamp = fresh;
        root.dataset.refreshing = "1";
        window.location.reload();
      }
    } catch (error) {
      // Offline for a moment: try again at the next tick.
    }
  };
  window.setInterval(check, Number(root.dataset.refreshMs) || EVERY_MS);
})();
