// The browser client's floors: what each module may import. Only the app layer (app.js, the
// composition root) imports the network layer; rendering imports neither the network nor the
// app layer; the pure core imports only the pure core (no DOM, no network). The Schedule
// plugin's modules have floors of their own: its pure core, the DOM its entries share, and the
// entries (the modules that register something), which no other module imports.

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

function imports(file, folder = STATIC) {
  const text = readFileSync(new URL(file, folder), "utf8");
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

const PLUGIN = new URL("../../src/dsh_schedule_ui/static/", import.meta.url);

const PLUGIN_LAYERS = {
  core: ["occurrence.js", "panel-state.js", "schedule-words.js", "sent-notices.js"],
  rendering: ["edit-form.js", "occurrence-controls.js", "schedule-dom.js"],
  entry: ["all-reminders.js", "reminder-row.js", "reminders-panel.js", "tool-summaries.js"],
};

const PLUGIN_MAY_IMPORT = {
  core: ["core"],
  rendering: ["core", "rendering"],
  entry: ["core", "rendering"],
};

const pluginLayerOf = new Map(
  Object.entries(PLUGIN_LAYERS).flatMap(([layer, files]) => files.map((file) => [file, layer])),
);

test("every plugin module has a layer, and the layers name only modules that exist", () => {
  const files = readdirSync(PLUGIN).filter((name) => name.endsWith(".js")).sort();
  assert.deepEqual([...pluginLayerOf.keys()].sort(), files);
});

test("no plugin module imports above its floor, nor anything but its sibling modules", () => {
  const wrong = [];
  for (const [file, layer] of pluginLayerOf) {
    const text = readFileSync(new URL(file, PLUGIN), "utf8");
    const all = [...text.matchAll(/^import[^;]*?from "([^"]+)";/gms)].map((match) => match[1]);
    for (const target of all) {
      if (!target.startsWith("./")) wrong.push(`${file} -> ${target}: not a sibling module`);
    }
    for (const target of imports(file, PLUGIN)) {
      const targetLayer = pluginLayerOf.get(target);
      if (!PLUGIN_MAY_IMPORT[layer].includes(targetLayer)) {
        wrong.push(`${file} (${layer}) -> ${target} (${targetLayer})`);
      }
    }
  }
  assert.deepEqual(wrong, []);
});
