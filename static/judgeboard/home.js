// The home page's decision cells: each campaign's current decision is fetched after the page has shown
// (a report takes a moment), one request per campaign, and its small piece of HTML put in place.
(() => {
  "use strict";
  for (const cell of document.querySelectorAll("[data-decision-url]")) {
    fetch(cell.dataset.decisionUrl, { credentials: "same-origin" })
      .then((response) => (response.ok ? response.text() : Promise.reject(response.status)))
      .then((html) => {
        cell.innerHTML = html;
      })
      .catch(() => {
        cell.textContent = cell.dataset.failed;
      });
  }
})();
