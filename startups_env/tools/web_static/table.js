// The web table's page: a form to start a game, then the game as the server sends it
// (startups_env/tools/web.py). Everything shown comes from the server's view of the game.
"use strict";

const $ = (id) => document.getElementById(id);
const KEY = "startups-web-session";
const token = new URLSearchParams(location.search).get("token");
let catalog = null;   // GET /api/games
let view = null;      // the game's last view
let timer = null;     // the live watch's timer

async function api(method, path, body) {
  const headers = { "Content-Type": "application/json" };
  if (token) headers["X-Token"] = token;
  document.body.dataset.busy = "1";
  try {
    const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const answer = await response.json();
    if (!response.ok) throw new Error(answer.error || response.statusText);
    return answer;
  } finally {
    document.body.dataset.busy = "0";
  }
}

function showError(message) {
  $("error").textContent = message || "";
  $("error").hidden = !message;
}

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (cls) node.className = cls;
  return node;
}

// ------------------------------------------------------------------ the form
function fillForm() {
  const game = catalog.games.find((g) => g.name === $("game").value) || catalog.games[0];
  $("players").min = game.min_players;
  $("players").max = game.max_players;
  const players = Math.min(Math.max(+$("players").value || 4, game.min_players), game.max_players);
  $("players").value = players;
  const seat = $("seat").value;
  $("seat").replaceChildren(el("option", "watch: bots only"));
  $("seat").firstChild.value = "watch";
  for (let s = 0; s < players; s++) {
    const option = el("option", `seat ${s}` + (s === 0 ? " (first to play)" : ""));
    option.value = String(s);
    $("seat").append(option);
  }
  $("seat").value = [...$("seat").options].some((o) => o.value === seat) ? seat : "0";
  $("bot-names").replaceChildren(...game.bots.map((name) => { const o = el("option"); o.value = name; return o; }));
  $("ruleset").replaceChildren(...game.rulesets.map((name) => { const o = el("option", name); o.value = name; return o; }));
}

async function loadCatalog() {
  catalog = await api("GET", "/api/games");
  $("game").replaceChildren(...catalog.games.map((g) => { const o = el("option", g.title); o.value = g.name; return o; }));
  const d = catalog.defaults || {};
  if (d.game) $("game").value = d.game;
  if (d.players) $("players").value = d.players;
  fillForm();
  if (d.seat !== undefined) $("seat").value = d.seat === null ? "watch" : String(d.seat);
  if (d.bots) $("bots").value = d.bots;
  if (d.ruleset && [...$("ruleset").options].some((o) => o.value === d.ruleset)) $("ruleset").value = d.ruleset;
  if (d.seed !== undefined && d.seed !== null) $("seed").value = d.seed;
}

async function startGame(event) {
  event.preventDefault();
  const seat = $("seat").value === "watch" ? null : +$("seat").value;
  const bots = $("bots").value.trim();
  const body = { game: $("game").value, players: +$("players").value, seat, ruleset: $("ruleset").value,
                 reasons: $("reasons").checked };
  if (bots) body.bots = splitSpecs(bots);
  if ($("seed").value !== "") body.seed = +$("seed").value;
  try { show(await api("POST", "/api/new", body)); } catch (e) { showError(e.message); }
}

// Commas inside a spec's brackets (search[a=1,b=2]) do not split it.
function splitSpecs(text) {
  const out = []; let depth = 0; let part = "";
  for (const ch of text) {
    if (ch === "[") depth++;
    if (ch === "]") depth--;
    if (ch === "," && depth === 0) { out.push(part.trim()); part = ""; } else part += ch;
  }
  out.push(part.trim());
  return out.filter((s) => s);
}

async function openLog() {
  const file = $("open-log").files[0];
  if (!file) return;
  try {
    show(await api("POST", "/api/open", { log: JSON.parse(await file.text()) }));
  } catch (e) { showError(e.message); }
  $("open-log").value = "";
}

// ------------------------------------------------------------------ the game
function show(next) {
  showError("");
  view = next;
  localStorage.setItem(KEY, view.session);
  $("setup").hidden = true;
  $("play").hidden = false;
  $("title").textContent = `${view.title}: ${view.mode}`;
  const turn = view.done ? "game over" : view.your_turn ? "your turn" : `${seatName(view.to_act)} to act`;
  $("status").textContent = `${view.title} · ${view.players.length} players · move ${view.moves} · ${turn}`;
  $("seats").replaceChildren(...view.players.map((name, s) => {
    const item = el("li", seatName(s));
    if (s === view.seat) item.classList.add("you");
    if (s === view.to_act) item.classList.add("to-act");
    return item;
  }));
  $("table").textContent = view.table;
  showActions();
  showLog();
  showResult();
  $("watch").hidden = view.mode === "play";
  $("save").hidden = view.mode === "play" && !view.done;  // a log holds every hand: not before the end
  if (!view.can_advance) stopLive();
  document.body.dataset.moves = String(view.moves);
}

function seatName(s) {
  return `P${s} ${view.players[s]}`;
}

function showActions() {
  const groups = new Map();
  for (const action of view.legal) {
    const key = action.label.split(" ")[0];
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(action);
  }
  const nodes = [];
  for (const [key, actions] of groups) {
    const group = el("div", undefined, "group");
    group.append(el("b", key));
    for (const action of actions) {
      const button = el("button", action.label, "action");
      button.type = "button";
      button.dataset.action = String(action.id);
      button.addEventListener("click", () => act(action.id));
      group.append(button);
    }
    nodes.push(group);
  }
  if (!nodes.length && view.mode === "play" && !view.done) nodes.push(el("p", "waiting for the bots…", "waiting"));
  $("actions").replaceChildren(...nodes);
}

function showLog() {
  $("log").replaceChildren(...view.log.map((line) => {
    const item = el("li", `${seatName(line.seat)}: ${line.move}`, line.seat === view.seat ? "mine" : "");
    item.value = line.n;
    if (line.reason) item.append(el("span", line.reason, "reason"));
    return item;
  }));
  $("log").scrollTop = $("log").scrollHeight;
}

function showResult() {
  const result = view.result;
  $("result").hidden = !result;
  if (!result) return;
  const table = el("table");
  table.id = "result-table";
  const head = el("tr");
  head.append(el("th", "seat"), el("th", "score"), el("th", "rank"));
  table.append(head);
  result.scores.forEach((score, s) => {
    const row = el("tr");
    row.dataset.seat = String(s);
    row.dataset.score = String(score);
    row.dataset.rank = String(result.ranks[s]);
    row.append(el("td", seatName(s)), el("td", String(score)), el("td", String(result.ranks[s] + 1)));
    table.append(row);
  });
  const winners = result.winners.map(seatName).join(", ");
  $("result").replaceChildren(el("b", `Game over${result.truncated ? " (turn cap)" : ""}. Won by ${winners}.`), table);
}

async function act(action) {
  try {
    show(await api("POST", "/api/act", { session: view.session, action, expect_moves: view.moves }));
  } catch (e) { showError(e.message); }
}

async function step() {
  if (!view || !view.can_advance) return stopLive();
  try {
    show(await api("POST", "/api/advance", { session: view.session, steps: 1, expect_moves: view.moves }));
  } catch (e) { stopLive(); showError(e.message); }
}

function stopLive() {
  if (timer) clearTimeout(timer);
  timer = null;
  $("live").textContent = "Play";
}

function live() {
  if (timer) return stopLive();
  $("live").textContent = "Pause";
  const tick = async () => {
    await step();
    if (timer) timer = setTimeout(tick, +$("speed").value);
  };
  timer = setTimeout(tick, 0);
}

async function saveLog() {
  try {
    const log = await api("GET", `/api/log?session=${encodeURIComponent(view.session)}`);
    const link = el("a");
    link.href = URL.createObjectURL(new Blob([JSON.stringify(log)], { type: "application/json" }));
    link.download = `${view.game}-game.json`;
    link.click();
  } catch (e) { showError(e.message); }
}

function newGame() {
  stopLive();
  localStorage.removeItem(KEY);
  view = null;
  $("play").hidden = true;
  $("setup").hidden = false;
  $("title").textContent = "web table";
  document.body.dataset.moves = "-1";
}

async function main() {
  $("setup-form").addEventListener("submit", startGame);
  $("game").addEventListener("change", fillForm);
  $("players").addEventListener("change", fillForm);
  $("open-log").addEventListener("change", openLog);
  $("step").addEventListener("click", step);
  $("live").addEventListener("click", live);
  $("speed").addEventListener("input", () => { $("speed-ms").textContent = $("speed").value; });
  $("save").addEventListener("click", saveLog);
  $("new-game").addEventListener("click", newGame);
  try { await loadCatalog(); } catch (e) { return showError(e.message); }
  const session = new URLSearchParams(location.search).get("session") || localStorage.getItem(KEY);
  if (session) {  // the game this page played before it was closed
    try { show(await api("GET", `/api/view?session=${encodeURIComponent(session)}`)); } catch (e) { newGame(); }
  }
}

main();
