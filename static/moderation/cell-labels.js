// At phone width the console's tables stack into one block per row with their headings
// hidden (settle.css); give each cell its column's heading so the stacked figures keep
// their meaning (shown by CSS as a small label before the value).
document.querySelectorAll("main table").forEach(function (table) {
  var head = table.tHead && table.tHead.rows[0];
  if (!head) return;
  var names = [];
  Array.prototype.forEach.call(head.cells, function (th) {
    for (var i = 0; i < (th.colSpan || 1); i++) names.push(th.textContent.trim());
  });
  Array.prototype.forEach.call(table.tBodies, function (body) {
    Array.prototype.forEach.call(body.rows, function (row) {
      if (row.parentElement !== body) return;
      var column = 0;
      Array.prototype.forEach.call(row.cells, function (cell) {
        var name = names[column];
        if (name && name !== "Actions" && (cell.colSpan || 1) === 1 && !cell.hasAttribute("data-label")) {
          cell.setAttribute("data-label", name);
        }
        column += cell.colSpan || 1;
      });
    });
  });
});
