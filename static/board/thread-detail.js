// A reply's url is this page with #reply-<id>; the fragment never reaches the server, so
// when that reply is on another page, ask for the page that starts at it. Once asked
// (?from= is that id) and still absent, the reply is no longer public: stay.
(function () {
  function land() {
    var match = /^#reply-(\d+)$/.exec(window.location.hash);
    if (!match || document.getElementById("reply-" + match[1])) return;
    if (new URLSearchParams(window.location.search).get("from") === match[1]) return;
    window.location.replace(window.location.pathname + "?from=" + match[1] + window.location.hash);
  }
  land();
  window.addEventListener("hashchange", land);
})();
