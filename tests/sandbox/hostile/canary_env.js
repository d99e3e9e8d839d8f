// attack: read the parent's environment (the test sets CODEGYM_CANARY before creating the sandbox)
// verdict: ok
// limits: time_s=1 wall_s=2 memory_mb=256
// check: canary_hidden
for (const [key, value] of Object.entries(process.env)) {
  if (key.includes("CANARY") || value.includes("cgcanary")) console.log(`ESCAPED: ${key}=${value}`);
}
console.log(`${Object.keys(process.env).length} variables visible`);
