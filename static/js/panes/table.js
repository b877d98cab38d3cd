// panes/table.js — table panes (W&B's wandb.Table): columns of numbers, text, booleans and pictures; a click on a
// column's header sorts by it (again: the other way), numbers as numbers, empty cells last.

/** Sort key of a cell: [rank, value], so that numbers, then text, then pictures, then empty cells follow. */
function key(v) {
  if (v == null) return [3, 0];
  if (typeof v === "number") return [0, v];
  if (typeof v === "boolean") return [0, v ? 1 : 0];
  if (typeof v === "string") return [1, v];
  return [2, ""];
}

/** Order of two cells; `sign` -1 reverses the values but not the kinds (empty cells stay last). */
function compare(a, b, sign) {
  const [ra, va] = key(a);
  const [rb, vb] = key(b);
  if (ra !== rb) return ra - rb;
  if (ra === 1) return sign * va.localeCompare(vb, undefined, { numeric: true });
  return sign * (va < vb ? -1 : va > vb ? 1 : 0);
}

function cell(v) {
  const td = document.createElement("td");
  if (v && typeof v === "object" && v.image) {
    const img = document.createElement("img");
    img.src = `data:${v.image.mime};base64,${v.image.data}`;
    img.alt = v.image.caption || "";
    img.title = v.image.caption || "";
    img.style.maxWidth = "128px";
    img.style.maxHeight = "128px";
    img.style.minWidth = "32px"; // thumbnails of tiny pictures (MNIST digits) are scaled up, pixelated
    img.classList.add("pixelated");
    td.appendChild(img);
  } else if (typeof v === "number") {
    td.className = "num";
    td.textContent = Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(6)));
  } else {
    td.textContent = v == null ? "" : String(v);
  }
  return td;
}

export function render(el, pane, ctx) {
  const wrap = document.createElement("div");
  wrap.className = "hp-table-wrap table-pane";
  const table = document.createElement("table");
  table.className = "hp-table";
  wrap.appendChild(table);
  el.appendChild(wrap);
  let data = { columns: [], rows: [] };
  let sortBy = -1; // column index; -1: the rows as logged
  let descending = false;

  function draw() {
    const rows = data.rows.slice();
    if (sortBy >= 0) {
      rows.sort((a, b) => compare(a[sortBy], b[sortBy], descending ? -1 : 1));
    }
    const head = document.createElement("tr");
    data.columns.forEach((name, k) => {
      const th = document.createElement("th");
      th.textContent = String(name) + (k === sortBy ? (descending ? " ▼" : " ▲") : "");
      th.title = "sort";
      if (k === sortBy) th.dataset.sort = descending ? "desc" : "asc";
      th.addEventListener("click", () => {
        descending = k === sortBy ? !descending : false;
        sortBy = k;
        draw();
      });
      head.appendChild(th);
    });
    const thead = document.createElement("thead");
    thead.appendChild(head);
    const tbody = document.createElement("tbody");
    for (const row of rows) {
      const tr = document.createElement("tr");
      row.forEach((v) => tr.appendChild(cell(v)));
      tbody.appendChild(tr);
    }
    table.replaceChildren(thead, tbody);
  }

  function set(p) {
    pane = p;
    const d = p.data || {};
    data = { columns: Array.isArray(d.columns) ? d.columns : [], rows: Array.isArray(d.rows) ? d.rows : [] };
    if (sortBy >= data.columns.length) sortBy = -1;
    ctx.setInfo(`${data.rows.length} rows`, "");
    draw();
  }

  set(pane);
  return {
    ready: Promise.resolve(),
    update: set,
    extend: () => ctx.refetch(),
    destroy() {
      wrap.remove();
    },
  };
}
