// storage.js — the one guarded way to localStorage/sessionStorage: a browser that refuses storage (a page framed
// from another site, strict privacy settings) throws on the property access itself, and a full quota throws on
// writes. Values then last for this page only (an in-memory map), so no caller needs its own try/catch.

const memory = { local: new Map(), session: new Map() };

/** The Storage object of `area` ("local" | "session"), or null where the browser refuses it. */
function area(name) {
  try {
    const s = name === "session" ? window.sessionStorage : window.localStorage;
    return s || null;
  } catch {
    return null;
  }
}

/** The stored string for `key`, or null. */
export function getItem(name, key) {
  const s = area(name);
  if (s) {
    try {
      const v = s.getItem(key);
      if (v !== null) return v;
    } catch {
      // refused on read: fall through to this page's copy
    }
  }
  return memory[name].has(key) ? memory[name].get(key) : null;
}

/** Store `value` (a string) under `key`; null or undefined removes it. */
export function setItem(name, key, value) {
  const m = memory[name];
  if (value === null || value === undefined) m.delete(key);
  else m.set(key, String(value));
  const s = area(name);
  if (!s) return;
  try {
    if (value === null || value === undefined) s.removeItem(key);
    else s.setItem(key, String(value));
  } catch {
    // private mode or a full quota: the in-memory copy lasts until the page closes
  }
}

/** JSON helpers: the parsed value, or `fallback` when nothing (or nothing parseable) is stored. */
export function getJSON(name, key, fallback) {
  try {
    const v = JSON.parse(getItem(name, key) || "null");
    return v === null ? fallback : v;
  } catch {
    return fallback;
  }
}

export function setJSON(name, key, value) {
  setItem(name, key, JSON.stringify(value));
}
