// Times are rendered in UTC (kept in the title for hover); show them in the reader's zone.
document.querySelectorAll("time[datetime]").forEach(function (el) {
  var when = new Date(el.getAttribute("datetime"));
  if (isNaN(when)) return;
  var pad = function (n) { return String(n).padStart(2, "0"); };
  el.textContent = when.getFullYear() + "-" + pad(when.getMonth() + 1) + "-" + pad(when.getDate()) +
    " " + pad(when.getHours()) + ":" + pad(when.getMinutes());
});
