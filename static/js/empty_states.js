// empty_states.js — what a page with no runs says: how to log the first one to *this* server (its URL filled in),
// with the Client and the SummaryWriter, so the snippet can be pasted as it is.
import * as api from "./api.js";
import { h } from "./dom.js";

/** This server's URL as a script reaches it (origin and base path, no trailing slash). */
export const serverUrl = () => (window.location.origin + api.url("")).replace(/\/+$/, "");

/** The two ways to log a first run, as code for this server. */
export function firstRunSnippets(env = "my-project/run-1") {
  const server = serverUrl();
  return {
    client: `import paneboard\n\nclient = paneboard.Client(server="${server}", env="${env}", config={"lr": 1e-3})\n` +
      `for step in range(100):\n    client.line(X=[step], Y=[1 / (step + 1)], win="loss", update="append", opts={"title": "loss"})\n` +
      "client.flush(timeout=10)",
    writer: `from paneboard import SummaryWriter\n\nwriter = SummaryWriter("${env}", server="${server}")\n` +
      `for step in range(100):\n    writer.add_scalar("loss", 1 / (step + 1), step)\nwriter.close()`,
  };
}

/** The teaching empty state: a sentence, both snippets and where the run will appear. */
export function firstRunHelp(title = "No runs yet") {
  const { client, writer } = firstRunSnippets();
  return h("div", { class: "empty first-run" },
    h("div", { class: "first-run-title", text: title }),
    h("p", { text: "Log a run from a training script; it appears here live. The part before the first “/” of its " +
      "name is its project." }),
    h("div", { class: "first-run-label", text: "With the client" }),
    h("pre", { class: "snippet snippet-client" }, h("code", { text: client })),
    h("div", { class: "first-run-label", text: "Or as TensorBoard's SummaryWriter" }),
    h("pre", { class: "snippet snippet-writer" }, h("code", { text: writer })),
    h("p", { class: "muted" }, "Or set ", h("code", { text: `PANEBOARD_URL=${serverUrl()}` }),
      " and leave server= out; a TensorBoard logdir imports with ", h("code", { text: "dash-server import <logdir>" }), "."));
}
