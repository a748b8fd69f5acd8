#!/usr/bin/env node
// The `squiggle` command of the npm package @squiggle-dev/squiggle: it runs the native binary
// from the platform package npm installed beside it (one optional dependency per platform,
// each limited to its os, cpu and libc, the way biome ships), or the binary that
// SQUIGGLE_BINARY names. Arguments, standard streams and the exit status pass through.
"use strict";

const { spawnSync } = require("node:child_process");
const path = require("node:path");

const OVERRIDE = "SQUIGGLE_BINARY";

/** True on a Linux whose C library is musl. */
function isMusl() {
  if (process.platform !== "linux") return false;
  // Fast: ldd is a script naming its C library (glibc's says "GNU C Library", musl's "musl").
  try {
    const ldd = require("node:fs").readFileSync("/usr/bin/ldd", "latin1");
    if (ldd.includes("musl")) return true;
    if (ldd.includes("GNU C Library") || ldd.includes("glibc")) return false;
  } catch {
    // No ldd: ask Node, which reports glibc's version and only glibc's.
  }
  process.report.excludeNetwork = true;
  const header = process.report.getReport().header;
  return !(header && header.glibcVersionRuntime);
}

/** The platform package for this machine, e.g. @squiggle-dev/cli-linux-x64-musl. */
function platformPackage() {
  const libc = isMusl() ? "-musl" : "";
  return `@squiggle-dev/cli-${process.platform}-${process.arch}${libc}`;
}

/** The binary to run, or exits with a message saying what to do. */
function binary() {
  const override = process.env[OVERRIDE];
  if (override) return override;
  const name = platformPackage();
  const known = require("../package.json").optionalDependencies || {};
  if (!(name in known)) {
    fail(
      `squiggle has no prebuilt binary for ${process.platform}-${process.arch}` +
        `${isMusl() ? " (musl)" : ""}. Build it with cargo ` +
        "(cargo install --git https://github.com/squiggle-dev/squiggle squiggle) " +
        `and set ${OVERRIDE} to its path, or put it on PATH.`,
    );
  }
  try {
    const file = process.platform === "win32" ? "squiggle.exe" : "squiggle";
    return path.join(path.dirname(require.resolve(`${name}/package.json`)), file);
  } catch {
    const version = known[name];
    fail(
      `the package ${name} (squiggle's binary for this platform) is not installed beside ` +
        `@squiggle-dev/squiggle. Install it where that is installed: npm install ${name}@${version} ` +
        `(add -g for a global install; from a checkout's cargo xtask dist, the file ` +
        `target/dist/npm/squiggle-dev-cli-*.tgz of this platform instead of the name); ` +
        `or set ${OVERRIDE} to a squiggle binary.`,
    );
  }
}

function fail(message) {
  process.stderr.write(`squiggle: ${message}\n`);
  process.exit(2);
}

const result = spawnSync(binary(), process.argv.slice(2), { stdio: "inherit" });
if (result.error) {
  fail(`cannot run ${result.error.path || "the squiggle binary"}: ${result.error.message}`);
}
if (result.signal) {
  // Die the way the binary died, so that the caller sees the same signal.
  process.kill(process.pid, result.signal);
}
process.exit(result.status === null ? 1 : result.status);
