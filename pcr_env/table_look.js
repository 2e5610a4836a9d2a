// The drawing of a Pass Cut Run table, shared by the replay viewer (pcr_env/replay_viewer.html) and the browser table
// (agents/web/page.html): pcr_env.replay.with_table_look() puts this file inline in both pages, before their own script.
// Cards are names as the records write them ("10H", "QS"); a round is a pcr-replay record's round (R.result etc.).
window.pcrLook = (function () {
  "use strict";
  const SYM = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
  const SUIT_NAME = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
  const DISPLAY_SUITS = ["S", "H", "C", "D"];  // black and red alternate
  const RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"];
  const $ = (id) => document.getElementById(id);
  const suitOf = (c) => c.slice(-1), rankOf = (c) => c.slice(0, -1);
  const isRed = (s) => s === "H" || s === "D";
  const colour = (s) => (isRed(s) ? "red" : "black");
  const esc = (t) => String(t).replace(/[&<>"]/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[ch]));
  const cardHtml = (c) => `<span class="${colour(suitOf(c))}">${rankOf(c)}${SYM[suitOf(c)]}</span>`;
  const suitHtml = (s) => `<span class="${colour(s)}">${SYM[s]}</span>`;
  const team = (t) => `<span class="t${t}">Team ${t}</span>`;

  // Where the k-th place around the table is: k = 0 at the bottom, then clockwise on screen (to its left).
  function seatPos(k, players, rx, ry, cy) {
    const a = Math.PI / 2 + (2 * Math.PI * k) / players;
    return [390 + rx * Math.cos(a), cy + ry * Math.sin(a)];
  }
  // One seat's box on the table: o = {seat, x, y, name, acting, cls, dealer, declarer, body}.
  function drawSeat(table, o) {
    const el = document.createElement("div"), t = o.seat % 2;
    el.className = `seat team${t}` + (o.acting ? " acting" : "") + (o.cls || "");
    el.dataset.seat = o.seat;
    el.style.left = o.x + "px"; el.style.top = o.y + "px";
    const badges = (o.dealer ? '<span class="badge dealer" title="dealer">D</span>' : "")
                 + (o.declarer ? '<span class="badge declarer" title="declarer">decl.</span>' : "");
    el.innerHTML = `<div class="seat-head"><span class="seat-name" title="${esc(o.name)}">${esc(o.name)}</span>`
      + `<span>seat ${o.seat} \u00b7 <span class="t${t}">T${t}</span>${badges}</span></div>` + o.body;
    table.appendChild(el);
  }
  // A card of the trick in the middle, at (x, y), toward its player; the trick's winner glows.
  function drawTrickCard(table, x, y, play, wins) {
    const el = document.createElement("div"), s = suitOf(play.card);
    el.className = `card ${colour(s)}` + (wins ? " winner" : "");
    el.dataset.seat = play.seat; el.dataset.card = play.card;
    el.style.left = x + "px"; el.style.top = y + "px";
    el.innerHTML = `<div class="cr">${rankOf(play.card)}</div><div class="cs">${SYM[s]}</div>`;
    table.appendChild(el);
  }
  const trumpChip = (trump) => (trump ? `Trump ${suitHtml(trump)} <span style="font-weight:400">${SUIT_NAME[trump]}</span>` : "Trump \u2014");
  // The score table's heading row; `you` marks the person's team (or -1).
  const scoreHead = (you) => `<tr><th></th>` + [0, 1].map((t) => `<th class="t${t}">Team ${t}${t === you ? " (you)" : ""}</th>`).join("") + "</tr>";
  const tricksRow = (counts, prefix) => `<tr><td>Tricks</td><td id="${prefix}tricks-0">${counts[0]}</td><td id="${prefix}tricks-1">${counts[1]}</td></tr>`;
  // A scored round R's rows of the score table: run bonus, contract made or failed, round score, totals.
  function resultRows(R, prefix) {
    const res = R.result, dt = res.declarer_team;
    const made = (t) => (t === dt ? `<span class="${res.made ? "made" : "failed"}">${res.made ? "made" : "failed"} ${R.contract}</span>` : "defends");
    return `<tr><td>Run bonus</td><td>${res.run_bonus[0]}</td><td>${res.run_bonus[1]}</td></tr>`
         + `<tr><td>Contract</td><td>${made(0)}</td><td>${made(1)}</td></tr>`
         + `<tr><td>Round score</td><td id="${prefix}round-0"><b>${res.scores[0]}</b></td><td id="${prefix}round-1"><b>${res.scores[1]}</b></td></tr>`
         + `<tr><td>Total</td><td id="${prefix}total-0"><b>${res.totals[0]}</b></td><td id="${prefix}total-1"><b>${res.totals[1]}</b></td></tr>`;
  }
  const contractText = (R) => {
    const res = R.result, dt = res.declarer_team;
    return `Team ${dt} bid ${R.contract} and took ${res.tricks[dt]}: <span class="${res.made ? "made" : "failed"}">contract ${res.made ? "made" : "failed"}</span>.`;
  };
  const scoringRuns = (res) => "Scoring runs: " + (res.runs.filter((x) => x.bonus).map((x) => `${team(x.team)} ${x.length} tricks \u2192 ${x.bonus}`).join(", ") || "none");
  const runText = (t, length, bonus) => `Current run: ${team(t)} \u00d7${length}` + (bonus ? ` (worth ${bonus})` : "");
  // One line of the trick log: "NN. seat:card ... -> seat W" (the winner's card bold once the trick is done).
  function trickLine(t, i, plays, done, cls) {
    const bold = (p) => done && p.seat === t.winner;
    return `<div class="${cls || ""}" data-trick="${i}"${done ? ` data-winner="${t.winner}"` : ""}>${String(i + 1).padStart(2, "\u2007")}. `
      + plays.map((p) => (bold(p) ? "<b>" : "") + `${p.seat}:${cardHtml(p.card)}` + (bold(p) ? "</b>" : "")).join(" ")
      + (done ? ` \u2192 <span class="t${t.team}">seat ${t.winner}</span>` : " \u2026") + "</div>";
  }
  return { SYM, SUIT_NAME, DISPLAY_SUITS, RANKS, $, suitOf, rankOf, isRed, colour, esc, cardHtml, suitHtml, team, seatPos, drawSeat,
           drawTrickCard, trumpChip, scoreHead, tricksRow, resultRows, contractText, scoringRuns, runText, trickLine };
})();
