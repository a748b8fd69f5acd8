// Drives `squiggle serve` the way a TypeScript agent host does: with vscode-jsonrpc over the
// child's stdio. Run by tests/tests/it/serve.rs; env: SQUIGGLE_BIN, PROJECT (a copy of the python
// fixture), NODE_MODULES (where vscode-jsonrpc is installed).
"use strict";
const assert = require("node:assert/strict");
const path = require("node:path");
const { spawn } = require("node:child_process");
const rpc = require(path.join(process.env.NODE_MODULES, "vscode-jsonrpc", "node"));

async function main() {
  const project = process.env.PROJECT;
  const child = spawn(process.env.SQUIGGLE_BIN, ["serve"], {
    stdio: ["pipe", "pipe", "inherit"],
    env: { ...process.env, LSP_BOOTSTRAP: JSON.stringify({ workspaceRoot: project, config: { diagnosticTimeout: 20000, firstTouchTimeout: 30000 } }) },
  });
  const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
  const connection = rpc.createMessageConnection(
    new rpc.StreamMessageReader(child.stdout),
    new rpc.StreamMessageWriter(child.stdin),
  );
  const ready = new Promise((resolve) => connection.onNotification("lsp/ready", resolve));
  connection.listen();
  assert.deepEqual(await ready, {}, "lsp/ready comes first, with {}");
  console.log("ok ready");

  const before = await connection.sendRequest("lsp/getDiagnosticEpoch", {});
  assert.equal(typeof before, "number");
  const diagnostics = await connection.sendRequest("lsp/checkFile", { filePath: path.join(project, "orders.py") });
  // Ruff's F821 at the same name is the same problem as Pyright's: one diagnostic names both.
  assert.deepEqual(
    diagnostics.map((d) => [d.file, d.line, d.character, d.severity, d.code, d.source, d.also]),
    [
      ["orders.py", 8, 33, "error", "reportAssignmentType", "Pyright", undefined],
      ["orders.py", 9, 27, "error", "reportUndefinedVariable", "Pyright", [{ code: "F821", source: "Ruff" }]],
    ],
  );
  console.log("ok checkFile");

  const after = await connection.sendRequest("lsp/getDiagnosticEpoch", {});
  assert.ok(after > before, `the epoch advanced (${before} -> ${after})`);
  const all = await connection.sendRequest("lsp/diagnosticsAfter", { afterEpoch: before, waitMs: 1000 });
  assert.deepEqual(Object.keys(all), ["orders.py"]);
  assert.equal(all["orders.py"].length, 2);
  const same = await connection.sendRequest("lsp/diagnostics", {});
  assert.deepEqual(same, all);
  console.log("ok epochs and diagnosticsAfter");

  const status = await connection.sendRequest("lsp/status", {});
  const ids = status.map((s) => s.id);
  assert.deepEqual(ids, [...ids].sort(), "status is sorted by id");
  const pyright = status.find((s) => s.id === "pyright");
  assert.equal(pyright.status, "active");
  assert.equal(typeof pyright.serverPid, "number");
  console.log("ok status");

  // A cancelled wait ends early with what is known, never with an error.
  const source = new rpc.CancellationTokenSource();
  const waiting = connection.sendRequest("lsp/diagnosticsAfter", { afterEpoch: after + 1000, waitMs: 60000 }, source.token);
  setTimeout(() => source.cancel(), 100);
  const started = Date.now();
  const cancelled = await waiting;
  assert.ok(Date.now() - started < 10000, "cancel ended the wait early");
  assert.deepEqual(Object.keys(cancelled), ["orders.py"]);
  console.log("ok cancel");

  await assert.rejects(connection.sendRequest("lsp/noSuchMethod", {}), (err) => err.code === -32601);
  console.log("ok unknown method");

  assert.equal(await connection.sendRequest("lsp/shutdown", {}), null);
  assert.equal(await exited, 0, "the service exits after lsp/shutdown");
  connection.dispose();
  console.log("ok shutdown");
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
