// Renders /openapi.yaml with Redoc's standalone bundle. A file, not an inline script: the page's policy runs only
// scripts carrying this answer's nonce, and styles only with it too. It loads before the bundle because the bundle
// adds <style> elements as soon as it loads, before Redoc.init could hand it the nonce: every <style> created on
// this page gets the nonce, so the policy needs no unsafe-inline grant. (A script able to run here can read the
// nonce anyway; this grants nothing to anything else.)
(function () {
  'use strict';
  var self = document.currentScript;
  var nonce = self ? self.nonce : '';
  if (!nonce) return;
  var create = document.createElement;
  document.createElement = function (tagName, options) {
    var element = create.call(document, tagName, options);
    if (String(tagName).toLowerCase() === 'style') element.setAttribute('nonce', nonce);
    return element;
  };
  var font = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
  // The bundle, the next script of the page, has run by DOMContentLoaded.
  document.addEventListener('DOMContentLoaded', function () {
    var root = document.getElementById('reference');
    if (!root || !window.Redoc) return;
    window.Redoc.init(
      root.getAttribute('data-spec-url'),
      {
        nonce: nonce,
        expandResponses: '200,201,202',
        jsonSampleExpandLevel: 3,
        pathInMiddlePanel: true,
        requiredPropsFirst: true,
        theme: {
          colors: { primary: { main: '#1d3a6b' } },
          typography: { fontFamily: font, headings: { fontFamily: font }, code: { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace' } },
        },
      },
      root,
    );
  });
})();
