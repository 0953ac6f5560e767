// The final-label form of a review task, by keyboard: a digit picks a label and moves to the reason, Enter
// saves, Esc leaves the reason, n opens the next task.
(() => {
  "use strict";
  const form = document.getElementById("adjudication-form");
  if (!form) return;
  const reason = form.querySelector("textarea[name=reason]");
  const typing = (target) =>
    target && (target.tagName === "TEXTAREA" || (target.tagName === "INPUT" && target.type === "text"));
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (typing(event.target)) {
      if (event.target === reason && event.key === "Enter" && !event.shiftKey) {
        event.preventDefault();
        if (reason.value.trim() && form.querySelector("input[name=label]:checked")) form.requestSubmit();
      } else if (event.key === "Escape") {
        event.target.blur();
      }
      return;
    }
    const choice = form.querySelector(`input[name=label][data-key="${event.key}"]`);
    if (choice) {
      event.preventDefault();
      choice.checked = true;
      reason.focus();
    } else if (event.key === "n" && form.dataset.nextUrl) {
      window.location.href = form.dataset.nextUrl;
    }
  });
})();
