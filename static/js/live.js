// live.js — the one /ws websocket: subscribe, hand message arrays to the page, reconnect with backoff 0.5→5 s.

const MIN_DELAY = 500;
const MAX_DELAY = 5000;
const ACK_WAIT = 1000;

/** ws:/wss: URL of `<base>ws`, matching the page's scheme and host (works behind --base-url and tunnels). */
export function wsUrl(base) {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}${base}ws`;
}

/**
 * One live connection.
 *   subscribe: env name to follow, or null for the env list only.
 *   onOpen(count): once the server confirmed the subscription; count = 1 for the first open, 2.. after reconnects.
 *     The page refetches what it shows there, so nothing published while it was offline is missed.
 *   onMessages(list): each frame's array of messages, in order.
 *   onState(state): "connecting" | "open" | "closed".
 */
export class Live {
  constructor({ base, subscribe = null, onOpen, onMessages, onState }) {
    this.url = wsUrl(base);
    this.subscription = subscribe;
    this.onOpen = onOpen || (() => {});
    this.onMessages = onMessages || (() => {});
    this.onState = onState || (() => {});
    this.ws = null;
    this.opens = 0;
    this.delay = MIN_DELAY;
    this.timer = null;
    this.stopped = false;
    this.state = "closed";
    this.subscribed = false;
    this.ackTimer = null;
    this._wake = () => {
      // Coming back online / to the tab: retry now instead of waiting out the backoff.
      if (!this.ws && this.timer && !this.stopped) {
        clearTimeout(this.timer);
        this.timer = null;
        this._connect();
      }
    };
  }

  start() {
    this.stopped = false;
    window.addEventListener("online", this._wake);
    document.addEventListener("visibilitychange", this._wake);
    this._connect();
    return this;
  }

  stop() {
    this.stopped = true;
    window.removeEventListener("online", this._wake);
    document.removeEventListener("visibilitychange", this._wake);
    clearTimeout(this.timer);
    this.timer = null;
    clearTimeout(this.ackTimer);
    if (this.ws) this.ws.close(1000);
    this.ws = null;
    this._setState("closed");
  }

  get open() {
    return !!this.ws && this.ws.readyState === WebSocket.OPEN;
  }

  /** Change the subscription (env name or null); sent now if open, and on every reconnect. */
  subscribe(env) {
    this.subscription = env;
    this._send({ subscribe: env });
  }

  _send(obj) {
    if (this.open) this.ws.send(JSON.stringify(obj));
  }

  _setState(state) {
    if (state === this.state) return;
    this.state = state;
    try {
      this.onState(state);
    } catch (err) {
      console.warn("paneboard: live state handler failed", err);
    }
  }

  _connect() {
    if (this.stopped) return;
    this._setState("connecting");
    let ws;
    try {
      ws = new WebSocket(this.url);
    } catch (err) {
      console.warn("paneboard: cannot open websocket", err);
      this._retry();
      return;
    }
    this.ws = ws;
    ws.onopen = () => {
      if (ws !== this.ws) return;
      this.delay = MIN_DELAY;
      this.opens += 1;
      this.subscribed = false;
      ws.send(JSON.stringify({ subscribe: this.subscription }));
      this._setState("open");
      // The server confirms with {"type": "subscribed"}; a server that does not is given 1 s.
      this.ackTimer = setTimeout(() => this._subscribed(ws), ACK_WAIT);
    };
    ws.onmessage = (ev) => {
      if (ws !== this.ws) return;
      let data;
      try {
        data = JSON.parse(ev.data);
      } catch {
        console.warn("paneboard: ignoring a non-JSON live frame");
        return;
      }
      const list = (Array.isArray(data) ? data : [data]).filter((m) => m && typeof m === "object");
      const rest = [];
      for (const m of list) {
        if (m.type === "subscribed") this._subscribed(ws);
        else if (m.type === "error") console.warn("paneboard: live channel:", m.error);
        else rest.push(m);
      }
      if (!rest.length) return;
      try {
        this.onMessages(rest);
      } catch (err) {
        console.warn("paneboard: live message handler failed", err);
      }
    };
    ws.onclose = () => {
      if (ws !== this.ws) return;
      this.ws = null;
      this.subscribed = false;
      clearTimeout(this.ackTimer);
      this._setState("closed");
      this._retry();
    };
    // onerror is always followed by onclose; nothing to do there.
  }

  _subscribed(ws) {
    clearTimeout(this.ackTimer);
    if (ws !== this.ws || this.subscribed) return;
    this.subscribed = true;
    try {
      this.onOpen(this.opens);
    } catch (err) {
      console.warn("paneboard: live open handler failed", err);
    }
  }

  _retry() {
    if (this.stopped) return;
    const delay = Math.min(MAX_DELAY, this.delay * (1 + Math.random() * 0.2)); // a little jitter
    this.delay = Math.min(MAX_DELAY, this.delay * 2);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this._connect();
    }, delay);
  }
}

/**
 * The (re)load protocol both pages share: subscribe, then load(); every reconnect loads again.
 * Messages arriving while a load is in flight are buffered and replayed after it (handle(msg, reload)),
 * so nothing published between the snapshot and the replay is lost. onReady() runs after each load that
 * started while subscribed. If the socket cannot open at all (a proxy without websockets), the data still
 * loads after 1.5 s.
 */
export function follow({ base, subscribe, load, handle, onState, onError, onReady }) {
  let loading = null;
  let again = false;
  let buffer = null;
  let started = false;
  const safe = (m) => {
    try {
      handle(m, reload);
    } catch (err) {
      console.error("paneboard: cannot apply a live message", m, err);
    }
  };
  const reload = () => {
    started = true;
    if (loading) {
      again = true;
      return loading;
    }
    loading = (async () => {
      do {
        again = false;
        buffer = [];
        const subscribed = live.subscribed;
        try {
          await load();
          if (subscribed && onReady) onReady();
        } catch (err) {
          if (onError) onError(err);
          else console.warn("paneboard: load failed", err);
        }
        const replay = buffer;
        buffer = null;
        for (const m of replay) safe(m);
      } while (again);
      loading = null;
    })();
    return loading;
  };
  const live = new Live({
    base,
    subscribe,
    onState,
    onOpen: reload,
    onMessages: (list) => {
      for (const m of list) {
        if (buffer) buffer.push(m);
        else safe(m);
      }
    },
  });
  live.start();
  setTimeout(() => started || reload(), 1500);
  return { live, reload };
}
