// The browser client's floors: what each module may import. Only the app layer (app.js, the
// composition root) imports the network layer; rendering imports neither the network nor the
// app layer; the pure core imports only the pure core (no DOM, no network).

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { test } from "node:test";

const STATIC = new URL("../../src/dsh_host/web/static/", import.meta.url);

const LAYERS = {
  core: [
    "board-data.js",
    "board-rows.js",
    "errors.js",
    "i18n.js",
    "json.js",
    "resume.js",
    "session-window.js",
    "streaming.js",
    "time.js",
    "transcript.js",
  ],
  network: ["api.js", "sse.js"],
  rendering: [
    "board.js",
    "chrome.js",
    "delete-session.js",
    "dom.js",
    "nodes.js",
    "notifications.js",
    "panels.js",
    "registry.js",
    "render.js",
    "session-list.js",
    "transcript-view.js",
  ],
  app: ["app-actions.js", "app-navigation.js", "app.js", "session-view.js"],
  // The service worker runs apart from the page: it imports nothing.
  worker: ["sw.js"],
};

/** The layers each layer may import from. */
const MAY_IMPORT = {
  core: ["core"],
  network: [],
  rendering: ["core", "rendering"],
  app: ["core", "rendering", "app", "network"],
  worker: [],
};

const layerOf = new Map(
  Object.entries(LAYERS).flatMap(([layer, files]) => files.map((file) => [file, layer])),
);

function imports(file) {
  const text = readFileSync(new URL(file, STATIC), "utf8");
  return [...text.matchAll(/^import[^;]*?from "\.\/([^"]+)";/gms)].map((match) => match[1]);
}

test("every client module has a layer, and the layers name only modules that exist", () => {
  const files = readdirSync(STATIC).filter((name) => name.endsWith(".js")).sort();
  assert.deepEqual([...layerOf.keys()].sort(), files);
});

test("no module imports above its floor; only app.js imports the network", () => {
  const wrong = [];
  for (const [file, layer] of layerOf) {
    for (const target of imports(file)) {
      const targetLayer = layerOf.get(target);
      if (!MAY_IMPORT[layer].includes(targetLayer)) {
        wrong.push(`${file} (${layer}) -> ${target} (${targetLayer})`);
      }
      if (targetLayer === "network" && file !== "app.js") {
        wrong.push(`${file} -> ${target}: only app.js imports the network`);
      }
    }
  }
  assert.deepEqual(wrong, []);
});
