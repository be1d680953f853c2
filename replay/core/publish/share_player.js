// The player of a page written by `replay share`: steps and plays the session as the app
// does, on the real clock with idle gaps capped (each turn's data-delay, seconds at 1x), and
// pauses by itself at every empty turn. It only reads the page: no request, no storage.
(function () {
  "use strict";
  var SPEEDS = [0.25, 0.5, 1, 2, 4, 8, 16];
  var body = document.body;
  var turns = Array.prototype.slice.call(document.querySelectorAll("article.turn"));
  if (!turns.length) { return; }
  var empties = [];
  var byNumber = {};
  turns.forEach(function (turn, index) {
    byNumber[turn.getAttribute("data-turn")] = index;
    if (turn.hasAttribute("data-empty")) { empties.push(index); }
  });
  var cells = Array.prototype.slice.call(document.querySelectorAll("#timeline a"));
  var player = document.getElementById("player");
  var status = document.getElementById("player-status");
  var playButton = document.getElementById("player-play");
  var params = new URLSearchParams(location.search);
  var speed = parseFloat(params.get("speed") || body.getAttribute("data-speed") || "1");
  if (SPEEDS.indexOf(speed) < 0) { speed = 1; }
  var current = -1;
  var playing = false;
  var pausedAtEmpty = false;
  var timer = null;
  var paused = [];

  function delayOf(index) {
    var seconds = parseFloat(turns[index].getAttribute("data-delay"));
    return (isFinite(seconds) ? seconds : 1) / speed * 1000;
  }

  function emptyOrdinal(index) {
    var position = empties.indexOf(index);
    return position < 0 ? 0 : position + 1;
  }

  function describe() {
    var turn = turns[current];
    // (a missing reply's placeholder, `12+`, is no turn of the file: not counted)
    var text = "turn " + turn.getAttribute("data-turn") + " / " + (body.getAttribute("data-turns") || turns.length);
    var ordinal = emptyOrdinal(current);
    if (ordinal) { text += " · empty turn " + ordinal + " / " + empties.length; }
    if (playing) { text += " · playing"; }
    else if (pausedAtEmpty) { text += " · paused at empty turn"; }
    else { text += " · paused"; }
    text += " · " + speed + "x";
    status.textContent = text;
    playButton.textContent = playing ? "pause" : "play";
    body.setAttribute("data-current", turn.getAttribute("data-turn"));
    body.setAttribute("data-state", playing ? "playing" : (pausedAtEmpty ? "paused-empty" : "paused"));
    body.setAttribute("data-speed", String(speed));
  }

  function cellOf(number) {
    for (var i = 0; i < cells.length; i++) {
      var first = parseInt(cells[i].getAttribute("data-first"), 10);
      var last = parseInt(cells[i].getAttribute("data-last"), 10);
      if (number >= first && number <= last) { return cells[i]; }
    }
    return null;
  }

  function show(index, scroll) {
    index = Math.max(0, Math.min(turns.length - 1, index));
    if (current >= 0) {
      turns[current].classList.remove("current");
      var oldCell = cellOf(current + 1);
      if (oldCell) { oldCell.classList.remove("here"); }
    }
    current = index;
    var turn = turns[current];
    turn.classList.add("current");
    var cell = cellOf(current + 1);
    if (cell) { cell.classList.add("here"); }
    var fold = turn.querySelector("details.fold");
    if (fold) { fold.open = true; }
    if (scroll !== false) { place(turn, 6); }
    if (scroll !== false && history.replaceState) {
      try { history.replaceState(null, "", "#" + turn.getAttribute("data-turn")); } catch (e) { /* file: pages may refuse */ }
    }
    describe();
  }

  function place(turn, tries) {
    // Below the sticky header, whatever its height on this screen. Turns off screen are laid
    // out lazily (content-visibility), so the first estimate can be off: look again once
    // the turns around it have their real height.
    var top = document.getElementById("top");
    var sticky = top && getComputedStyle(top).position === "sticky";
    var offset = sticky ? top.getBoundingClientRect().height + 6 : 6;
    var where = turn.getBoundingClientRect().top;
    if (Math.abs(where - offset) > 2) { window.scrollTo(0, where + window.pageYOffset - offset); }
    if (tries > 1) {
      setTimeout(function () { if (turns[current] === turn) { place(turn, tries - 1); } }, 60);
    }
  }

  function stop() {
    playing = false;
    if (timer !== null) { clearTimeout(timer); timer = null; }
  }

  function schedule() {
    timer = setTimeout(advance, delayOf(current));
  }

  function advance() {
    timer = null;
    if (!playing) { return; }
    if (current >= turns.length - 1) { stop(); describe(); return; }
    var next = current + 1;
    if (turns[next].hasAttribute("data-empty")) {
      stop();
      pausedAtEmpty = true;
      paused.push(turns[next].getAttribute("data-turn"));
      body.setAttribute("data-paused-at", paused.join(","));
      show(next);
      return;
    }
    show(next);
    schedule();
  }

  function toggle() {
    if (playing) { stop(); describe(); return; }
    if (current >= turns.length - 1) { status.textContent = "At the last turn."; return; }
    playing = true;
    pausedAtEmpty = false;
    describe();
    schedule();
  }

  function go(index) {
    stop();
    pausedAtEmpty = false;
    show(index);
  }

  function nextEmpty(forward) {
    var found = -1;
    for (var i = 0; i < empties.length; i++) {
      if (forward && empties[i] > current) { found = empties[i]; break; }
      if (!forward && empties[i] < current) { found = empties[i]; }
    }
    if (found < 0) { status.textContent = forward ? "No empty turn after this one." : "No empty turn before this one."; return; }
    go(found);
  }

  function faster(up) {
    var position = SPEEDS.indexOf(speed);
    speed = SPEEDS[Math.max(0, Math.min(SPEEDS.length - 1, position + (up ? 1 : -1)))];
    if (playing && timer !== null) { clearTimeout(timer); schedule(); }
    describe();
  }

  var actions = {
    " ": toggle,
    "ArrowRight": function () { go(current + 1); }, "l": function () { go(current + 1); },
    "ArrowLeft": function () { go(current - 1); }, "h": function () { go(current - 1); },
    "]": function () { nextEmpty(true); }, "[": function () { nextEmpty(false); },
    "+": function () { faster(true); }, "=": function () { faster(true); },
    "-": function () { faster(false); },
    "Home": function () { go(0); }, "g": function () { go(0); },
    "End": function () { go(turns.length - 1); }, "G": function () { go(turns.length - 1); }
  };

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    var target = event.target;
    if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA")) { return; }
    var action = actions[event.key];
    if (!action) { return; }
    event.preventDefault();
    action();
  });

  player.addEventListener("click", function (event) {
    var button = event.target.closest("button");
    if (!button) { return; }
    var name = button.getAttribute("data-action");
    if (name === "play") { toggle(); }
    else if (name === "first") { go(0); }
    else if (name === "previous") { go(current - 1); }
    else if (name === "next") { go(current + 1); }
    else if (name === "last") { go(turns.length - 1); }
    else if (name === "previous-empty") { nextEmpty(false); }
    else if (name === "next-empty") { nextEmpty(true); }
    else if (name === "slower") { faster(false); }
    else if (name === "faster") { faster(true); }
  });

  function fromHash() {
    var number = decodeURIComponent(location.hash.replace(/^#/, ""));
    if (Object.prototype.hasOwnProperty.call(byNumber, number)) {
      if (byNumber[number] !== current) { go(byNumber[number]); }
      return true;
    }
    return false;
  }

  window.addEventListener("hashchange", fromHash);
  player.hidden = false;
  body.classList.add("scripted");
  if (!fromHash()) { show(0, false); }
  if (params.has("autoplay")) { toggle(); }
})();
