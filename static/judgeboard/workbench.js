// The workbench's keyboard: every answer is one key away; typing in the comment box is never intercepted.
(() => {
  "use strict";
  const root = document.querySelector("[data-workbench]");
  if (!root) return;
  const form = root.querySelector("[data-label-form]");
  const keyed = new Map();
  form.querySelectorAll("[data-key]").forEach((button) => {
    button.dataset.key.split(" ").forEach((key) => keyed.set(key, button));
  });
  const dialog = (id) => document.getElementById(id);
  const open = (id) => {
    const element = dialog(id);
    if (element && !element.open) element.showModal();
  };
  root.querySelectorAll("[data-open]").forEach((button) => {
    button.addEventListener("click", () => open(button.dataset.open));
  });

  let sending = false; // a held key must not post twice
  document.querySelectorAll("form[method=post]").forEach((element) => {
    element.addEventListener("submit", (event) => {
      if (sending) event.preventDefault();
      sending = true;
    });
  });

  const strength = form.querySelectorAll("input[name=strength]");
  const toggleStrength = () => {
    const checked = [...strength].findIndex((input) => input.checked);
    strength[(checked + 1) % strength.length].checked = true;
  };

  const onDialogKey = (current, event) => {
    if (current.id !== "wb-skip") return;
    const reason = current.querySelector(`[data-skip-key="${event.key}"]`);
    if (reason) {
      event.preventDefault();
      reason.click();
    }
  };

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || sending) return;
    const target = event.target;
    if (target.matches("textarea, input[type=text]")) {
      if (event.key === "Escape") target.blur();
      return;
    }
    const current = document.querySelector("dialog[open]");
    if (current) {
      onDialogKey(current, event);
      return;
    }
    const key = event.key;
    const button = keyed.get(key);
    if (button) {
      event.preventDefault();
      form.requestSubmit(button);
    } else if (key === "g") {
      open("wb-guidelines");
    } else if (key === "?") {
      open("wb-keys");
    } else if (key === "s") {
      open("wb-skip");
    } else if (key === "c") {
      event.preventDefault();
      form.querySelector("textarea").focus();
    } else if (key === "m" && strength.length) {
      toggleStrength();
    } else if (key === "u") {
      const previous = document.getElementById("wb-previous");
      if (previous) window.location.assign(previous.href);
    }
  });
})();
