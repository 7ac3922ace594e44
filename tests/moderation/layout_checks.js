() => {
  // The layout checks of test_browser_layout.py, run in the page by Playwright.
  const problems = [];
  const vw = document.documentElement.clientWidth;
  const name = e => {
    const text = (e.innerText || e.value || e.getAttribute("placeholder") || e.textContent || "")
      .trim().replace(/\s+/g, " ").slice(0, 50);
    return `${e.tagName}${e.className && typeof e.className === "string" ? "." + e.className.trim().replace(/\s+/g, ".") : ""} "${text}"`;
  };
  // Not drawn, or drawn for screen readers only (clipped to nothing, as a stacked
  // table's header row at phone width).
  const clipped = e => {
    for (let p = e; p; p = p.parentElement) {
      const s = getComputedStyle(p);
      if (s.position === "absolute" && s.clip !== "auto") return true;
    }
    return false;
  };
  const hidden = e => !e.checkVisibility()
    || e.closest(".visually-hidden, svg, head, script, style, template") || clipped(e);

  // 1. The page never scrolls sideways.
  if (document.documentElement.scrollWidth > vw) {
    problems.push(`page is ${document.documentElement.scrollWidth} px wide in a ${vw} px viewport`);
  }

  // 2. No element sticks out of the viewport, and none holds content wider than its box
  //    (spilled out, or hidden in a sideways scroll).
  for (const e of document.body.querySelectorAll("*")) {
    if (hidden(e)) continue;
    const r = e.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (r.left < -0.5 || r.right > vw + 0.5) {
      problems.push(`${name(e)} reaches ${Math.round(r.left)}..${Math.round(r.right)} px of a ${vw} px viewport`);
      continue;
    }
    const style = getComputedStyle(e);
    if (style.display === "inline" || e.tagName === "HTML" || e.tagName === "BODY") continue;
    if (["INPUT", "SELECT", "TEXTAREA"].includes(e.tagName)) continue;  // measured below
    if (e.scrollWidth > e.clientWidth + 1 && e.clientWidth > 0) {
      problems.push(`${name(e)} holds ${e.scrollWidth} px of content in ${e.clientWidth} px (overflow-x: ${style.overflowX})`);
    }
  }

  // 3. A field's value or placeholder fits its box (no cut "Since (optional, ISO-8601").
  const canvas = document.createElement("canvas").getContext("2d");
  for (const e of document.querySelectorAll("input, select")) {
    if (hidden(e) || ["hidden", "checkbox", "radio", "submit"].includes(e.type)) continue;
    const s = getComputedStyle(e);
    canvas.font = `${s.fontStyle} ${s.fontWeight} ${s.fontSize} ${s.fontFamily}`;
    const room = e.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight)
      - (e.tagName === "SELECT" ? 20 : 0) - (e.type === "date" ? 24 : 0);
    const shown = e.tagName === "SELECT" ? (e.selectedOptions[0] || {}).text || ""
      : (e.value || e.getAttribute("placeholder") || "");
    if (e.type === "date") continue;
    const width = canvas.measureText(shown).width;
    if (width > room + 1) {
      problems.push(`${name(e)}: its text takes ${Math.round(width)} px of ${Math.round(room)} px`);
    }
  }

  // 4. No word is split across lines when it would fit on one line of its card (or of
  //    the page): a table column or a narrow box must not cut "delivery_mark_failed" in
  //    two. In running text a break after a hyphen is ordinary typesetting; in a name,
  //    code, a cell, a label or a control it is not.
  const containerWidth = node => {
    const box = node.parentElement.closest(".card, main") || document.body;
    const s = getComputedStyle(box);
    return box.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
  };
  const lines = rects => {
    const tops = [];
    for (const r of rects) {
      if (r.width < 0.5) continue;
      if (!tops.some(t => Math.abs(t - r.top) < 3)) tops.push(r.top);
    }
    return tops.length;
  };
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!parent || hidden(parent) || ["OPTION", "SCRIPT", "STYLE", "TITLE"].includes(parent.tagName)) continue;
    // Running text: a sentence (four words or more) outside names, code and controls.
    const prose = node.data.trim().split(/\s+/).length >= 4
      && !parent.closest("code, .mono, .name, button, a.button, label, nav, .badge, form.whoami");
    for (const match of node.data.matchAll(/[^\s\u00a0]+/g)) {
      const word = match[0];
      if (word.length < 2) continue;
      range.setStart(node, match.index);
      range.setEnd(node, match.index + word.length);
      const rects = [...range.getClientRects()];
      if (lines(rects) < 2) continue;
      const width = rects.reduce((sum, r) => sum + r.width, 0);
      if (width > containerWidth(node)) continue;  // longer than any line it could have
      // A name or id longer than 24 characters (a UUID, an 80-character endpoint name, a
      // URL: the `unbroken` filter marks it .breakable) may break where its column needs.
      if (parent.closest(".breakable")) continue;
      if (prose) {
        // the lines break right after a hyphen: "read-/only" in a sentence is fine
        let first = 0;
        for (let i = 1; i <= word.length; i++) {
          range.setEnd(node, match.index + i);
          if (lines([...range.getClientRects()]) > 1) { first = i - 1; break; }
        }
        if (first > 0 && word[first - 1] === "-") continue;
      }
      problems.push(`word "${word}" split across lines in ${name(parent)}`);
    }
    // 5. A figure stays on the line of its unit ("20 s", "3 %", "12 KB").
    for (const match of node.data.matchAll(/\d[\d.,]*[ \u00a0](?:s|ms|h|d|%|B|KB|MB|GB|kB)(?![\w])/g)) {
      range.setStart(node, match.index);
      range.setEnd(node, match.index + match[0].length);
      if (lines([...range.getClientRects()]) > 1) {
        problems.push(`"${match[0]}" split across lines in ${name(parent)}`);
      }
    }
  }

  // 6. Controls side by side keep a gap: a button does not touch the next control.
  const controls = [...document.querySelectorAll("button, input:not([type=hidden]), select, a.button, form a")]
    .filter(e => !hidden(e));
  const boxes = controls.map(e => [e, e.getBoundingClientRect()]);
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const [a, ra] = boxes[i], [b, rb] = boxes[j];
      if (a.contains(b) || b.contains(a)) continue;
      const buttonLike = x => x.tagName !== "A" || x.classList.contains("button");
      if (!buttonLike(a) && !buttonLike(b)) continue;
      const sameLine = Math.min(ra.bottom, rb.bottom) - Math.max(ra.top, rb.top) > 4;
      if (!sameLine) continue;
      const gap = Math.max(rb.left - ra.right, ra.left - rb.right);
      if (gap < 6) problems.push(`${name(a)} and ${name(b)} are ${Math.round(gap)} px apart`);
    }
  }

  // 7. A chart's text is not larger than the page's text, nor too small to read, nor cut
  //    off by the chart's edge.
  const body = parseFloat(getComputedStyle(document.body).fontSize);
  for (const svg of document.querySelectorAll("figure.chart svg")) {
    const box = svg.getBoundingClientRect();
    const scale = box.width / svg.viewBox.baseVal.width;
    for (const text of svg.querySelectorAll("text")) {
      const size = parseFloat(getComputedStyle(text).fontSize) * scale;
      if (size > body + 0.5 || size < 10) {
        problems.push(`chart text "${text.textContent}" drawn at ${size.toFixed(1)} px (body ${body} px)`);
      }
      const t = text.getBoundingClientRect();
      if (t.left < box.left - 0.5 || t.right > box.right + 0.5 || t.top < box.top - 0.5 || t.bottom > box.bottom + 0.5) {
        problems.push(`chart text "${text.textContent}" cut by the chart's edge`);
      }
    }
  }
  return problems;
}
