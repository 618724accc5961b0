// Lint each workflow file named after the module path; print one JSON list of findings and exit 1
// when there is any. Run as a file, never with `node -e`: there Node puts `fs` on the global
// object, the Go wasm runtime then makes real file calls from inside a callback, and deadlocks.
const fs = require("fs");
const { runLint } = require(process.argv[2]);
(async () => {
  const found = [];
  for (const file of process.argv.slice(3)) {
    for (const r of await runLint(fs.readFileSync(file, "utf8"), file)) {
      if (r.message) found.push({ file, ...r });
    }
  }
  process.stdout.write(JSON.stringify(found));
  process.exit(found.length ? 1 : 0);
})().catch((e) => {
  console.error(String(e));
  process.exit(2);
});
