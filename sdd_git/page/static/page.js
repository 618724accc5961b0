// Live progress of a run: server-sent events append lines and, at the end, show what came of it.
// The page works without this script too (it refreshes itself until the work is done).
"use strict";
(function () {
  var list = document.getElementById("progress");
  if (!list || list.dataset.done || !window.EventSource) return;
  var source = new EventSource(list.dataset.events);
  source.addEventListener("line", function (e) {
    var item = document.createElement("li");
    item.textContent = JSON.parse(e.data);
    list.appendChild(item);
  });
  source.addEventListener("outcome", function (e) {
    source.close();
    var made = JSON.parse(e.data);
    var box = document.getElementById("outcome");
    box.textContent = "";
    var text = document.createElement("p");
    text.id = "outcome-text";
    text.className = made.failed ? "error" : "notice";
    text.textContent = made.text;
    box.appendChild(text);
    if (made.hint) {
      var hint = document.createElement("p");
      hint.textContent = "What you can do: " + made.hint;
      box.appendChild(hint);
    }
    var line = document.createElement("p");
    var next = document.createElement("a");
    next.id = "next";
    next.className = "button";
    next.href = made.next;
    next.textContent = made.next_label;
    line.appendChild(next);
    box.appendChild(line);
    next.focus();
    if (window.performance && performance.mark) performance.mark("sdd-outcome");
  });
  source.onerror = function () {
    source.close();
    window.setTimeout(function () { window.location.reload(); }, 1000);
  };
})();

// A file over the page's limit is said at once, before it is sent: a browser still sending a
// large body shows the server's refusal as a broken connection.
(function () {
  var inputs = document.querySelectorAll("input[type=file][data-limit]");
  Array.prototype.forEach.call(inputs, function (input) {
    input.form.addEventListener("submit", function (e) {
      var file = input.files && input.files[0];
      var limit = Number(input.dataset.limit);
      if (!file || !limit || file.size <= limit) return;
      e.preventDefault();
      var help = document.getElementById(input.getAttribute("aria-describedby"));
      help.className = "error";  // its aria-live region reads the words out
      help.textContent = file.name + " is larger than " + Math.round(limit / 1048576) +
        " MB: attach a smaller file, or the part of it that matters.";
      input.focus();
    });
  });
})();
