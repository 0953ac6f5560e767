// The workbench's keyboard: every answer is one key away; typing in the comment box is never intercepted.
// A label is posted in the background and the server answers with the next task, which replaces the page
// in place: one round trip per label. Without this script the forms post and redirect as usual.
// It tells other scripts (the progress bar) by the events "workbench:shown" and "workbench:answered".
(() => {
  "use strict";
  let view = null; // the current task's label form, its keyed buttons and strength choices
  let sending = false; // a held key must not post twice

  const open = (id) => {
    const element = document.getElementById(id);
    if (element && !element.open) element.showModal();
  };

  // What the browser would have posted, for when the background post cannot be made.
  const postNatively = (form, submitter) => {
    if (submitter && submitter.name) {
      const input = document.createElement("input");
      Object.assign(input, { type: "hidden", name: submitter.name, value: submitter.value });
      form.append(input);
    }
    form.submit();
  };

  // `part`: the answer is the next task's title, messages and main only (X-Workbench-Part), swapped into
  // this page, whose head, top bar and scripts stay; else a whole page, whose body replaces this one's.
  const show = (html, location, part) => {
    const page = new DOMParser().parseFromString(html, "text/html");
    document.title = page.title;
    if (part) {
      document.querySelectorAll("body > .messages").forEach((list) => list.remove());
      const main = document.querySelector("main");
      page.querySelectorAll("body > .messages").forEach((list) => main.before(list));
      main.replaceWith(page.querySelector("main"));
      // Switching the language comes back to the task shown, not to the page first loaded.
      document.querySelectorAll("form.languages input[name=next]").forEach((input) => {
        input.value = location;
      });
    } else {
      document.body.replaceWith(page.body); // its scripts stay inert: this one keeps serving the new page
    }
    history.replaceState(null, "", location);
    window.scrollTo(0, 0);
    mount();
  };

  const post = async (form, submitter) => {
    sending = true;
    let response;
    try {
      response = await fetch(form.action, {
        method: "POST",
        // URL-encoded, as the form posts natively: Django parses it at a tenth of multipart's cost.
        body: new URLSearchParams(new FormData(form, submitter)),
        headers: { "X-Workbench": "next" },
        credentials: "same-origin",
      });
    } catch {
      postNatively(form, submitter);
      return;
    }
    if (!response.ok) {
      postNatively(form, submitter); // the server's own error page, as without this script
      return;
    }
    const { kind, status } = document.querySelector("[data-workbench]").dataset;
    document.dispatchEvent(new CustomEvent("workbench:answered", { detail: { kind, status } }));
    const address = response.headers.get("X-Workbench-Location") || response.url;
    show(await response.text(), address, response.headers.get("X-Workbench-Part") === "main");
  };

  const mount = () => {
    sending = false;
    view = null;
    const root = document.querySelector("[data-workbench]");
    if (!root) return;
    const form = root.querySelector("[data-label-form]");
    const keyed = new Map();
    form.querySelectorAll("[data-key]").forEach((button) => {
      button.dataset.key.split(" ").forEach((key) => keyed.set(key, button));
    });
    root.querySelectorAll("[data-open]").forEach((button) => {
      button.addEventListener("click", () => open(button.dataset.open));
    });
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (!sending) post(form, event.submitter);
    });
    root.querySelectorAll("form[method=post]:not([data-label-form])").forEach((element) => {
      element.addEventListener("submit", (event) => {
        if (sending) event.preventDefault();
        sending = true;
      });
    });
    const intents = new Map();
    form.querySelectorAll("[data-intent-key]").forEach((box) => intents.set(box.dataset.intentKey, box));
    view = {
      form,
      keyed,
      intents,
      strength: form.querySelectorAll("input[name=strength]"),
      marks: root.querySelectorAll("select[name=duplicate]"),
      marking: null, // while a near-duplicate is being marked: what was typed so far
    };
    document.dispatchEvent(new CustomEvent("workbench:shown"));
  };

  const toggleStrength = () => {
    const strength = view.strength;
    const checked = [...strength].findIndex((input) => input.checked);
    strength[(checked + 1) % strength.length].checked = true;
  };

  // A near-duplicate by keyboard: d, the list (← or →), the result's number, the earlier result's number.
  // The same keys again take the mark back. Each step is said in #wb-mark; Escape gives up.
  const SIDE_KEYS = { ArrowLeft: "left", l: "left", ArrowRight: "right", r: "right" };
  const SIDE_NAMES = { left: pgettext("list side", "left"), right: pgettext("list side", "right") };
  const say = (text) => {
    const line = document.getElementById("wb-mark");
    line.textContent = text;
    line.hidden = !text;
  };

  const markingEnds = (text) => {
    const pending = document.querySelector(".wb-result.wb-marking");
    if (pending) pending.classList.remove("wb-marking");
    view.marking = null;
    say(text);
  };

  const onMarkKey = (event) => {
    event.preventDefault();
    const marking = view.marking;
    const key = event.key;
    if (key === "Escape") {
      markingEnds("");
      return;
    }
    if (!marking.side) {
      if (SIDE_KEYS[key]) {
        marking.side = SIDE_KEYS[key];
        const side = SIDE_NAMES[marking.side];
        say(interpolate(gettext("Near-duplicate in the %(side)s list: the number of the result that repeats an earlier one"), { side }, true));
      }
      return;
    }
    if (!/^[1-9]$/.test(key)) return;
    if (!marking.position) {
      const select = [...view.marks].find(
        (element) => element.dataset.side === marking.side && element.dataset.position === key,
      );
      if (select) {
        marking.position = key;
        marking.select = select;
        select.closest(".wb-result").classList.add("wb-marking");
        const side = SIDE_NAMES[marking.side];
        say(interpolate(gettext("%(side)s #%(position)s is a near-duplicate of: the earlier result's number"), { side, position: key }, true));
      }
      return;
    }
    const value = `${marking.side}:${marking.position}:${key}`;
    const option = [...marking.select.options].find((element) => element.value === value);
    if (!option) return;
    marking.select.value = marking.select.value === value ? "" : value;
    const said = { side: SIDE_NAMES[marking.side], position: marking.position, earlier: key };
    const marked = marking.select.value
      ? gettext("%(side)s #%(position)s marked the same as #%(earlier)s")
      : gettext("%(side)s #%(position)s unmarked");
    markingEnds(interpolate(marked, said, true));
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
    if (!view || event.ctrlKey || event.metaKey || event.altKey || sending) return;
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
    if (view.marking) {
      onMarkKey(event);
      return;
    }
    const key = event.key;
    const button = view.keyed.get(key);
    const intent = view.intents.get(key);
    if (intent) {
      event.preventDefault();
      intent.checked = !intent.checked;
    } else if (key === "d" && view.marks.length) {
      event.preventDefault();
      view.marking = {};
      say(gettext("Near-duplicate: which list? ← or →"));
    } else if (button) {
      event.preventDefault();
      view.form.requestSubmit(button);
    } else if (key === "g") {
      open("wb-guidelines");
    } else if (key === "?") {
      open("wb-keys");
    } else if (key === "s") {
      open("wb-skip");
    } else if (key === "c") {
      event.preventDefault();
      view.form.querySelector("textarea").focus();
    } else if (key === "m" && view.strength.length) {
      toggleStrength();
    } else if (key === "u") {
      const previous = document.getElementById("wb-previous");
      if (previous) window.location.assign(previous.href);
    }
  });

  mount();
})();
