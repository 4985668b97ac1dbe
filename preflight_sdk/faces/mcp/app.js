/* The MCP Apps view of a run: speaks the host bridge (JSON-RPC over postMessage), waits for the
   run tool's result, reads the run's page (a ui:// resource) through the host and shows it. */
(function () {
  "use strict";
  var nextId = 1;
  var pending = {};
  var projectPath = null;
  var shownRun = null;
  var status = document.getElementById("pfa-status");

  function say(text) { if (status) status.textContent = text; }
  function send(message) { window.parent.postMessage(message, "*"); }
  function request(method, params) {
    var id = nextId++;
    send({ jsonrpc: "2.0", id: id, method: method, params: params });
    return new Promise(function (resolve, reject) { pending[id] = { resolve: resolve, reject: reject }; });
  }
  function notify(method, params) { send({ jsonrpc: "2.0", method: method, params: params || {} }); }

  function runIdOf(result) {
    var data = result && (result.structuredContent || result.structured_content);
    if (!data) return null;
    if (data.runId) return data.runId;
    if (data.data && data.data.runId) return data.data.runId;
    return null;
  }

  function show(runId) {
    if (!runId || runId === shownRun) return;
    shownRun = runId;
    say("loading run " + runId + " …");
    var uri = "ui://preflight/runs/" + encodeURIComponent(runId);
    if (projectPath) uri += "?project=" + encodeURIComponent(projectPath);
    request("resources/read", { uri: uri }).then(function (answer) {
      var text = answer && answer.contents && answer.contents[0] && answer.contents[0].text;
      if (!text) { say("the run's page is empty"); return; }
      // Parsed, not written: the page's markup is taken as nodes; its scripts do not run (this
      // view's own copy of the report script initialises it).
      var doc = new DOMParser().parseFromString(text, "text/html");
      var page = doc.querySelector(".pfr");
      if (!page) { say("the run's page has no report"); return; }
      var holder = document.getElementById("pfa-report");
      holder.textContent = "";
      holder.appendChild(document.importNode(page, true));
      say("");
      if (window.preflightReport) window.preflightReport.init(holder.querySelector(".pfr"));
      resized();
    }, function (error) { say("could not read the run's page: " + (error && error.message || error)); });
  }

  function resized() {
    var height = Math.ceil(document.documentElement.scrollHeight);
    notify("ui/notifications/size-changed", { height: height });
  }

  window.addEventListener("message", function (event) {
    var message = event.data;
    if (!message || message.jsonrpc !== "2.0") return;
    if (message.id !== undefined && pending[message.id] && (message.result !== undefined || message.error)) {
      var waiter = pending[message.id];
      delete pending[message.id];
      if (message.error) waiter.reject(message.error); else waiter.resolve(message.result);
      return;
    }
    if (message.method === "ui/notifications/tool-input") {
      var args = message.params && message.params.arguments;
      if (args && typeof args.projectPath === "string") projectPath = args.projectPath;
    } else if (message.method === "ui/notifications/tool-result") {
      var runId = runIdOf(message.params);
      if (runId) show(runId); else say("this reply names no run");
    } else if (message.method === "ui/resource-teardown" && message.id !== undefined) {
      send({ jsonrpc: "2.0", id: message.id, result: {} });
    }
  });

  request("ui/initialize", {
    appInfo: { name: "preflight run", version: "1" },
    appCapabilities: { availableDisplayModes: ["inline", "fullscreen"] },
    protocolVersion: "2026-01-26"
  }).then(function () {
    notify("ui/notifications/initialized");
    say("waiting for the run …");
  }, function () { say("the host did not answer ui/initialize"); });
  if (window.ResizeObserver) new ResizeObserver(resized).observe(document.body);
})();
