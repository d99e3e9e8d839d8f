// attack: a detached child in its own session that outlives the run and writes a heartbeat to the host
// verdict: ok|timeout|runtime_error
// limits: time_s=1 wall_s=2 memory_mb=256
// check: no_heartbeat
// The parent exits at once; the child (a shell loop named after the token) waits 0.5 s,
// then writes a heartbeat every 0.1 s for 10 s to the host's /tmp and the repository.
const { spawn } = require("child_process");
const token = process.argv[2] || "x";
const repo = process.argv[3] || "/nonexistent";
const script = `sleep 0.5; i=0; while [ $i -lt 100 ]; do date >> /tmp/codegym-hostile-${token}-heartbeat; ` +
  `date >> ${repo}/codegym-hostile-${token}-heartbeat; sleep 0.1; i=$((i+1)); done`;
const child = spawn("sh", ["-c", script, token], { detached: true, stdio: "ignore" });
child.on("error", (e) => console.log(`spawn failed: ${e.code}`));
child.unref();
console.log("parent exits");
