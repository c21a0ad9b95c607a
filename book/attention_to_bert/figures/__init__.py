"""The figures of the book that run in the browser: the figures a reader can move (``interactive``,
with their script ``javascript/figures.js``) and bertviz's attention views drawn offline
(``bertviz_offline``, with the d3 and jQuery it needs in ``javascript/``). Import the modules by
name (``from attention_to_bert.figures import interactive``)."""
