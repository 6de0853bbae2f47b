"use strict";
// A token, when the console has one, travels in the cookie the server set when the
// page was first opened with ?token= (never in a URL of ours: logs, Referer).
const $ = id => document.getElementById(id);
const video = $("video"), videoContext = video.getContext("2d");
// Settings change field by field; the form itself is never sent.
$("settings").addEventListener("submit", event => event.preventDefault());
const statuses = new Map();
// The live settings: how each is shown (fields, from the server's one list) and its value now.
let latest = null, fields = [], settings = {}, shownFrame = -1;
// For people and tests alike: what is on the canvas; freeze = true holds it.
window.sentry = { framesShown: 0, lastFrameShown: -1, overlaysDrawn: 0, shown: null, freeze: false };

async function post(path, body) {
  const response = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  let reply = {};
  try { reply = await response.json(); } catch (e) {}
  return { ok: response.ok, reply };
}

// One fieldset per group, in the server's order; each field says its unit and,
// when pointed at, the flag's help and name. Tuning knobs are folded under
// "advanced" in their group; a refused value keeps its message beside its field.
const refusals = {}, openFolds = new Set();
function buildForm() {
  const form = $("settings");
  form.textContent = "";
  let group = null, box = null, fold = null;
  for (const field of fields) {
    if (field.group !== group) {
      group = field.group;
      box = document.createElement("fieldset");
      const legend = document.createElement("legend");
      legend.textContent = group;
      box.append(legend);
      form.append(box);
      fold = null;
    }
    let place = box;
    if (field.advanced) {
      if (!fold) {
        fold = document.createElement("details");
        fold.className = "advanced";
        const summary = document.createElement("summary");
        summary.textContent = "advanced";
        fold.append(summary, document.createElement("div"));
        const name = group;
        fold.open = openFolds.has(name) || field.key in refusals;
        fold.addEventListener("toggle", event => { if (event.target.open) openFolds.add(name); else openFolds.delete(name); });
        box.append(fold);
      }
      place = fold.lastElementChild;
    }
    place.append(...fieldElements(field));
  }
}

// A field's label, input, unit and (when its last value was refused) the refusal.
function fieldElements(field) {
  const key = field.key, value = settings[key] ?? "";
  const label = document.createElement("label");
  label.textContent = field.label;
  label.htmlFor = "setting-" + key;
  label.title = field.help + " (--" + key + ")";
  let input;
  if (field.kind === "choice") {
    input = document.createElement("select");
    for (const option of field.choices) {
      const element = document.createElement("option");
      element.value = option;
      element.textContent = option || "(automatic)";
      input.appendChild(element);
    }
    input.value = value;
  } else if (field.kind === "switch") {
    input = document.createElement("input");
    input.type = "checkbox";
    input.checked = value === true;
  } else {
    input = document.createElement("input");
    input.type = "text";
    input.inputMode = field.kind === "integer" ? "numeric" : "decimal";
    input.placeholder = field.minimum + "–" + field.maximum + (field.kind === "rate" ? " or every" : "");
    input.value = key in refusals ? refusals[key].value : value;
  }
  input.id = "setting-" + key;
  input.name = key;
  input.title = label.title;
  input.addEventListener("change", () => change(key, input));
  const unit = document.createElement("span");
  unit.className = "unit";
  unit.textContent = field.unit;
  const elements = [label, input, unit];
  if (key in refusals) {
    input.setAttribute("aria-invalid", "true");
    const refusal = document.createElement("div");
    refusal.className = "refusal";
    refusal.id = "refusal-" + key;
    refusal.textContent = refusals[key].message;
    elements.push(refusal);
  }
  return elements;
}

async function change(key, input) {
  let value = input.type === "checkbox" ? input.checked : input.value.trim();
  const typed = input.value;
  if (typeof value === "string" && value !== "" && !isNaN(Number(value))) value = Number(value);
  const { ok, reply } = await post("/api/settings", { [key]: value });
  if (ok) {
    settings = reply.settings;
    delete refusals[key];
  } else {
    refusals[key] = { message: reply.error || "refused", value: typed };
  }
  $("error").textContent = "";
  buildForm();
}

$("save").addEventListener("click", async () => {
  const { ok, reply } = await post("/api/settings/save", {});
  $("saved").textContent = ok ? reply.saved : "";
  $("error").textContent = ok ? "" : reply.error || "could not save";
});

for (const button of document.querySelectorAll("button[data-action]")) {
  button.addEventListener("click", () => post("/api/aim", { action: button.dataset.action }));
}

video.addEventListener("click", event => {
  const rect = video.getBoundingClientRect();
  const x = (event.clientX - rect.left) / rect.width * video.width;
  const y = (event.clientY - rect.top) / rect.height * video.height;
  post("/api/aim", { action: "point", x, y });
});

document.addEventListener("keydown", event => {
  if (event.target.tagName === "INPUT" || event.target.tagName === "SELECT") return;
  const step = event.shiftKey ? 10 : 2;
  const nudges = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, step], ArrowDown: [0, -step] };
  if (nudges[event.key]) {
    event.preventDefault();
    post("/api/aim", { action: "nudge", pan: nudges[event.key][0], tilt: nudges[event.key][1] });
  } else if (event.key === "a") post("/api/aim", { action: "auto" });
  else if (event.key === "s") post("/api/aim", { action: "scan" });
  else if (event.key === "c") post("/api/aim", { action: "center" });
});

// --- the feed ---
const events = new EventSource("/api/events");
events.addEventListener("frame", message => {
  const status = JSON.parse(message.data);
  statuses.set(status.frame, status);
  if (statuses.size > 300) statuses.delete(statuses.keys().next().value);
  latest = status;
  showStatus(status);
  chartPoint(status);
  if (shownFrame < 0 && !window.sentry.freeze) drawFrame(null, status);
});
events.addEventListener("log", message => {
  const event = JSON.parse(message.data);
  const item = document.createElement("li");
  const time = document.createElement("span");
  time.textContent = event.time.toFixed(1) + "s";
  item.append(time, event.text);
  item.dataset.kind = event.kind;
  const log = $("log");
  const atBottom = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
  log.appendChild(item);
  while (log.children.length > 300) log.removeChild(log.firstChild);
  if (atBottom) log.scrollTop = log.scrollHeight;
});

// --- the history: events --events kept, newest first, new ones as they are written ---
let oldestShown = null;
function historyItem(record) {
  const item = document.createElement("li");
  item.dataset.id = record.id;
  const thumb = new Image();
  thumb.src = "/history/" + record.id + "-face.jpg";
  thumb.alt = record.kind;
  thumb.loading = "lazy";
  const kind = document.createElement("b");
  kind.textContent = record.kind + (record.expression ? " · " + record.expression + " " + record.score.toFixed(2) : "");
  const when = document.createElement("span");
  when.className = "hint";
  when.textContent = new Date(record.unixTime * 1000).toLocaleString() + " · frame " + record.frame;
  const text = document.createElement("div");
  text.append(kind, document.createElement("br"), when);
  item.append(thumb, text);
  item.title = "click for the whole frame";
  item.addEventListener("click", () => {
    const dialog = $("eventFrame");
    dialog.querySelector("img").src = "/history/" + record.id + ".jpg";
    dialog.querySelector("figcaption").textContent = kind.textContent + " — " + when.textContent;
    dialog.showModal();
  });
  return item;
}
function shown(id) { return [...$("history").children].some(item => item.dataset.id === id); }
async function loadHistory() {
  const response = await fetch("/api/history?limit=20" + (oldestShown ? "&before=" + encodeURIComponent(oldestShown) : ""), { cache: "no-store" });
  const reply = await response.json().catch(() => ({}));
  if (!response.ok) { $("historyNote").textContent = reply.error || "the history cannot be read"; return; }
  for (const record of reply.events) {
    if (!shown(record.id)) $("history").append(historyItem(record));
    oldestShown = record.id;
  }
  $("historyMore").hidden = !reply.more;
  if (!$("history").children.length) $("historyNote").textContent = "Nothing kept yet: locks, shots, arrivals and expression rules appear here.";
}
$("historyMore").addEventListener("click", loadHistory);
$("eventFrame").addEventListener("click", () => $("eventFrame").close());
events.addEventListener("event", message => {
  const record = JSON.parse(message.data);
  if (shown(record.id)) return;
  $("historyNote").textContent = "";
  $("history").prepend(historyItem(record));
  window.sentry.historyLive = (window.sentry.historyLive || 0) + 1;
});

function showStatus(s) {
  $("mode").textContent = s.mode;
  $("armedBanner").hidden = !s.armed;
  $("heldFire").textContent = s.heldFire ? "Holding fire: " + s.heldFire + "." : "";
  $("angles").textContent = s.commanded.pan + "° / " + (settings.tilt === true ? s.commanded.tilt + "°" : "–") + (s.commands.length ? "  (sent " + s.commands.join(" ") + ")" : "");
  $("steering").textContent = s.steering;
  $("faces").textContent = s.faces.length + (s.target !== undefined && s.target !== null ? ", target #" + s.target : "");
  $("fps").textContent = s.fps.toFixed(1);
  $("detect").textContent = s.detectMs.toFixed(1) + " ms (loop " + s.loopMs.toFixed(1) + " ms)";
  $("detector").textContent = s.detector;
  $("serialState").textContent = s.serial;
  $("serial").textContent = "serial " + s.serial;
  $("frame").textContent = s.frame + " at " + s.time.toFixed(2) + " s";
  showFace(s.face);
  for (const id of ["auto", "scan", "center"]) $(id).classList.toggle("on", (id === "auto") === (s.steering === "auto") && (id !== "scan" || s.steering === "manual-scan"));
}

// --- the video: multipart JPEG parts, each tagged with its frame index ---
const crlf2 = [13, 10, 13, 10];
function find(bytes, pattern, from) {
  outer: for (let i = from; i <= bytes.length - pattern.length; i++) {
    for (let j = 0; j < pattern.length; j++) if (bytes[i + j] !== pattern[j]) continue outer;
    return i;
  }
  return -1;
}
async function stream() {
  for (;;) {
    try {
      const response = await fetch("/stream.mjpg", { cache: "no-store" });
      const reader = response.body.getReader();
      let buffer = new Uint8Array(0);
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const joined = new Uint8Array(buffer.length + value.length);
        joined.set(buffer); joined.set(value, buffer.length);
        buffer = joined;
        for (;;) {
          const end = find(buffer, crlf2, 0);
          if (end < 0) break;
          const header = new TextDecoder().decode(buffer.subarray(0, end));
          const length = Number((/Content-Length: *(\d+)/i.exec(header) || [])[1]);
          const index = Number((/X-Frame-Index: *(\d+)/i.exec(header) || [])[1]);
          const start = end + 4;
          if (buffer.length < start + length + 2) break;
          const jpeg = buffer.slice(start, start + length);
          buffer = buffer.slice(start + length + 2);
          if (window.sentry.freeze) continue;
          const bitmap = await createImageBitmap(new Blob([jpeg], { type: "image/jpeg" }));
          // Frozen while it decoded: what is shown stays as it was when freeze was set.
          if (!window.sentry.freeze) drawFrame(bitmap, statusFor(index), index);
        }
      }
    } catch (error) { /* the server went away: try again */ }
    await new Promise(resolve => setTimeout(resolve, 1000));
  }
}

function statusFor(index) {
  if (statuses.has(index)) return statuses.get(index);
  let best = null;
  for (const [frame, status] of statuses) if (frame <= index && (!best || frame > best.frame)) best = status;
  return best || latest;
}

// Where the turret fires: below the face (--fire-below); red when armed, grey when not.
function drawFirePoint(g, [x, y], armed) {
  window.sentry.shown.firePoint = [x, y];
  g.strokeStyle = armed ? "#ff2020" : "#9aa3ad"; g.fillStyle = g.strokeStyle; g.lineWidth = 2;
  g.beginPath(); g.moveTo(x - 9, y - 9); g.lineTo(x + 9, y + 9); g.moveTo(x + 9, y - 9); g.lineTo(x - 9, y + 9); g.stroke();
  g.font = "12px sans-serif";
  g.fillText(armed ? "fire point" : "fire point (unarmed)", x + 12, y + 4);
}

// Armed at a walker: where the turret waits for the shot, ahead of the fire point along the walk.
function drawLeadPoint(g, [x, y]) {
  window.sentry.shown.leadPoint = [x, y];
  g.strokeStyle = "#ffa020"; g.fillStyle = g.strokeStyle; g.lineWidth = 2;
  g.beginPath(); g.moveTo(x, y - 10); g.lineTo(x + 10, y); g.lineTo(x, y + 10); g.lineTo(x - 10, y); g.closePath(); g.stroke();
  g.font = "12px sans-serif";
  g.fillText("lead", x + 12, y + 4);
}

// On the range: where the last darts landed, green on a torso, red beside it.
function drawDarts(g, darts) {
  window.sentry.shown.darts = darts;
  g.lineWidth = 3;
  for (const dart of darts) {
    g.strokeStyle = dart.hit ? "#30e060" : "#ff3030";
    g.beginPath(); g.arc(dart.x, dart.y, 6, 0, 2 * Math.PI); g.stroke();
  }
}

function aimPoint(s) {
  // Where the turret points in the picture, as sentry works it out (SPEC §2 undone, or the middle on a turret).
  return s.aimPoint || [s.width / 2, s.height / 2];
}

function drawFrame(bitmap, s, index) {
  const width = bitmap ? bitmap.width : (s ? s.width : 640), height = bitmap ? bitmap.height : (s ? s.height : 480);
  if (video.width !== width || video.height !== height) { video.width = width; video.height = height; }
  const g = videoContext;
  if (bitmap) { g.drawImage(bitmap, 0, 0); bitmap.close(); shownFrame = index; window.sentry.framesShown++; window.sentry.lastFrameShown = index; }
  else { g.fillStyle = "#000"; g.fillRect(0, 0, width, height); }
  if (!s) return;
  const rect = video.getBoundingClientRect();
  window.sentry.shown = { frame: index, status: s.frame, faces: s.faces, target: s.target, mode: s.mode, width, height, eyes: [],
                          canvas: { left: rect.left, top: rect.top, width: rect.width, height: rect.height } };
  g.lineWidth = 2;
  s.faces.forEach((face, i) => {
    const isTarget = i === s.target;
    g.strokeStyle = isTarget ? (s.locked ? "#ff2020" : "#ff4d4d") : "#ffe14d";
    g.lineWidth = isTarget ? 4 : 2;
    g.strokeRect(face.x, face.y, face.w, face.h);
    if (face.score !== undefined && face.score !== null) {
      g.fillStyle = g.strokeStyle; g.font = "12px sans-serif";
      g.fillText(face.score.toFixed(2), face.x, Math.max(12, face.y - 4));
    }
  });
  if (s.face) drawFace(g, s.face);
  if (s.firePoint) drawFirePoint(g, s.firePoint, s.armed);
  if (s.leadPoint) drawLeadPoint(g, s.leadPoint);
  if (s.darts) drawDarts(g, s.darts);
  const [x, y] = aimPoint(s);
  window.sentry.shown.aim = [x, y];
  g.strokeStyle = "#4dff88"; g.lineWidth = 2;
  g.beginPath(); g.moveTo(x - 14, y); g.lineTo(x + 14, y); g.moveTo(x, y - 14); g.lineTo(x, y + 14); g.stroke();
  g.beginPath(); g.arc(x, y, 8, 0, 2 * Math.PI); g.stroke();
  g.font = "bold 18px sans-serif"; g.lineWidth = 4; g.strokeStyle = "rgba(0,0,0,.7)"; g.fillStyle = "#fff";
  g.strokeText(s.mode, 12, 26); g.fillText(s.mode, 12, 26);
  g.font = "12px sans-serif";
  const corner = s.fps.toFixed(1) + " fps · frame " + s.frame;
  g.strokeText(corner, 12, height - 10); g.fillText(corner, 12, height - 10);
  window.sentry.overlaysDrawn++;
}

// --- the face (--expressions): points, eyes, pose and scores; cartoon eyes ---
// Each eye's outline in MediaPipe's numbering (the iris model's first 16 contour
// points), its corners, its iris centre, its score and its gaze, subject's right eye first.
const eyes = [
  { outline: [33, 7, 163, 144, 145, 153, 154, 155, 133, 246, 161, 160, 159, 158, 157, 173], corners: [33, 133], iris: 468, side: "Right", wink: "wink-right" },
  { outline: [263, 249, 390, 373, 374, 380, 381, 382, 362, 466, 388, 387, 386, 385, 384, 398], corners: [362, 263], iris: 473, side: "Left", wink: "wink-left" },
];
const scoreNames = ["eyeBlinkLeft", "eyeBlinkRight", "jawOpen", "mouthSmileLeft", "mouthSmileRight", "browInnerUp"];
for (const box of ["view-mesh", "view-eyes"]) {
  const view = new URLSearchParams(location.search).get("view");
  if (view) $(box).checked = view.split(",").includes(box.slice(5));
}

function at(face, i) { return [face.points[2 * i], face.points[2 * i + 1]]; }
function distance(a, b) { return Math.hypot(a[0] - b[0], a[1] - b[1]); }

function drawFace(g, face) {
  const size = distance(at(face, 234), at(face, 454));
  if ($("view-mesh").checked) {
    g.fillStyle = "rgba(120, 220, 255, .7)";
    for (let i = 0; i < 468; i++) { const [x, y] = at(face, i); g.fillRect(x - 0.75, y - 0.75, 1.5, 1.5); }
    g.lineWidth = 1.5;
    for (const eye of eyes) {
      g.strokeStyle = "#ffe14d"; g.beginPath();
      eye.outline.forEach((i, n) => { const [x, y] = at(face, i); n ? g.lineTo(x, y) : g.moveTo(x, y); });
      g.closePath(); g.stroke();
      const centre = at(face, eye.iris);
      const radius = [1, 2, 3, 4].reduce((sum, k) => sum + distance(centre, at(face, eye.iris + k)), 0) / 4;
      g.strokeStyle = "#4dff88"; g.beginPath(); g.arc(centre[0], centre[1], radius, 0, 2 * Math.PI); g.stroke();
    }
    drawPoseAxes(g, face, size * 0.6);
  }
  if ($("view-eyes").checked) drawCartoonEyes(g, face);
}

// The face's own axes from the nose tip: red across (toward the image's right
// when level), green up, blue out of the face, from yaw, pitch and roll (SPEC §8).
function drawPoseAxes(g, face, length) {
  const rad = Math.PI / 180, p = -face.pose.pitch * rad, b = -face.pose.yaw * rad, c = face.pose.roll * rad;
  const turn = ([x, y, z]) => {
    [y, z] = [y * Math.cos(p) - z * Math.sin(p), y * Math.sin(p) + z * Math.cos(p)];
    [x, z] = [x * Math.cos(b) + z * Math.sin(b), -x * Math.sin(b) + z * Math.cos(b)];
    return [x * Math.cos(c) - y * Math.sin(c), x * Math.sin(c) + y * Math.cos(c)];
  };
  const [ox, oy] = at(face, 1);
  g.lineWidth = 3;
  for (const [axis, colour] of [[[1, 0, 0], "#ff4040"], [[0, -1, 0], "#40ff60"], [[0, 0, -1], "#4080ff"]]) {
    const [dx, dy] = turn(axis);
    g.strokeStyle = colour; g.beginPath(); g.moveTo(ox, oy); g.lineTo(ox + dx * length, oy + dy * length); g.stroke();
  }
}

// Big eyes over the subject's eyes: the pupils follow the gaze, the lids close
// with a blink or a wink. What was drawn goes to window.sentry.shown.eyes.
function drawCartoonEyes(g, face) {
  const roll = face.pose.roll * Math.PI / 180;
  for (const eye of eyes) {
    const a = at(face, eye.corners[0]), b = at(face, eye.corners[1]);
    const x = (a[0] + b[0]) / 2, y = (a[1] + b[1]) / 2, r = 0.8 * distance(a, b);
    const closed = face.states.includes("blink") || face.states.includes(eye.wink);
    g.lineWidth = Math.max(2, r / 10); g.strokeStyle = "#000";
    g.beginPath(); g.arc(x, y, r, 0, 2 * Math.PI);
    if (closed) {
      g.fillStyle = "#f1c27d"; g.fill(); g.stroke();
      g.beginPath(); g.moveTo(x - r * Math.cos(roll), y - r * Math.sin(roll)); g.lineTo(x + r * Math.cos(roll), y + r * Math.sin(roll)); g.stroke();
    } else {
      g.fillStyle = "#fff"; g.fill(); g.stroke();
      // Gaze: x toward the image's right, y up, in the face's own axes; a real iris moves a third of its range.
      const [gx, gy] = face.gaze[eye.side.toLowerCase()], reach = 0.55 * r;
      const ux = Math.max(-1, Math.min(1, 2 * gx)) * reach, uy = -Math.max(-1, Math.min(1, 2 * gy)) * reach;
      const px = x + ux * Math.cos(roll) - uy * Math.sin(roll), py = y + ux * Math.sin(roll) + uy * Math.cos(roll);
      g.fillStyle = "#000"; g.beginPath(); g.arc(px, py, 0.4 * r, 0, 2 * Math.PI); g.fill();
      g.fillStyle = "#fff"; g.beginPath(); g.arc(px - 0.12 * r, py - 0.12 * r, 0.1 * r, 0, 2 * Math.PI); g.fill();
    }
    if (window.sentry.shown) window.sentry.shown.eyes.push({ x, y, r, closed });
  }
}

function showFace(face) {
  $("faceNote").style.display = face ? "none" : "";
  const scores = $("scores");
  scores.textContent = "";
  for (const name of scoreNames) {
    const value = face ? face.expressions[name] : 0;
    const label = document.createElement("span"), bar = document.createElement("div"), fill = document.createElement("div"), number = document.createElement("span");
    label.textContent = name; bar.className = "bar"; fill.style.width = (100 * value).toFixed(0) + "%"; number.textContent = face ? value.toFixed(2) : "–";
    bar.appendChild(fill); scores.append(label, bar, number);
  }
  $("states").textContent = face ? (face.states.join(", ") || "neutral") : "–";
  $("pose").textContent = face ? ["yaw", "pitch", "roll"].map(k => k + " " + face.pose[k].toFixed(0) + "°").join("  ") : "–";
  $("gaze").textContent = face ? ["left", "right"].map(k => k + " " + face.gaze[k].map(v => v.toFixed(2)).join(", ")).join("  ") : "–";
}

// --- the chart: 30 s of commanded angles and the face's centre ---
const chart = $("chart"), chartContext = chart.getContext("2d"), history = [];
function chartPoint(s) {
  const face = s.target !== null && s.target !== undefined ? s.faces[s.target] : null;
  history.push({ t: s.time, pan: s.commanded.pan, tilt: s.commanded.tilt,
                 fx: face ? (face.x + face.w / 2) / s.width : null, fy: face ? (face.y + face.h / 2) / s.height : null });
  while (history.length && (s.time - history[0].t > 30 || history[0].t > s.time)) history.shift();
}
function drawChart() {
  const g = chartContext, w = chart.width = chart.clientWidth, h = chart.height;
  g.clearRect(0, 0, w, h);
  if (!history.length) return requestAnimationFrame(drawChart);
  const end = history[history.length - 1].t, left = 34, right = 34;
  const X = t => left + (t - (end - 30)) / 30 * (w - left - right);
  const Y = fraction => 6 + (1 - fraction) * (h - 20);
  g.strokeStyle = "#2c333d"; g.fillStyle = "#8b95a3"; g.font = "10px sans-serif"; g.lineWidth = 1;
  for (const angle of [0, 45, 90, 135, 180]) {
    g.beginPath(); g.moveTo(left, Y(angle / 180)); g.lineTo(w - right, Y(angle / 180)); g.stroke();
    g.fillText(angle + "°", 2, Y(angle / 180) + 3);
    g.fillText(Math.round(angle / 1.8) + "%", w - right + 4, Y(angle / 180) + 3);
  }
  const line = (key, colour, scale) => {
    g.strokeStyle = colour; g.lineWidth = 2; g.beginPath();
    let drawing = false;
    for (const p of history) {
      if (p[key] === null) { drawing = false; continue; }
      const px = X(p.t), py = Y(p[key] / scale);
      drawing ? g.lineTo(px, py) : g.moveTo(px, py);
      drawing = true;
    }
    g.stroke();
  };
  const dots = (key, colour) => {
    g.fillStyle = colour;
    for (const p of history) if (p[key] !== null) g.fillRect(X(p.t) - 1.5, Y(p[key]) - 1.5, 3, 3);
  };
  line("pan", "#4da3ff", 180);
  if (settings.tilt === true) line("tilt", "#ffb347", 180);
  dots("fx", "#49d17d");
  dots("fy", "#c58cff");
  requestAnimationFrame(drawChart);
}

async function loadSettings() {
  for (;;) {
    const response = await fetch("/api/settings", { cache: "no-store" });
    if (response.ok) { ({ fields, settings } = await response.json()); buildForm(); return; }
    await new Promise(resolve => setTimeout(resolve, 500));
  }
}

loadSettings();
loadHistory();
stream();
requestAnimationFrame(drawChart);
