/* The book's site loads d3 and jQuery itself (book/_static/vendored): register them as the AMD
   modules "d3" and "jquery", so that bertviz's require.js code uses them and never fetches its CDN
   copies. Loaded after d3, jQuery and require.js, only on pages that hold a bertviz view. */
define("d3", [], function () { return window.d3; });
define("jquery", [], function () { return window.jQuery; });
