// A display formula wider than the text column scrolls inside its box (book.css). Such a box must
// be reachable with the keyboard (WCAG 2.1.1; axe "scrollable-region-focusable"): once MathJax has
// typeset the page, give each formula that overflows a tab stop and a name.
window.addEventListener("load", () => {
  const mark = () => {
    let count = 0;
    document.querySelectorAll('mjx-container[display="true"]').forEach((formula) => {
      const box = formula.closest("div.math") || formula;
      if (formula.scrollWidth > formula.clientWidth || box.scrollWidth > box.clientWidth) {
        count += 1;
        formula.tabIndex = 0;
        formula.setAttribute("role", "region");
        formula.setAttribute("aria-label", `wide formula ${count} (scrolls sideways)`);
      }
    });
  };
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    MathJax.startup.promise.then(mark);
  } else {
    mark();
  }
});
