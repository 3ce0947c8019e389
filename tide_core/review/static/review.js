// TIDE review page. Plain JS, no build step, no external assets.
// Offsets from the API are Python code-point offsets; the DOM counts UTF-16 units, so
// every conversion goes through cpIndex (identity unless the text has astral characters).
// Text is only ever inserted with textContent / text nodes, never as HTML.
"use strict";

const state = {
  meta: null, key: null, notes: [], total: 0, offset: 0, limit: 100, query: "",
  noteId: null, view: null, cpMap: null, selection: null,
  hiddenLabels: new Set(), hiddenRecognizers: new Set(), undoStack: [],
};
const colours = {};
const $ = (id) => document.getElementById(id);

function el(tag, props, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("data-")) e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const c of children) e.append(c);
  return e;
}

function message(text, kind) {
  const m = $("message");
  m.textContent = text || "";
  m.className = kind || "";
}

// -- access -------------------------------------------------------------------------------
// The URL `tide review` prints ends in #login=CODE: a one-time code, in the fragment so that it
// is never sent in a request line. The page swaps it for a session token kept in sessionStorage
// (this scheme, host and port only; it survives reloads of this tab) and sends that token as an
// Authorization header. No cookie is used: browsers send 127.0.0.1's cookies to every port.
const SESSION_KEY = "tide-review-session";
let session = null;

async function login() {
  const m = /^#login=([A-Za-z0-9_-]{1,200})$/.exec(window.location.hash);
  if (m) {
    history.replaceState(null, "", window.location.pathname);  // the code leaves the address bar
    const resp = await fetch("/api/session", {
      method: "POST", credentials: "omit", cache: "no-store",
      headers: { "Content-Type": "application/json" }, body: JSON.stringify({ login: m[1] }),
    });
    let body = null;
    try { body = await resp.json(); } catch (e) { body = null; }
    if (resp.ok && body && typeof body.session === "string") sessionStorage.setItem(SESSION_KEY, body.session);
    else if (!sessionStorage.getItem(SESSION_KEY)) {
      const err = (body && body.error) || { code: String(resp.status), message: resp.statusText, hint: "" };
      throw new Error(`[${err.code}] ${err.message}${err.hint ? " -- " + err.hint : ""}`);
    }
  }
  session = sessionStorage.getItem(SESSION_KEY);
  if (!session) {
    throw new Error("[E875] this tab has no review session -- open the URL `tide review` printed (it ends in #login=...)");
  }
}

async function api(path, options) {
  const opts = options || {};
  const headers = { ...(opts.headers || {}), Authorization: `Bearer ${session}` };
  const resp = await fetch(path, { ...opts, headers, credentials: "omit", cache: "no-store" });
  let body = null;
  try { body = await resp.json(); } catch (e) { body = null; }
  if (!resp.ok) {
    const err = (body && body.error) || { code: String(resp.status), message: resp.statusText, hint: "" };
    throw Object.assign(new Error(`[${err.code}] ${err.message}${err.hint ? " -- " + err.hint : ""}`), { api: err });
  }
  return body;
}

function post(path, data) {
  return api(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(data) });
}

// -- code points <-> UTF-16 ---------------------------------------------------------------
function makeCpMap(text) {
  if (!/[\uD800-\uDFFF]/.test(text)) return null;
  const map = [0];
  let u = 0;
  for (const ch of text) { u += ch.length; map.push(u); }
  return map;
}
function cpToU16(map, i) { return map ? map[Math.min(i, map.length - 1)] : i; }
function u16ToCp(map, u) {
  if (!map) return u;
  let lo = 0, hi = map.length - 1;
  while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (map[mid] <= u) lo = mid; else hi = mid - 1; }
  return lo;
}

// -- setup --------------------------------------------------------------------------------
async function init() {
  try {
    await login();
    state.meta = await api("/api/meta");
  } catch (e) { message(e.message, "error"); return; }
  const meta = state.meta;
  $("study-name").textContent = `— study ${meta.study}`;
  const keySel = $("key-select");
  const keys = [...meta.keys];
  if (meta.key && !keys.includes(meta.key)) keys.unshift(meta.key);
  keySel.append(el("option", { value: "", text: "(none)" }));
  for (const k of keys) keySel.append(el("option", { value: k, text: k }));
  state.key = meta.key || (keys.length ? keys[0] : "");
  keySel.value = state.key;
  keySel.addEventListener("change", () => {
    state.key = keySel.value;
    if (state.pile) loadNotes();
    if (state.noteId) openNote(state.noteId);
  });
  const boxes = $("label-boxes");
  const addLabel = $("add-label");
  for (const { label, colour } of meta.labels) {
    colours[label] = colour;
    const cb = el("input", { type: "checkbox", checked: true, "data-label": label });
    cb.addEventListener("change", () => {
      if (cb.checked) state.hiddenLabels.delete(label); else state.hiddenLabels.add(label);
      render();
    });
    const sw = el("span", { class: "swatch" });
    sw.style.backgroundColor = colour;
    boxes.append(el("label", { class: "legend-item", "data-label": label }, cb, sw, label));
    addLabel.append(el("option", { value: label, text: label }));
  }
  $("show-rejected").addEventListener("change", render);
  $("show-pile").addEventListener("change", () => { state.pile = $("show-pile").checked; state.offset = 0; loadNotes(); });
  $("note-search").addEventListener("input", debounce(() => {
    state.query = $("note-search").value.trim(); state.offset = 0; loadNotes();
  }, 200));
  $("page-prev").addEventListener("click", () => { state.offset = Math.max(0, state.offset - state.limit); loadNotes(); });
  $("page-next").addEventListener("click", () => {
    if (state.offset + state.limit < state.total) { state.offset += state.limit; loadNotes(); }
  });
  $("add-span").addEventListener("click", addSelected);
  $("undo-last").addEventListener("click", undoLast);
  document.addEventListener("selectionchange", trackSelection);
  await loadNotes();
  const first = state.notes[0];
  if (first) openNote(first.note_id);
}

function debounce(fn, ms) {
  let t = null;
  return (...a) => { clearTimeout(t); t = setTimeout(() => fn(...a), ms); };
}

// -- note list ----------------------------------------------------------------------------
async function loadNotes() {
  const qs = new URLSearchParams({ offset: state.offset, limit: state.limit, q: state.query });
  let page;
  try {
    if (state.pile) {  // the PHI Guard's review pile: riskiest first, no scores
      const pile = await api(`/api/pile?${new URLSearchParams({ key: state.key })}`);
      page = { notes: pile.notes, total: pile.total, offset: 0 };
    } else {
      page = await api(`/api/notes?${qs}`);
    }
  } catch (e) { message(e.message, "error"); return; }
  state.notes = page.notes;
  state.total = page.total;
  $("note-count").textContent = `${page.total} note(s)` +
    (state.meta.n_quarantined ? `, ${state.meta.n_quarantined} input row(s) failed validation` : "");
  const from = page.total ? page.offset + 1 : 0;
  $("page-info").textContent = `${from}–${page.offset + page.notes.length} of ${page.total}`;
  renderNoteList();
}

function renderNoteList() {
  const ul = $("note-list");
  ul.replaceChildren();
  for (const n of state.notes) {
    const badges = el("span");
    if (!n.recognized) badges.append(el("span", { class: "badge warn", text: "not recognized" }));
    else if (n.stale) badges.append(el("span", { class: "badge warn", text: "stale" }));
    else badges.append(el("span", { class: "badge", text: `${n.n_spans}`, title: "recognizer spans" }));
    if (n.n_review) badges.append(" ", el("span", { class: "badge review", text: `${n.n_review} reviewed`, title: "reviewer decisions" }));
    const li = el("li", { "data-note-id": n.note_id },
      el("span", {}, el("span", { text: n.note_id }), el("br"),
        el("span", { class: "meta", text: [n.note_type, n.note_date].filter(Boolean).join(" · ") })),
      badges);
    if (n.note_id === state.noteId) li.classList.add("selected");
    li.addEventListener("click", () => openNote(n.note_id));
    ul.append(li);
  }
}

// -- one note -----------------------------------------------------------------------------
async function openNote(noteId) {
  const qs = state.key ? `?key=${encodeURIComponent(state.key)}` : "";
  let view;
  try { view = await api(`/api/notes/${encodeURIComponent(noteId)}${qs}`); } catch (e) { message(e.message, "error"); return; }
  state.noteId = noteId;
  state.view = view;
  state.cpMap = makeCpMap(view.text);
  state.selection = null;
  updateSelectionInfo();
  for (const li of $("note-list").children) li.classList.toggle("selected", li.dataset.noteId === noteId);
  buildRecognizerFilter();
  render();
}

function buildRecognizerFilter() {
  const names = new Set(state.view.spans.map((s) => s.recognizer));
  if (state.view.deid.spans) for (const s of state.view.deid.spans) names.add(s.recognizer);
  const box = $("recognizer-boxes");
  box.replaceChildren();
  for (const name of [...names].sort()) {
    const cb = el("input", { type: "checkbox", checked: !state.hiddenRecognizers.has(name), "data-recognizer": name });
    cb.addEventListener("change", () => {
      if (cb.checked) state.hiddenRecognizers.delete(name); else state.hiddenRecognizers.add(name);
      render();
    });
    box.append(el("label", {}, cb, " " + name));
  }
  if (!names.size) box.append(el("span", { class: "meta", text: "no spans" }));
}

function visible(span) {
  if (state.hiddenLabels.has(span.label) || state.hiddenRecognizers.has(span.recognizer)) return false;
  if (span.status === "rejected" && !$("show-rejected").checked) return false;
  return true;
}

function render() {
  const v = state.view;
  if (!v) return;
  $("note-title").textContent = `Note ${v.note_id}`;
  const flags = $("note-flags");
  flags.replaceChildren();
  const md = v.metadata || {};
  for (const x of [md.note_type, md.note_date, md.site].filter(Boolean)) flags.append(el("span", { class: "badge", text: x }));
  if (!v.recognition) flags.append(el("span", { class: "badge warn", text: "not recognized: run recognition first" }));
  else if (v.recognition.status !== "ok") flags.append(el("span", { class: "badge warn", text: `recognition failed (${v.recognition.error_code})` }));
  else if (v.recognition.stale) flags.append(el("span", { class: "badge warn", text: "text changed since recognition: spans are stale" }));
  const origSpans = v.spans.filter((s) => s.in_text && visible(s));
  renderText($("orig-text"), v.text, origSpans, state.cpMap, (s) => focusSpan(s));
  renderDeid();
  renderTable();
}

const PRIORITY = { added: 3, active: 2, rejected: 1 };

// Split the text at every span boundary; each piece becomes a <mark> styled by its top span.
function renderText(container, text, spans, cpMap, onClick, startKey = "start", endKey = "end") {
  container.replaceChildren();
  const cuts = new Set([0, text.length]);
  const conv = spans.map((s) => ({ s, a: cpToU16(cpMap, s[startKey]), b: cpToU16(cpMap, s[endKey]) }));
  for (const c of conv) { cuts.add(c.a); cuts.add(c.b); }
  const points = [...cuts].filter((x) => x >= 0 && x <= text.length).sort((x, y) => x - y);
  const frag = document.createDocumentFragment();
  for (let i = 0; i + 1 < points.length; i++) {
    const a = points[i], b = points[i + 1];
    const piece = text.slice(a, b);
    const cover = conv.filter((c) => c.a <= a && c.b >= b).map((c) => c.s);
    if (!cover.length) { frag.append(document.createTextNode(piece)); continue; }
    cover.sort((x, y) => (PRIORITY[y.status] || 0) - (PRIORITY[x.status] || 0));
    const top = cover[0];
    const m = el("mark", {
      class: `tide-span status-${top.status || "released"}`, text: piece,
      "data-label": top.label, "data-status": top.status || "released",
      "data-start": String(top[startKey]), "data-end": String(top[endKey]),
      title: cover.map((s) => `${s.label} · ${s.recognizer}${s.status ? " · " + s.status : ""}${s.operator ? " · " + s.operator : ""}`).join("\n"),
    });
    m.style.backgroundColor = colours[top.label] || "#ddd";
    if (onClick) m.addEventListener("click", (ev) => { if (window.getSelection().isCollapsed) { ev.preventDefault(); onClick(top); } });
    frag.append(m);
  }
  container.append(frag);
}

function renderDeid() {
  const d = state.view.deid;
  const status = $("deid-status");
  const pane = $("deid-text");
  $("deid-key").textContent = d.key ? `(key ${d.key})` : "";
  pane.replaceChildren();
  status.className = "";
  if (d.status !== "released") {
    let text = d.message;
    if (d.quarantine && d.quarantine.length) text += ": " + d.quarantine.map((q) => `${q.code} (${q.stage}) ${q.reason}`).join("; ");
    status.textContent = text;
    status.setAttribute("data-status", d.status);
    return;
  }
  status.className = d.outdated ? "outdated" : "released";
  status.setAttribute("data-status", d.outdated ? "outdated" : "released");
  status.textContent = `released ${d.released_at || ""}` +
    (d.outdated ? " — reviewer decisions were made after this release: re-run anonymization to apply them" : "");
  const spans = d.spans.filter((s) => !state.hiddenLabels.has(s.label) && !state.hiddenRecognizers.has(s.recognizer));
  renderText(pane, d.text, spans, makeCpMap(d.text), null, "out_start", "out_end");
}

function spanText(s) {
  const t = state.view.text.slice(cpToU16(state.cpMap, s.start), cpToU16(state.cpMap, s.end));
  return t.length > 80 ? t.slice(0, 77) + "…" : t;
}

function renderTable() {
  const tbody = $("span-table").tBodies[0];
  tbody.replaceChildren();
  for (const s of state.view.spans) {
    const sw = el("span", { class: "swatch" });
    sw.style.backgroundColor = colours[s.label] || "#ddd";
    const decision = el("td");
    if (s.status === "active") {
      const b = el("button", { type: "button", class: "act-reject", text: "wrong", title: "this span is not PHI (or wrong label/extent)" });
      b.addEventListener("click", () => decide("reject", s));
      decision.append(b);
    } else {
      const b = el("button", { type: "button", class: "act-undo", text: "undo", title: "remove the reviewer decision" });
      b.addEventListener("click", () => undo(s));
      decision.append(b);
    }
    const status = s.status === "added" ? "added by reviewer" : s.status === "rejected" ? "rejected by reviewer" : "recognized";
    const tr = el("tr", { class: `span-row status-${s.status}`, "data-start": String(s.start), "data-end": String(s.end), "data-label": s.label, "data-status": s.status },
      el("td", {}, sw, s.label),
      el("td", { class: "span-text", text: s.in_text ? spanText(s) : "(outside the current text)" }),
      el("td", { text: `${s.start}–${s.end}` }),
      el("td", { text: s.recognizer }),
      el("td", { text: s.origin === "recognizer" ? s.score.toFixed(2) : "" }),
      el("td", { text: status }),
      decision);
    if (!visible(s)) tr.classList.add("filtered");
    tr.addEventListener("click", (ev) => { if (ev.target.tagName !== "BUTTON") focusSpan(s); });
    tbody.append(tr);
  }
}

function focusSpan(s) {
  const sel = `[data-start="${s.start}"][data-end="${s.end}"][data-label="${s.label}"]`;
  for (const x of document.querySelectorAll(".focus")) x.classList.remove("focus");
  const row = document.querySelector(`#span-table tr${sel}`);
  const mark = document.querySelector(`#orig-text mark${sel}`);
  if (row) { row.classList.add("focus"); row.scrollIntoView({ block: "nearest" }); }
  if (mark) { mark.classList.add("focus"); mark.scrollIntoView({ block: "nearest" }); }
}

// -- decisions ----------------------------------------------------------------------------
async function decide(decision, s) {
  const body = { start: s.start, end: s.end, label: s.label };
  try {
    await post(`/api/notes/${encodeURIComponent(state.noteId)}/${decision}`, body);
  } catch (e) { message(e.message, "error"); return; }
  state.undoStack.push({ noteId: state.noteId, ...body });
  $("undo-last").disabled = false;
  message(`${decision === "reject" ? "rejected" : "added"} ${s.label} ${s.start}–${s.end}`, "ok");
  await refresh();
}

async function undo(s, fromStack) {
  const noteId = fromStack ? s.noteId : state.noteId;
  try {
    await post(`/api/notes/${encodeURIComponent(noteId)}/undo`, { start: s.start, end: s.end, label: s.label });
  } catch (e) { message(e.message, "error"); return false; }
  message(`undid decision on ${s.label} ${s.start}–${s.end}`, "ok");
  if (!fromStack) {
    state.undoStack = state.undoStack.filter((u) => !(u.noteId === noteId && u.start === s.start && u.end === s.end && u.label === s.label));
    $("undo-last").disabled = !state.undoStack.length;
  }
  if (noteId !== state.noteId) await openNote(noteId); else await refresh();
  return true;
}

async function undoLast() {
  const last = state.undoStack.pop();
  $("undo-last").disabled = !state.undoStack.length;
  if (last) await undo(last, true);
}

async function refresh() {
  await openNote(state.noteId);
  await loadNotes();
}

// -- selection -> missed span -------------------------------------------------------------
function trackSelection() {
  const pane = $("orig-text");
  const sel = window.getSelection();
  if (!state.view || !sel.rangeCount || sel.isCollapsed) { return; }
  const range = sel.getRangeAt(0);
  if (!pane.contains(range.startContainer) || !pane.contains(range.endContainer)) return;
  const pre = document.createRange();
  pre.selectNodeContents(pane);
  pre.setEnd(range.startContainer, range.startOffset);
  let a = pre.toString().length;
  let b = a + range.toString().length;
  const text = state.view.text;
  while (a < b && /\s/.test(text[a])) a++;
  while (b > a && /\s/.test(text[b - 1])) b--;
  if (a >= b) { state.selection = null; updateSelectionInfo(); return; }
  state.selection = { start: u16ToCp(state.cpMap, a), end: u16ToCp(state.cpMap, b), preview: text.slice(a, b) };
  updateSelectionInfo();
}

function updateSelectionInfo() {
  const s = state.selection;
  $("add-span").disabled = !s;
  $("selection-info").textContent = s ? `${s.start}–${s.end} “${s.preview.length > 60 ? s.preview.slice(0, 57) + "…" : s.preview}”` : "";
}

async function addSelected() {
  const s = state.selection;
  if (!s) return;
  state.selection = null;
  updateSelectionInfo();
  await decide("add", { start: s.start, end: s.end, label: $("add-label").value });
}

// exposed for tests and the console: select [start, end) of the original text programmatically
window.tideReview = {
  select(start, end) {
    state.selection = { start, end, preview: state.view.text.slice(cpToU16(state.cpMap, start), cpToU16(state.cpMap, end)) };
    updateSelectionInfo();
  },
  state,
};

document.addEventListener("DOMContentLoaded", init);
