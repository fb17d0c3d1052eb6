// runScenarios runs each scenario of a script in turn, printing "ok name"
// or "FAIL name: stack" for each (the Go test reads these lines), and
// exits non-zero when any failed.
export async function runScenarios(scenarios) {
  let failed = 0;
  for (const [name, run] of Object.entries(scenarios)) {
    try {
      await run();
      console.log(`ok ${name}`);
    } catch (err) {
      failed++;
      console.log(`FAIL ${name}: ${err.stack ?? err}`);
    }
  }
  if (failed) process.exit(1);
}
