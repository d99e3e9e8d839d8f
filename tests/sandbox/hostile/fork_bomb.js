// attack: spawn spinning children until something stops it (JavaScript, child_process)
// verdict: timeout|runtime_error|memory_limit
// limits: time_s=0.5 wall_s=1 memory_mb=256 processes=16
// check: host_responsive
// Capped at 256 children, each spinning at most 20 s, so that a sandbox which fails to
// limit processes shows up as a failed test and not as a dead host.
const { spawn } = require("child_process");
let failed = 0;
for (let i = 0; i < 256; i++) {
  try {
    const c = spawn("sh", ["-c", "end=$(($(date +%s) + 20)); while [ $(date +%s) -lt $end ]; do :; done"],
                    { stdio: "ignore" });
    c.on("error", () => { failed++; });
  } catch (e) { failed++; }
}
const deadline = Date.now() + 20000;
while (Date.now() < deadline) {}
