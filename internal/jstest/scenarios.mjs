// runScenarios runs each scenario of a script in turn, printing "ok name"
// or "FAIL name: stack" for each (the Go test reads these lines), and
// exits non-zero when any failed. SCENARIOS, a comma-separated list of
// names, runs those only; without it, every scenario runs but those
// whose names start with "only:" (run when SCENARIOS names them).
export async function runScenarios(scenarios) {
  let failed = 0;
  const only = process.env.SCENARIOS ? process.env.SCENARIOS.split(',') : null;
  for (const [name, run] of Object.entries(scenarios)) {
    if (only ? !only.includes(name) : name.startsWith('only:')) continue;
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
