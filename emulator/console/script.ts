/**
 * The console's only script, served as /console/assets/console.js (plain ES2017, no build step). Pages
 * work without it (forms post and the server redirects back); with it:
 * - forms post in the background and their outcome shows in the status or alert line, then the page's
 *   live part is fetched again at once;
 * - the live part (`<main id="live">`) is fetched every second and replaced when its version changed,
 *   unless the person is in the middle of it (a field inside has focus or was edited), so typing is never lost;
 * - focus comes back to the same control after a replacement;
 * - a refused refresh (signed out, say) leaves the page as it was and asks for a reload.
 */

export const CONSOLE_SCRIPT = String.raw`"use strict";
(function () {
  var POLL_MS = 1000;
  var live = document.getElementById("live");
  var notice = document.getElementById("notice");
  var problem = document.getElementById("problem");
  var connection = document.getElementById("connection");
  if (!live) return;
  var started = 0;
  var applied = 0;
  var pending = 0;

  function say(ok, message) {
    notice.textContent = ok ? message : "";
    problem.textContent = ok ? "" : message;
  }

  function edited(field) {
    if (field.type === "hidden") return false;
    if (field.type === "checkbox" || field.type === "radio") return field.checked !== field.defaultChecked;
    if (field.tagName === "SELECT") {
      // With no option marked selected in the page, the browser shows the first one.
      var shown = 0;
      for (var i = 0; i < field.options.length; i++) if (field.options[i].defaultSelected) shown = i;
      return field.selectedIndex !== shown;
    }
    return field.value !== field.defaultValue;
  }

  function busy() {
    var active = document.activeElement;
    if (active && live.contains(active) && active.matches("input, select, textarea")) return true;
    return Array.prototype.some.call(live.querySelectorAll("input, select, textarea"), edited);
  }

  // A control is found again by its id, or by its form's action, fields and label.
  function keyOf(element) {
    if (!element || !live.contains(element)) return null;
    if (element.id) return "#" + element.id;
    if (!element.form) return null;
    return element.form.action + "|" + new URLSearchParams(new FormData(element.form)) + "|" + element.textContent;
  }

  function refocus(key) {
    if (key === null) return;
    var controls = live.querySelectorAll("[id], button, a");
    for (var i = 0; i < controls.length; i++) {
      if (keyOf(controls[i]) === key) return controls[i].focus();
    }
  }

  function refresh(force) {
    if (!force && (pending > 0 || document.hidden || busy())) return Promise.resolve();
    var sequence = ++started;
    pending++;
    return fetch(location.pathname + location.search, {
      headers: { "X-Console-Fragment": "live" },
      cache: "no-store",
      credentials: "same-origin",
    })
      .then(function (response) {
        if (!response.ok) {
          // Signed out (the emulator restarted with an admin key) or refused: the page as it was stays.
          connection.textContent = "The emulator refused to refresh this page (HTTP " + response.status + "): reload it.";
          return;
        }
        var version = response.headers.get("X-Console-Version");
        return response.text().then(function (text) {
          connection.textContent = "";
          // An answer older than the one shown, or one that would undo what the person is typing, is dropped.
          if (sequence < applied || (!force && busy())) return;
          applied = sequence;
          if (version !== null && version === live.dataset.version) return;
          var key = keyOf(document.activeElement);
          live.innerHTML = text;
          live.dataset.version = version || "";
          refocus(key);
        });
      })
      .catch(function () {
        connection.textContent = "The emulator does not answer: this page shows its last known state.";
      })
      .finally(function () {
        pending--;
      });
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!(form instanceof HTMLFormElement) || form.method !== "post") return;
    event.preventDefault();
    var question = form.getAttribute("data-confirm");
    if (question && !window.confirm(question)) return;
    var body = new URLSearchParams(new FormData(form));
    say(true, "");
    fetch(form.action, {
      method: "POST",
      headers: { Accept: "application/json" },
      body: body,
      credentials: "same-origin",
    })
      .then(function (response) {
        return response.json();
      })
      .then(function (answer) {
        var back = answer.return_to;
        if (answer.ok && back && back !== location.pathname) {
          location.assign(back + "?notice=" + encodeURIComponent(answer.message));
          return;
        }
        say(answer.ok, answer.message);
        return refresh(true);
      })
      .catch(function () {
        say(false, "The emulator did not answer: is it still running?");
      });
  });

  setInterval(refresh, POLL_MS);
})();
`;
